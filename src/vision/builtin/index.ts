export {
  createBuiltinDetector,
  detectFruit,
  detectAll,
  detectStems,
  fruitCandidates,
  circleEvidence,
  type Candidate,
  BUILTIN_DETECTOR_NAME,
  STEMS_UNSUPPORTED_REASON,
  PLANTS_UNSUPPORTED_REASON,
  type BuiltinDetectorOptions,
} from './detector.js';
export { DEFAULT_PARAMS, type BuiltinParams } from './params.js';
export { ripenessFromHue, DEFAULT_RIPENESS_THRESHOLDS, type RipenessThresholds } from './ripeness.js';
export { findStems, DEFAULT_STEM_PARAMS, type StemParams, type StemFound } from './stems.js';
