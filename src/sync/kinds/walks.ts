import { sql, type Kysely } from 'kysely';
import { orgKey } from '../../db/engine.js';
import { Invalid } from '../../errors.js';
import { weekLabelSchema } from '../../http/schemas.js';
import { forgetWalks } from '../../walks/jobs/runner.js';
import { isWalkId } from '../../walks/jobs/storage.js';
import type { StoredResult } from '../../walks/jobs/result.js';
import { applyCorrections } from '../../walks/corrections/apply.js';
import { checkCorrectionChange, checkNewCorrection, requireCorrectable, toCorrection } from '../../walks/corrections/commands.js';
import { createCorrectionBody, patchCorrectionBody } from '../../walks/corrections/schemas.js';
import type { WalkCorrectionTable } from '../../walks/corrections/tables.js';
import type { WalkTable } from '../../walks/jobs/tables.js';
import { storedResultSchema } from '../../walks/jobs/presenters.js';
import { requireWeek } from '../../time/weeks.js';
import { checkedAhead, checkFields, fieldInvalid, rowSchema, notHeld } from '../refusal.js';
import { isWalkFileName, materialize, presentCopies, SHA256, walkManifest, type ManifestEntry } from '../files.js';
import { SYNCED, findRow, removeRow, rowKind, type ParentSpec } from './rows.js';
import { pick, type ApplyContext, type SyncKind } from './kind.js';
import type { BatchState } from '../batch.js';
import { insertRows } from '../../db/bulk.js';
import type { WireChange } from '../wire.js';
import { remoteIds } from '../../db/feed.js';

const anyDb = (ctx: ApplyContext) => ctx.trx as unknown as Kysely<any>;

/**
 * Walks (docs/sync.md, "Walks and corrections"). A walk travels once it is scored, done or
 * failed: while queued or running it is this box's job and nobody else's (an upstream that got a
 * queued walk would try to score it without its clips). It travels as a unit: the walk, its clip
 * rows, and the manifest of its files. Its fields win in two groups, the week it is saved to
 * and its scoring; the corrected counts are not sent but made again from the corrections
 * wherever they are applied.
 */

type Row = Record<string, unknown>;

const SCORING = [
  'status',
  'mode',
  'options',
  'detector',
  'error',
  'started_at',
  'finished_at',
  'count_green',
  'count_turning',
  'count_red',
  'count_total',
  'result',
];
const IDENTITY = ['farm_id', 'greenhouse_id', 'row_id', 'cycle_id', 'source', 'example_key', 'request_hash', 'created_by_key_id'];
const WALK_COLUMNS = [...SYNCED, ...IDENTITY, 'week', ...SCORING];
const CLIP_COLUMNS = [
  ...SYNCED,
  'walk_id',
  'cycle_id',
  'position',
  'file_name',
  'original_name',
  'size_bytes',
  'sha256',
  'kind',
  'format',
  'width',
  'height',
  'duration_s',
  'status',
  'progress',
  'frames',
  'error',
];

const nullableString = { type: ['string', 'null'] };
const nullableCount = { type: ['integer', 'null'], minimum: 0 };
const walkSchema = rowSchema(
  {
    farm_id: nullableString,
    greenhouse_id: nullableString,
    row_id: nullableString,
    cycle_id: nullableString,
    week: { oneOf: [weekLabelSchema, { type: 'null' }] },
    source: { enum: ['observation', 'cycle_video', 'cycle_batch', 'example'] },
    example_key: nullableString,
    request_hash: { type: 'string', maxLength: 128 },
    created_by_key_id: nullableString,
    // Only a scored walk travels (see above).
    status: { enum: ['done', 'failed'] },
    mode: { type: 'string', maxLength: 32 },
    options: { type: 'string', maxLength: 10_000 },
    detector: nullableString,
    error: { type: ['string', 'null'], maxLength: 2000 },
    started_at: { type: ['string', 'null'], format: 'date-time' },
    finished_at: { type: ['string', 'null'], format: 'date-time' },
    count_green: nullableCount,
    count_turning: nullableCount,
    count_red: nullableCount,
    count_total: nullableCount,
    result: nullableString,
  },
  ['source', 'request_hash', 'status', 'mode', 'options'],
);
const clipSchema = rowSchema(
  {
    walk_id: { type: 'string' },
    position: { type: 'integer', minimum: 0, maximum: 100 },
    file_name: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$' },
    original_name: { type: 'string', maxLength: 255 },
    size_bytes: { type: 'integer', minimum: 0 },
    sha256: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    kind: { enum: ['image', 'video'] },
    format: { type: 'string', maxLength: 32 },
    width: { type: 'integer', minimum: 0 },
    height: { type: 'integer', minimum: 0 },
    duration_s: { type: 'number', minimum: 0 },
    status: { enum: ['queued', 'running', 'done', 'failed'] },
    progress: { type: 'number', minimum: 0, maximum: 1 },
    frames: { type: 'integer', minimum: 0 },
    error: nullableString,
  },
  ['walk_id', 'position', 'file_name', 'sha256', 'kind'],
);

// The largest check a pushed walk takes: compiled when the module loads.
checkedAhead(storedResultSchema);

const WALK_PARENTS: ParentSpec[] = [
  { column: 'organization_id', table: 'organizations', kind: 'organizations', what: 'organization' },
  { column: 'cycle_id', table: 'cycles', kind: 'cycles', what: 'crop cycle', same: ['farm_id', 'greenhouse_id', 'row_id'], nullable: true },
];

/**
 * A pushed walk's result is read when it is checked and again for its corrected counts: the
 * last few texts' readings are kept (by the text itself, a string held by the change), so that a
 * result of a few hundred kilobytes is parsed once. A reading is shared, so nothing may change it:
 * the check adds nothing (bodies are validated without coercion, and the stored result's schema
 * has no defaults) and counting only reads it.
 */
const parsed = new Map<string, StoredResult | null>();
const PARSED_KEPT = 8;

function parseResult(text: unknown): StoredResult | null {
  if (typeof text !== 'string') return null;
  if (parsed.has(text)) return parsed.get(text)!;
  let r: StoredResult | null;
  try {
    r = JSON.parse(text) as StoredResult;
    if (!(r && Array.isArray(r.fruit) && Array.isArray(r.frames))) r = null;
  } catch {
    r = null;
  }
  if (parsed.size >= PARSED_KEPT) parsed.delete(parsed.keys().next().value!);
  parsed.set(text, r);
  return r;
}

/** The corrected counts are made from the result and the corrections wherever they are stored: never sent, never stamped. */
/** A walk's corrected counts: its stored result with these corrections applied; null for a walk without a result. */
function correctedCounts(walk: Row, corrections: WalkCorrectionTable[]): Row {
  const result = walk.status === 'done' ? parseResult(walk.result) : null;
  const counts = result ? applyCorrections(result.fruit, corrections.map(toCorrection)).counts : null;
  return {
    corrected_green: counts?.green ?? null,
    corrected_turning: counts?.turning ?? null,
    corrected_red: counts?.red ?? null,
    corrected_total: counts?.total ?? null,
  };
}

async function recount(ctx: ApplyContext, walkId: string): Promise<void> {
  const walk = (await findRow(ctx.trx, 'walks', walkId)) as Row | undefined;
  if (!walk) return;
  const corrections =
    walk.status === 'done'
      ? ((await ctx.trx
          .selectFrom('walk_corrections')
          .selectAll()
          .where('walk_id', '=', walkId)
          .orderBy('id')
          .execute()) as WalkCorrectionTable[])
      : [];
  await ctx.trx
    .updateTable('walks')
    .set(correctedCounts(walk, corrections) as never)
    .where('id', '=', walkId)
    .execute();
}

function checkManifest(unit: Record<string, unknown> | undefined, walkId: string): ManifestEntry[] {
  const files = (unit?.files ?? []) as ManifestEntry[];
  if (!Array.isArray(files) || files.length > 100_000) throw fieldInvalid('files', 'must be a list of files');
  // The walk's folder is named by its id: a walk whose id cannot name one has no files to take.
  const placeable = isWalkId(walkId);
  for (const [i, f] of files.entries()) {
    if (!f || typeof f.name !== 'string' || !placeable || !isWalkFileName(f.name))
      throw fieldInvalid(`files.${i}.name`, 'is not a walk file name');
    if (typeof f.sha256 !== 'string' || !SHA256.test(f.sha256)) throw fieldInvalid(`files.${i}.sha256`, 'must be a sha256 in hex');
    if (!Number.isSafeInteger(f.size) || f.size < 0) throw fieldInvalid(`files.${i}.size`, 'must be a byte count');
  }
  return files;
}

/** Records the walk's files; those whose content is already here are put in place at once, the others are fetched or awaited. */
async function storeManifest(ctx: ApplyContext, walk: Row, files: ManifestEntry[], isNew: boolean): Promise<void> {
  // A walk inserted by this change holds no files yet (a deleted walk's went with it).
  const held = new Map(
    isNew
      ? []
      : (
          await ctx.trx
            .selectFrom('sync_walk_files')
            .selectAll()
            .where('walk_id', '=', walk.id as string)
            .execute()
        ).map((r) => [r.name, r]),
  );
  // The last entry of a name counts, as when they were written one by one.
  const changed = [...new Map(files.map((f) => [f.name, f])).values()].filter((f) => held.get(f.name)?.sha256 !== f.sha256);
  if (!changed.length) return;
  const rows = changed.map((f) => ({
    walk_id: walk.id as string,
    name: f.name,
    organization_id: ctx.org,
    sha256: f.sha256,
    size: f.size,
    present: 0,
  }));
  const shas = [...new Set(changed.map((f) => f.sha256))];
  if (ctx.batch && isNew) {
    // Written with the batch's other new walks' files, and looked for among the files here in one query at the flush.
    for (const r of rows) ctx.batch.insert('sync_walk_files', r);
    placeAtFlush(ctx.batch, ctx, shas);
    return;
  }
  // One statement for the walk's files (a round trip each on PostgreSQL was most of what a walk cost).
  const key = sql.join(orgKey(anyDb(ctx), ['walk_id', 'name']).map((c) => sql.id(c)));
  await insertRows(
    anyDb(ctx),
    'sync_walk_files',
    rows,
    sql`ON CONFLICT (${key}) DO UPDATE SET sha256 = excluded.sha256, size = excluded.size, present = 0`,
  );
  await placePresent(ctx, shas);
}

/** Puts the contents already here (another walk's identical frame) where the walks that want them expect them. */
async function placePresent(ctx: ApplyContext, shas: readonly string[]): Promise<void> {
  const dataDir = ctx.services.config.dataDir;
  for (const [sha, copy] of await presentCopies(ctx.trx, dataDir, shas)) await materialize(ctx.trx, dataDir, sha, copy);
}

/** The contents of a batch's new walks, put in place (those already here) once its held-back writes are written. */
const toPlace = new WeakMap<BatchState, Set<string>>();
function placeAtFlush(batch: BatchState, ctx: ApplyContext, shas: readonly string[]): void {
  let set = toPlace.get(batch);
  if (!set) {
    const mine = (set = new Set());
    toPlace.set(batch, mine);
    batch.defer(async () => {
      toPlace.delete(batch);
      await placePresent(ctx, [...mine]);
    });
  }
  for (const sha of shas) set.add(sha);
}

async function replaceClips(ctx: ApplyContext, walk: Row, clips: Row[], isNew: boolean): Promise<void> {
  const entry = (c: Row, op: 'insert' | 'update') => ({
    organization_id: ctx.org,
    entity: 'walk_clips',
    entity_id: c.id as string,
    op,
    after: c,
    version: c.version as string,
  });
  if (ctx.batch && isNew) {
    // A walk made by this change in a batch applied as one: its clips are written with the batch's others.
    for (const c of clips) {
      ctx.batch.insert('walk_clips', c);
      ctx.batch.log(entry(c, 'insert'));
    }
    return;
  }
  // A walk inserted by this change has no clips yet: theirs name it.
  const held = isNew
    ? []
    : ((await ctx.trx
        .selectFrom('walk_clips')
        .selectAll()
        .where('walk_id', '=', walk.id as string)
        .execute()) as unknown as Row[]);
  const keep = new Set(clips.map((c) => c.id));
  for (const h of held) if (!keep.has(h.id)) await removeRow(ctx, 'walk_clips', h);
  const heldIds = new Set(held.map((h) => h.id));
  // New clips in one statement, their change-log entries in another, in the clips' order.
  const fresh = clips.filter((c) => !heldIds.has(c.id));
  await insertRows(anyDb(ctx), 'walk_clips', fresh);
  const entries: Parameters<typeof ctx.w.logMany>[0] = [];
  for (const c of clips) {
    if (heldIds.has(c.id))
      await ctx.trx
        .updateTable('walk_clips')
        .set(
          pick(
            c,
            CLIP_COLUMNS.filter((k) => k !== 'id'),
          ) as never,
        )
        .where('id', '=', c.id as string)
        .execute();
    entries.push({ ...entry(c, heldIds.has(c.id) ? 'update' : 'insert'), ...remoteIds(ctx.w.remote) });
  }
  await ctx.w.logMany(entries);
}

/** What travels with a walk (its clip rows and file list), checked; kept by change, since a new walk's check and afterApply both need it. */
const units = new WeakMap<WireChange, { clips: Row[]; files: ManifestEntry[] }>();
function receivedUnit(ctx: ApplyContext, row: Row, change: WireChange): { clips: Row[]; files: ManifestEntry[] } {
  const known = units.get(change);
  if (known) return known;
  const clips = (change.unit?.clips ?? []) as Row[];
  if (!Array.isArray(clips)) throw fieldInvalid('clips', 'must be a list');
  const clean = clips.map((c, i) => {
    checkFields(clipSchema, c, `clip ${i} of the walk`);
    const stored = pick(c, CLIP_COLUMNS);
    if (stored.walk_id !== row.id || stored.organization_id !== ctx.org || stored.cycle_id !== row.cycle_id)
      throw fieldInvalid(`clips.${i}`, 'must belong to the walk');
    return stored;
  });
  const unit = { clips: clean, files: checkManifest(change.unit, row.id as string) };
  units.set(change, unit);
  return unit;
}

export const walksKind: SyncKind = rowKind({
  kind: 'walks',
  table: 'walks',
  what: 'walk',
  columns: WALK_COLUMNS,
  immutable: IDENTITY,
  // progress, attempts and the retention dates are this box's; the corrected counts are made here.
  localDefaults: (row) => ({
    progress: row.status === 'done' ? 1 : 0,
    attempts: 0,
    idempotency_key: null,
    clips_removed_at: null,
    frames_removed_at: null,
    // Its corrections name it, so none is held yet when it is made.
    ...correctedCounts(row, []),
  }),
  merge: { groups: [['week'], SCORING] },
  schema: walkSchema,
  parents: WALK_PARENTS,
  // A walk made by a change is applied with the batch's reads and writes (src/sync/batch.ts); one held here is merged alone.
  batched: 'new',
  travels: (row) => row.status === 'done' || row.status === 'failed',
  async unit(ctx, row) {
    const clips = (await ctx.db
      .selectFrom('walk_clips')
      .selectAll()
      .where('walk_id', '=', row.id as string)
      .orderBy('position')
      .execute()) as unknown as Row[];
    const files = await walkManifest(
      ctx.db,
      ctx.dataDir,
      row as { id: string; organization_id: string },
      ctx.syncClips,
      clips.map((c) => c.file_name as string),
    );
    return { clips: clips.map((c) => pick(c, CLIP_COLUMNS)), files };
  },
  check(ctx, row, existing, change) {
    // A new walk takes all it carries: what travels with it is checked before anything is written.
    if (!existing) receivedUnit(ctx, row, change);
    if (row.cycle_id !== null) {
      const week = requireWeek(String(row.week), 'week');
      if (week.label !== row.week) throw fieldInvalid('week', 'must be a week label');
    }
    if (row.status === 'done') {
      const result = parseResult(row.result);
      if (!result) throw fieldInvalid('result', 'must be the stored result of a scored walk');
      checkFields(storedResultSchema, result as never, 'result');
    }
    for (const o of ['options']) {
      try {
        JSON.parse(row[o] as string);
      } catch {
        throw fieldInvalid(o, 'must be JSON');
      }
    }
  },
  async afterApply(ctx, row, before, change, taken) {
    if (!row) {
      if (before) {
        await ctx.trx
          .deleteFrom('sync_walk_files')
          .where('walk_id', '=', before.id as string)
          .execute();
        const id = before.id as string;
        ctx.afterCommit.push(() => forgetWalks(ctx.services, [id]));
      }
      return;
    }
    if (taken.has('status')) {
      const { clips, files } = receivedUnit(ctx, row, change);
      await replaceClips(ctx, row, clips, !before);
      await storeManifest(ctx, row, files, !before);
    }
    // A walk inserted by this change got its counts with its row (localDefaults): no correction of it can be held yet.
    if (before) await recount(ctx, row.id as string);
  },
  async remove(ctx, existing, change) {
    const id = existing.id as string;
    for (const c of (await ctx.trx.selectFrom('walk_corrections').selectAll().where('walk_id', '=', id).execute()) as unknown as Row[])
      await removeRow(ctx, 'walk_corrections', c);
    for (const c of (await ctx.trx.selectFrom('walk_clips').selectAll().where('walk_id', '=', id).execute()) as unknown as Row[])
      await removeRow(ctx, 'walk_clips', c);
    await removeRow(ctx, 'walks', existing, change.v);
  },
});

/** Clip rows travel inside their walk. */
export const walkClipsKind: SyncKind = {
  kind: 'walk_clips',
  digest: [
    {
      name: 'walk_clips',
      rows: async (db, org) =>
        (
          (await db
            .selectFrom('walk_clips')
            .innerJoin('walks', 'walks.id', 'walk_clips.walk_id')
            .selectAll('walk_clips')
            .where('walk_clips.organization_id', '=', org)
            .where('walks.status', 'in', ['done', 'failed'])
            .orderBy('walk_clips.id')
            .execute()) as unknown as Row[]
        ).map((r) => CLIP_COLUMNS.map((c) => r[c] ?? null)),
    },
  ],
  async serialize() {
    return null;
  },
  async apply() {
    throw new Invalid([], 'Clip rows travel inside their walk.');
  },
};

// ---- Corrections: append-only facts. Each is its own record; an edit is last writer wins, an
// undo a tombstone; a new one keeps the API's rules (no second correction of one fruit: 409).

const CORRECTION_COLUMNS = [
  ...SYNCED,
  'walk_id',
  'cycle_id',
  'kind',
  'track_id',
  'ripeness',
  'frame_id',
  'box',
  'counts',
  'note',
  'created_by_key_id',
];
// The same schemas as POST {walk}/corrections, on a pushed correction's parsed values. Made once:
// a schema made per change was compiled again for each, and kept by ajv for ever.
const correctionValuesSchema = rowSchema(
  { box: createCorrectionBody.properties.box!, counts: createCorrectionBody.properties.counts! },
  [],
);
const correctionSchema = rowSchema(
  {
    walk_id: { type: 'string' },
    cycle_id: nullableString,
    kind: createCorrectionBody.properties.kind!,
    track_id: { type: ['integer', 'null'], minimum: 0 },
    ripeness: { oneOf: [createCorrectionBody.properties.ripeness!, { type: 'null' }] },
    frame_id: { type: ['integer', 'null'], minimum: 0 },
    box: nullableString,
    counts: nullableString,
    note: patchCorrectionBody.properties.note!,
    created_by_key_id: nullableString,
  },
  ['walk_id', 'kind'],
);

function parsedJson(row: Row, name: 'box' | 'counts'): unknown {
  if (row[name] === null || row[name] === undefined) return undefined;
  try {
    return JSON.parse(row[name] as string);
  } catch {
    throw fieldInvalid(name, 'must be JSON');
  }
}

export const walkCorrectionsKind: SyncKind = rowKind({
  kind: 'walk_corrections',
  table: 'walk_corrections',
  what: 'correction',
  columns: CORRECTION_COLUMNS,
  immutable: ['walk_id', 'cycle_id', 'kind', 'track_id', 'frame_id', 'created_by_key_id'],
  merge: 'record',
  schema: correctionSchema,
  parents: [{ column: 'walk_id', table: 'walks', kind: 'walks', what: 'walk' }],
  async check(ctx, row, existing) {
    const walk = (await findRow(ctx.trx, 'walks', row.walk_id as string)) as unknown as WalkTable | undefined;
    if (!walk) throw notHeld(`The walk ${String(row.walk_id)} is not held here.`);
    if (walk.cycle_id !== row.cycle_id) throw fieldInvalid('cycle_id', "must be the walk's");
    const result = requireCorrectable(walk);
    const box = parsedJson(row, 'box');
    const counts = parsedJson(row, 'counts');
    checkFields(
      correctionValuesSchema,
      { ...(box !== undefined ? { box } : {}), ...(counts !== undefined ? { counts } : {}) },
      'correction',
    );
    const held = (await ctx.trx
      .selectFrom('walk_corrections')
      .selectAll()
      .where('walk_id', '=', walk.id)
      .orderBy('id')
      .execute()) as WalkCorrectionTable[];
    if (existing) {
      checkCorrectionChange(result, existing as unknown as WalkCorrectionTable, {
        ...(row.ripeness !== existing.ripeness ? { ripeness: row.ripeness as never } : {}),
        ...(row.box !== existing.box && box !== undefined ? { box: box as never } : {}),
        ...(row.counts !== existing.counts && counts !== undefined ? { counts: counts as never } : {}),
      });
      return;
    }
    checkNewCorrection(
      result,
      held.filter((h) => h.id !== row.id),
      {
        kind: row.kind as never,
        ...(row.track_id !== null ? { track_id: row.track_id as number } : {}),
        ...(row.ripeness !== null ? { ripeness: row.ripeness as never } : {}),
        ...(row.frame_id !== null ? { frame_id: row.frame_id as number } : {}),
        ...(box !== undefined ? { box: box as never } : {}),
        ...(counts !== undefined ? { counts: counts as never } : {}),
      },
    );
  },
  async afterApply(ctx, row, before) {
    const walkId = (row ?? before)?.walk_id as string | undefined;
    if (walkId) await recount(ctx, walkId);
  },
});
