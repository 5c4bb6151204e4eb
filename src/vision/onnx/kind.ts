import type { DetectorKind } from '../detectors.js';

/** A YOLO-layout ONNX model run by onnxruntime-node (docs/builtin-detector.md, "Models"). */
export const onnxDetectorKind: DetectorKind = {
  name: 'onnx',
  formats: ['onnx'],
  open: async ({ manifest }) => {
    if (!manifest) throw new Error('an ONNX detector needs a model manifest');
    // Loaded only when a model runs: onnxruntime is heavy and most boxes use the built-in detector.
    const { loadModelDetector } = await import('./detector.js');
    return loadModelDetector(manifest);
  },
};
