import { openDetector as openKind } from '../../vision/detectors.js';
import type { Detector } from '../../vision/types.js';
import type { DetectorChoice } from './messages.js';

/**
 * Opens the detector a walk was queued for, inside the worker. Under mode "auto" a model that
 * does not load falls back to the built-in detector and the result says why; under mode "model"
 * it fails the walk instead.
 */
export async function openDetector(
  choice: DetectorChoice,
  options: { threads?: number } = {},
): Promise<{ detector: Detector; fallbackReason: string | null }> {
  if (choice.manifest === null) return { detector: await openKind(null, options), fallbackReason: choice.reason };
  try {
    return { detector: await openKind(choice.manifest, options), fallbackReason: null };
  } catch (err) {
    const reason = `the model ${choice.manifest.split('/').pop()} could not be loaded: ${err instanceof Error ? err.message : String(err)}`;
    if (choice.strict) throw new Error(reason, { cause: err });
    return { detector: await openKind(null, options), fallbackReason: reason };
  }
}
