import { createBuiltinDetector } from '../../vision/builtin/index.js';
import type { Detector } from '../../vision/types.js';
import type { DetectorChoice } from './messages.js';

/**
 * Opens the detector a walk was queued for, inside the worker. Under mode
 * "auto" a model that does not load falls back to the built-in detector and
 * the result says why; under mode "model" it fails the walk instead.
 */
export async function openDetector(
  choice: DetectorChoice,
  builtin: { threads?: number } = {},
): Promise<{ detector: Detector; fallbackReason: string | null }> {
  if (choice.kind === 'builtin') return { detector: createBuiltinDetector(builtin), fallbackReason: choice.reason };
  try {
    // Loaded only when a model runs: onnxruntime is heavy and most boxes use the built-in detector.
    const { loadModelDetector } = await import('../../vision/onnx/index.js');
    return { detector: await loadModelDetector(choice.manifest), fallbackReason: null };
  } catch (err) {
    const reason = `the model ${choice.manifest.split('/').pop()} could not be loaded: ${err instanceof Error ? err.message : String(err)}`;
    if (choice.strict) throw new Error(reason, { cause: err });
    return { detector: createBuiltinDetector(builtin), fallbackReason: reason };
  }
}
