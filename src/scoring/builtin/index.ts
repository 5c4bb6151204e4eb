export {
  createBuiltinDetector,
  detectFruit,
  fruitCandidates,
  type Candidate,
  BUILTIN_DETECTOR_NAME,
  STEMS_UNSUPPORTED_REASON,
  PLANTS_UNSUPPORTED_REASON,
  type BuiltinDetectorOptions,
} from './detector.js';
export { DEFAULT_PARAMS, type BuiltinParams } from './params.js';
export { ripenessFromHue, DEFAULT_RIPENESS_THRESHOLDS, type RipenessThresholds } from './ripeness.js';
