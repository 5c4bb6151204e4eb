import { readFile } from 'node:fs/promises';
import type { Detector } from './types.js';
import { builtinDetectorKind } from './builtin/kind.js';
import { onnxDetectorKind } from './onnx/kind.js';

/**
 * The kinds of detector the box can run. A kind is one file that says how to open it; adding a
 * detector is that file and one line in DETECTOR_KINDS. Nothing else in the box names a kind:
 * the walks feature asks for "the built-in detector" or "the model of this manifest", and the
 * manifest's `format` picks the kind that runs it.
 */
export interface DetectorKind {
  /** The kind's name, as `result.detector.kind` and the logs show it. */
  name: string;
  /** For a kind that runs a model file: the manifest formats it runs (`format`, default "onnx"). Null: needs no model. */
  formats: string[] | null;
  /** Opens a detector; `manifest` is the model manifest's path for a model kind. */
  open(options: { manifest: string | null; threads?: number }): Promise<Detector>;
}

export const DETECTOR_KINDS: readonly DetectorKind[] = [builtinDetectorKind, onnxDetectorKind];

/** The kind that runs without a model, and the one every model falls back to under mode auto. */
export const FALLBACK_DETECTOR = builtinDetectorKind;

/** A manifest's format: the `format` field where a manifest has one, else ONNX (every manifest before the field). */
export async function manifestFormat(manifest: string): Promise<string> {
  try {
    const parsed = JSON.parse(await readFile(manifest, 'utf8')) as { format?: unknown };
    return typeof parsed.format === 'string' ? parsed.format : 'onnx';
  } catch {
    // An unreadable manifest is reported by the kind that opens it, with its own words.
    return 'onnx';
  }
}

/** The kind that runs a manifest; an error naming the format when no kind does. */
export async function kindForManifest(manifest: string): Promise<DetectorKind> {
  const format = await manifestFormat(manifest);
  const kind = DETECTOR_KINDS.find((k) => k.formats?.includes(format));
  if (!kind) throw new Error(`no detector on this box runs models of format "${format}"`);
  return kind;
}

/** Opens the detector for a model manifest, or the fallback detector when there is none. */
export async function openDetector(manifest: string | null, options: { threads?: number } = {}): Promise<Detector> {
  const kind = manifest === null ? FALLBACK_DETECTOR : await kindForManifest(manifest);
  return kind.open({ manifest, threads: options.threads });
}
