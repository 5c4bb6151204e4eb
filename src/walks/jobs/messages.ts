import type { ScoringOptions } from './options.js';
import type { StoredResult } from './result.js';
import type { ReadAheadStats } from '../../vision/types.js';

/** What the runner hands a worker: everything it needs, as plain data (structured clone). */
export interface WorkerJob {
  walkId: string;
  clips: { position: number; path: string; kind: 'image' | 'video'; width: number; height: number; durationSeconds: number }[];
  options: ScoringOptions;
  /** Which detector to open: the built-in one, or a model manifest file; `strict` fails the job when the model cannot load (mode "model"). */
  detector: DetectorChoice;
  /** Threads the built-in detector reads frames ahead on (SCORING_THREADS). */
  detectThreads: number;
  framesDir: string;
}

/**
 * What a walk is scored with: the model of a manifest, or (manifest null) the built-in detector.
 * `strict`: mode model, where a model that does not load fails the walk instead of falling back.
 * `reason`: why a configured model is not used (auto fell back before the walk started).
 */
export interface DetectorChoice {
  manifest: string | null;
  strict: boolean;
  reason: string | null;
}

export interface ClipProgressMessage {
  position: number;
  progress: number;
  frames: number;
  status: 'queued' | 'running' | 'done';
}

/** Worker → runner. */
export type WorkerMessage =
  | { type: 'started'; detector: string }
  | { type: 'progress'; progress: number; frames: number; clips: ClipProgressMessage[] }
  | { type: 'done'; result: StoredResult; readAhead: ReadAheadStats | null }
  | { type: 'failed'; reason: string; clip: number | null }
  | { type: 'stopped' };

/** Runner → worker. */
export type RunnerMessage = { type: 'stop' };
