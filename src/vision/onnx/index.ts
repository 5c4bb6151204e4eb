export { loadModelDetector, DEFAULT_NMS_IOU, type ModelDetector, type ModelDetectorOptions } from './detector.js';
export {
  listModelManifests,
  readManifest,
  readVerifiedModel,
  sha256File,
  modelPath,
  ModelError,
  type ModelManifest,
  type ClassTarget,
  type ListedManifest,
} from './manifest.js';
export { letterbox, PAD_VALUE, type Letterbox } from './letterbox.js';
export { decodeHead, headLayout, nmsByClass, type RawDetection, type HeadLayout } from './decode.js';
export {
  createSession,
  providerCandidates,
  providerInstalled,
  PREFERRED_PROVIDERS,
  type ExecutionProvider,
  type CreatedSession,
} from './session.js';
