import type { DetectorKind } from '../detectors.js';
import { createBuiltinDetector } from './detector.js';

/** The colour-and-shape detector: no model file, the box's CPU (docs/builtin-detector.md). */
export const builtinDetectorKind: DetectorKind = {
  name: 'builtin',
  formats: null,
  open: async ({ threads }) => createBuiltinDetector({ threads }),
};
