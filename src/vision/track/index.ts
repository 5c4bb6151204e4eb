export {
  Tracker,
  DEFAULT_TRACKER_OPTIONS,
  counter,
  type TrackerOptions,
  type Track,
  type TrackState,
  type TrackDetection,
  type TrackObservation,
  type FrameGeometry,
  type TrackerStep,
} from './tracker.js';
export {
  summariseFruit,
  summariseObject,
  voteRipeness,
  diameterMm,
  type CountedFruit,
  type CountedObject,
  type RipenessVotes,
} from './summary.js';
export { mergeDuplicateTracks, cameraMotionOf, containment, DEFAULT_MERGE_OPTIONS, type MergeOptions, type MergeResult } from './merge.js';
export { estimateShift, type ShiftEstimate } from './motion.js';
export { matchByIou, type Assignment } from './assign.js';
export { BoxKalman, DEFAULT_KALMAN_NOISE, type KalmanNoise } from './kalman.js';
export { iou } from './box.js';
