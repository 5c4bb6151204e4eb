import { walkZone } from '../jobs/commands.js';
import type { Db } from '../../db/database.js';
import type { Writer } from '../../db/store.js';
import type { StoredFrame, StoredResult } from '../jobs/result.js';
import type { WalkTable } from '../jobs/tables.js';
import type { Box, Ripeness } from '../../vision/types.js';
import { applyCorrections, boxProblem, conflictingCorrections, type Correction, type Corrected } from './apply.js';
import type { CorrectionKind, WalkCorrectionTable } from './tables.js';
import { Conflict, Invalid, NotFound } from '../../errors.js';

/**
 * Staff corrections of a walk: each write checks the walk can be corrected, stores the
 * correction and the walk's corrected counts in one transaction (the Writer logs both).
 */

/** A long row has a few thousand fruit; this is far above what a person corrects by hand, and keeps GET {walk}/corrections one answer. */
export const MAX_CORRECTIONS_PER_WALK = 2000;

export interface CorrectionInput {
  kind: CorrectionKind;
  track_id?: number;
  ripeness?: Ripeness;
  frame_id?: number;
  box?: Box;
  counts?: Partial<Record<Ripeness, number>>;
  note?: string;
}

export interface CorrectionPatch {
  ripeness?: Ripeness;
  box?: Box;
  counts?: Partial<Record<Ripeness, number>>;
  note?: string | null;
}

/** Which fields each kind takes: required, and allowed beside them (note goes with every kind). */
const FIELDS: Record<CorrectionKind, { required: (keyof CorrectionInput)[]; optional: (keyof CorrectionInput)[] }> = {
  ripeness: { required: ['track_id', 'ripeness'], optional: [] },
  remove: { required: ['track_id'], optional: [] },
  add: { required: ['frame_id', 'ripeness'], optional: ['box'] },
  counts: { required: ['counts'], optional: [] },
};
const KIND_FIELDS = ['track_id', 'ripeness', 'frame_id', 'box', 'counts'] as const;

export function toCorrection(row: WalkCorrectionTable): Correction {
  return {
    id: row.id,
    kind: row.kind,
    track_id: row.track_id,
    ripeness: row.ripeness,
    frame_id: row.frame_id,
    box: row.box === null ? null : (JSON.parse(row.box) as Box),
    counts: row.counts === null ? null : (JSON.parse(row.counts) as Partial<Record<Ripeness, number>>),
  };
}

export async function listCorrections(db: Db, walkId: string): Promise<WalkCorrectionTable[]> {
  return db.selectFrom('walk_corrections').selectAll().where('walk_id', '=', walkId).orderBy('id').execute();
}

/** The walk's fruit and counts after its corrections; null while it has no result. */
export function correctedResult(walk: WalkTable, rows: readonly WalkCorrectionTable[]): Corrected | null {
  if (walk.status !== 'done' || walk.result === null) return null;
  return applyCorrections((JSON.parse(walk.result) as StoredResult).fruit, rows.map(toCorrection));
}

/**
 * A walk is corrected once it is scored: while it is queued or running its fruit are not known yet,
 * and a failed walk has none (409). Sync checks received corrections with it too.
 */
export function requireCorrectable(walk: WalkTable): StoredResult {
  if (walk.status !== 'done' || walk.result === null) {
    const why =
      walk.status === 'failed' ? 'failed to score and has no fruit to correct' : 'is still being scored; correct it once it is done';
    throw new Conflict(`The walk ${why}.`, { job_id: walk.id, walk_status: walk.status });
  }
  return JSON.parse(walk.result) as StoredResult;
}

/** The walk's result and corrections, read once here; each command works on that list. */
async function correctableWalk(
  w: Writer,
  walk: WalkTable,
): Promise<{ walk: WalkTable; result: StoredResult; rows: WalkCorrectionTable[] }> {
  const result = requireCorrectable(walk);
  return { walk, result, rows: await listCorrections(w.trx as unknown as Db, walk.id) };
}

function correctionIn(rows: readonly WalkCorrectionTable[], correctionId: string): WalkCorrectionTable {
  const row = rows.find((r) => r.id === correctionId);
  if (!row) throw new NotFound('correction');
  return row;
}

function frameOf(result: StoredResult, frameId: number): StoredFrame {
  const frame = result.frames.find((f) => f.index === frameId);
  if (!frame) throw Invalid.field('frame_id', `no frame ${frameId} in this walk (frames 0 to ${result.frames.length - 1})`, 'body');
  return frame;
}

function checkBox(frame: StoredFrame, box: Box): void {
  const problem = boxProblem(box, frame.width, frame.height);
  if (problem) throw Invalid.field('box', problem, 'body');
}

/** Stores the corrected counts the walk has with these corrections (the ones it has after the change); returns the walk as written. */
async function recount(w: Writer, walk: WalkTable, result: StoredResult, rows: readonly WalkCorrectionTable[]): Promise<WalkTable> {
  const { counts } = applyCorrections(result.fruit, rows.map(toCorrection));
  if (
    counts.green === walk.corrected_green &&
    counts.turning === walk.corrected_turning &&
    counts.red === walk.corrected_red &&
    counts.total === walk.corrected_total
  )
    return walk;
  const { after } = await w.update<WalkTable>('walks', walk.id, {
    corrected_green: counts.green,
    corrected_turning: counts.turning,
    corrected_red: counts.red,
    corrected_total: counts.total,
  });
  return after;
}

export interface CorrectionWritten {
  correction: WalkCorrectionTable;
  walk: WalkTable;
}

/**
 * The rules a new correction must keep, against the walk's result and the corrections it has:
 * the fields its kind takes, a fruit and frame the walk has, a box inside the frame, no second
 * correction of the same fruit or counts (409), at most MAX_CORRECTIONS_PER_WALK. Sync checks
 * received corrections with it too.
 */
export function checkNewCorrection(result: StoredResult, existing: readonly WalkCorrectionTable[], input: CorrectionInput): void {
  const rule = FIELDS[input.kind];
  for (const name of rule.required)
    if (input[name] === undefined) throw Invalid.field(name, `is required for a correction of kind ${input.kind}`, 'body');
  for (const name of KIND_FIELDS) {
    if (input[name] !== undefined && !rule.required.includes(name) && !rule.optional.includes(name))
      throw Invalid.field(name, `does not apply to a correction of kind ${input.kind}`, 'body');
  }
  if (input.track_id !== undefined && !result.fruit.some((f) => f.track_id === input.track_id)) {
    throw Invalid.field('track_id', `no fruit with track_id ${input.track_id} in this walk (result.fruit[].track_id)`, 'body');
  }
  if (input.kind === 'add') {
    const frame = frameOf(result, input.frame_id!);
    if (input.box) checkBox(frame, input.box);
  }

  const clash = conflictingCorrections(existing.map(toCorrection), { kind: input.kind, track_id: input.track_id ?? null });
  if (clash.length > 0) {
    const what =
      input.kind === 'counts'
        ? 'The walk already has a counts correction'
        : clash.some((c) => c.kind === 'remove')
          ? `The fruit with track_id ${input.track_id} was removed (correction ${clash[0]!.id})`
          : `The fruit with track_id ${input.track_id} already has a ripeness correction (${clash[0]!.id})`;
    throw new Conflict(`${what}: change it (PATCH) or undo it (DELETE) instead.`, { correction_ids: clash.map((c) => c.id) });
  }
  if (existing.length >= MAX_CORRECTIONS_PER_WALK) {
    throw new Conflict(`The walk has ${existing.length} corrections, the most one walk keeps; score the row again or undo some.`, {
      limit: MAX_CORRECTIONS_PER_WALK,
    });
  }
}

/** What a correction's kind lets a change touch (kind and fruit never change), and a box inside its frame. */
export function checkCorrectionChange(result: StoredResult, row: WalkCorrectionTable, patch: CorrectionPatch): void {
  const takes: Record<CorrectionKind, (keyof CorrectionPatch)[]> = {
    ripeness: ['ripeness'],
    remove: [],
    add: ['ripeness', 'box'],
    counts: ['counts'],
  };
  for (const name of ['ripeness', 'box', 'counts'] as const) {
    if (patch[name] !== undefined && !takes[row.kind].includes(name))
      throw Invalid.field(name, `cannot be changed on a correction of kind ${row.kind}`, 'body');
  }
  if (patch.box) checkBox(frameOf(result, row.frame_id!), patch.box);
}

export async function addCorrection(w: Writer, scope: WalkTable, input: CorrectionInput): Promise<CorrectionWritten> {
  const { walk, result, rows: existing } = await correctableWalk(w, scope);
  checkNewCorrection(result, existing, input);

  const correction = await w.insert<WalkCorrectionTable>('walk_corrections', {
    organization_id: walk.organization_id,
    walk_id: walk.id,
    cycle_id: walk.cycle_id,
    kind: input.kind,
    track_id: input.track_id ?? null,
    ripeness: input.ripeness ?? null,
    frame_id: input.frame_id ?? null,
    box: input.box ? JSON.stringify(input.box) : null,
    counts: input.counts ? JSON.stringify(input.counts) : null,
    note: input.note ?? null,
    created_by_key_id: w.actor.keyId,
  });
  return { correction, walk: await recount(w, walk, result, [...existing, correction]) };
}

/** Changes what a correction says; which kind it is and which fruit or frame it concerns stay (docs/api-conventions.md, "Walk corrections"). */
export async function changeCorrection(
  w: Writer,
  scope: WalkTable,
  correctionId: string,
  patch: CorrectionPatch,
): Promise<CorrectionWritten> {
  const { walk, result, rows } = await correctableWalk(w, scope);
  const row = correctionIn(rows, correctionId);
  checkCorrectionChange(result, row, patch);
  const changes: Partial<WalkCorrectionTable> = {};
  if (patch.ripeness !== undefined) changes.ripeness = patch.ripeness;
  if (patch.box !== undefined) changes.box = JSON.stringify(patch.box);
  if (patch.counts !== undefined) changes.counts = JSON.stringify(patch.counts);
  if (patch.note !== undefined) changes.note = patch.note;
  const { after } = await w.update<WalkCorrectionTable>('walk_corrections', row.id, changes);
  return {
    correction: after,
    walk: await recount(
      w,
      walk,
      result,
      rows.map((r) => (r.id === after.id ? after : r)),
    ),
  };
}

/** Undoes a correction: the fruit or counts are as before it. */
export async function undoCorrection(w: Writer, scope: WalkTable, correctionId: string): Promise<WalkTable> {
  const { walk, result, rows } = await correctableWalk(w, scope);
  const row = correctionIn(rows, correctionId);
  await w.remove('walk_corrections', row.id);
  return recount(
    w,
    walk,
    result,
    rows.filter((r) => r !== row),
  );
}

/** A walk's corrections with the fruit and counts they make, and the zone its instants are answered in. */
export async function walkCorrections(db: Db, walk: WalkTable) {
  const rows = await listCorrections(db, walk.id);
  return { rows, corrected: correctedResult(walk, rows), zone: await walkZone(db, walk) };
}
