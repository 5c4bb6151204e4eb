import type { Box, Ripeness, RipenessCounts } from '../../vision/types.js';
import type { StoredFruit } from '../jobs/result.js';
import type { CorrectionKind } from './tables.js';

/**
 * What staff corrections do to a walk's fruit and counts: plain functions over the stored
 * result, so the rules are the same for every answer and tested without a server.
 */
export interface Correction {
  id: string;
  kind: CorrectionKind;
  track_id: number | null;
  ripeness: Ripeness | null;
  frame_id: number | null;
  box: Box | null;
  counts: Partial<Record<Ripeness, number>> | null;
}

/** A fruit of the walk after its corrections. */
export interface CorrectedFruit {
  /** The detector's track id; null for a fruit staff added. */
  track_id: number | null;
  ripeness: Ripeness;
  /** The detector's ripeness; null for an added fruit. */
  model_ripeness: Ripeness | null;
  /** Walk-wide index of the frame it is seen in (its best view, or the frame it was added in). */
  frame: number;
  box: Box | null;
  /** The correction that changed its ripeness or added it; null when the detector's stands. */
  correction_id: string | null;
}

export interface Corrected {
  fruit: CorrectedFruit[];
  /** Track ids of the detector's fruit that staff removed. */
  removed: number[];
  counts: RipenessCounts;
}

/** Corrections apply in the order they were made (their UUIDv7 ids sort so); removing a fruit outweighs a ripeness given it. */
export function applyCorrections(fruit: readonly StoredFruit[], corrections: readonly Correction[]): Corrected {
  const ordered = [...corrections].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const removed = new Set<number>();
  const ripeness = new Map<number, Correction>();
  const added: CorrectedFruit[] = [];
  let byHand: Partial<Record<Ripeness, number>> = {};
  for (const c of ordered) {
    if (c.kind === 'remove' && c.track_id !== null) removed.add(c.track_id);
    else if (c.kind === 'ripeness' && c.track_id !== null && c.ripeness) ripeness.set(c.track_id, c);
    else if (c.kind === 'add' && c.ripeness && c.frame_id !== null) {
      added.push({ track_id: null, ripeness: c.ripeness, model_ripeness: null, frame: c.frame_id, box: c.box, correction_id: c.id });
    } else if (c.kind === 'counts' && c.counts) byHand = c.counts;
  }
  const kept: CorrectedFruit[] = [];
  for (const f of fruit) {
    if (removed.has(f.track_id)) continue;
    const changed = ripeness.get(f.track_id);
    kept.push({
      track_id: f.track_id,
      ripeness: changed?.ripeness ?? f.ripeness,
      model_ripeness: f.ripeness,
      frame: f.frame,
      box: f.box,
      correction_id: changed?.id ?? null,
    });
  }
  const all = [...kept, ...added];
  const tally: Record<Ripeness, number> = { green: 0, turning: 0, red: 0 };
  for (const f of all) tally[f.ripeness]++;
  // Counts set by hand (a person counted the row) replace the classes they name; the others stay as corrected fruit by fruit.
  const green = byHand.green ?? tally.green;
  const turning = byHand.turning ?? tally.turning;
  const red = byHand.red ?? tally.red;
  const known = new Set(fruit.map((f) => f.track_id));
  return {
    fruit: all,
    removed: [...removed].filter((id) => known.has(id)).sort((a, b) => a - b),
    counts: { green, turning, red, total: green + turning + red },
  };
}

/**
 * The corrections a new one would contradict (409, with their ids): a fruit has one correction,
 * a ripeness or a removal, and a walk one counts correction; each is changed (PATCH) or undone
 * (DELETE), not stacked. (applyCorrections still lets a removal outweigh a ripeness: walks
 * corrected before this rule may hold both.)
 */
export function conflictingCorrections(existing: readonly Correction[], next: Pick<Correction, 'kind' | 'track_id'>): Correction[] {
  switch (next.kind) {
    case 'ripeness':
    case 'remove':
      return existing.filter((c) => (c.kind === 'ripeness' || c.kind === 'remove') && c.track_id === next.track_id);
    case 'counts':
      return existing.filter((c) => c.kind === 'counts');
    case 'add':
      return [];
  }
}

/** Why a box cannot mark a fruit in a frame of this size, or null when it can. */
export function boxProblem(box: Box, width: number, height: number): string | null {
  const [x1, y1, x2, y2] = box;
  if (!(x2 > x1 && y2 > y1)) return 'must be [x1, y1, x2, y2] with x2 > x1 and y2 > y1';
  if (x1 < 0 || y1 < 0 || x2 > width || y2 > height) return `must lie inside the frame (${width} × ${height} px)`;
  return null;
}
