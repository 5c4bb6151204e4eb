import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { openDetector as openKind } from '../../vision/detectors.js';
import type { Detector } from '../../vision/types.js';
import type { DetectorChoice } from './messages.js';

/** The model a walk was scored with, as its result records it: which file, which bytes, read at which thresholds. */
export interface ScoringModel {
  /** The manifest's file name in MODELS_DIR. */
  manifest: string;
  name: string;
  /** SHA-256 of the model file that ran (its kind checked it against the manifest as it loaded). */
  sha256: string;
  created: string | null;
  /** The thresholds the manifest gives, if any. */
  conf: { photo: number; video: number } | null;
}

export interface OpenedDetector {
  detector: Detector;
  fallbackReason: string | null;
  /** The model that runs; null for the built-in detector. */
  model: ScoringModel | null;
}

/**
 * Opens the detector a walk was queued for, inside the worker. Under mode "auto" a model that
 * does not load falls back to the built-in detector and the result says why; under mode "model"
 * it fails the walk instead.
 */
export async function openDetector(choice: DetectorChoice, options: { threads?: number } = {}): Promise<OpenedDetector> {
  if (choice.manifest === null) return { detector: await openKind(null, options), fallbackReason: choice.reason, model: null };
  try {
    const detector = await openKind(choice.manifest, options);
    return { detector, fallbackReason: null, model: await modelOf(choice.manifest) };
  } catch (err) {
    const reason = `the model ${choice.manifest.split('/').pop()} could not be loaded: ${err instanceof Error ? err.message : String(err)}`;
    if (choice.strict) throw new Error(reason, { cause: err });
    return { detector: await openKind(null, options), fallbackReason: reason, model: null };
  }
}

/** What the walk records of a model that loaded: its manifest's words (the kind has checked them). */
async function modelOf(manifestPath: string): Promise<ScoringModel> {
  const m = JSON.parse(await readFile(manifestPath, 'utf8')) as {
    name: string;
    sha256: string;
    created?: string;
    conf?: { photo: number; video: number };
  };
  return {
    manifest: path.basename(manifestPath),
    name: m.name,
    sha256: m.sha256.toLowerCase(),
    created: m.created ?? null,
    conf: m.conf ?? null,
  };
}
