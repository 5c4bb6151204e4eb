import { access } from 'node:fs/promises';
import { DateTime } from 'luxon';
import type { Db } from '../../db/database.js';
import { Invalid, NotFound } from '../../errors.js';
import { RIPENESS, type Box, type Ripeness } from '../../vision/types.js';
import { applyCorrections, type Corrected } from '../corrections/apply.js';
import { toCorrection } from '../corrections/commands.js';
import type { WalkCorrectionTable } from '../corrections/tables.js';
import { readFrameBoxes } from '../jobs/frame-boxes.js';
import type { StoredResult } from '../jobs/result.js';
import { framePath, framesDir } from '../jobs/storage.js';
import type { WalkTable } from '../jobs/tables.js';

/**
 * Staff corrections as labels: the frames of reviewed walks (walks with at least one correction)
 * as a YOLO dataset, for training/ to fine-tune the model on (training/README.md).
 *
 * A frame's labels are the walk's fruit as corrected, where the detector boxed them in that frame
 * (frames/boxes.json, kept by the worker): a counted fruit's box is kept with its corrected ripeness,
 * a removed fruit's boxes are dropped, and a fruit added with a box on the frame is added. Boxes of
 * detections that never became a counted fruit are not labels (no one reviewed them). A frame where
 * a fruit was added without a box is left out: it holds a fruit no label marks.
 */
export const TRAINING_CLASSES: readonly Ripeness[] = RIPENESS;

export interface TrainingFilter {
  organizationId: string;
  greenhouseId: string | null;
  /** Inclusive local dates (YYYY-MM-DD) of when the walk was recorded, in its greenhouse's zone (UTC for walks in no crop cycle). */
  from: string | null;
  to: string | null;
}

export interface LabelledFrame {
  /** Name in the dataset, without extension: <walk id>-<frame, 5 digits>. */
  name: string;
  image: string;
  walk_id: string;
  frame: number;
  clip: number;
  time_s: number;
  width: number;
  height: number;
  /** Labels as YOLO lines: class cx cy w h, normalised. */
  lines: string[];
  /** Each label: its ripeness and box (frame pixels), the counted fruit it is (null: added by staff), and where it came from. */
  boxes: { ripeness: Ripeness; box: Box; track_id: number | null; source: 'model' | 'model, ripeness corrected' | 'added' }[];
}

export interface ExportedWalk {
  walk_id: string;
  farm_id: string | null;
  greenhouse_id: string | null;
  row_id: string | null;
  cycle_id: string | null;
  week: string | null;
  recorded_at: string;
  /** The local date it was recorded on, in its greenhouse's zone: what from and to filter on. */
  recorded_on: string;
  /** The detector that scored it, and the model file's SHA-256 when one did. */
  detector: { name: string; kind: string; sha256: string | null };
  corrections: number;
  frames: number;
  skipped_frames: { frame: number; reason: string }[];
}

export interface TrainingExport {
  classes: readonly Ripeness[];
  filter: { greenhouse_id: string | null; from: string | null; to: string | null };
  walks: ExportedWalk[];
  skipped_walks: { walk_id: string; reason: string }[];
  frames: LabelledFrame[];
}

/** Walks of the organization with corrections, done and with frames kept, in the greenhouse and local dates asked. */
export async function reviewedWalks(db: Db, filter: TrainingFilter): Promise<{ walk: WalkTable; zone: string; recorded: string }[]> {
  let q = db
    .selectFrom('walks')
    .selectAll('walks')
    .where('walks.organization_id', '=', filter.organizationId)
    .where((eb) =>
      eb.exists(eb.selectFrom('walk_corrections').select('walk_corrections.id').whereRef('walk_corrections.walk_id', '=', 'walks.id')),
    );
  if (filter.greenhouseId) q = q.where('walks.greenhouse_id', '=', filter.greenhouseId);
  const walks = await q.orderBy('walks.created_at').orderBy('walks.id').execute();
  const zones = new Map<string, string>();
  const out: { walk: WalkTable; zone: string; recorded: string }[] = [];
  for (const walk of walks) {
    let zone = 'UTC';
    if (walk.greenhouse_id) {
      zone =
        zones.get(walk.greenhouse_id) ??
        (await db.selectFrom('greenhouses').select('time_zone').where('id', '=', walk.greenhouse_id).executeTakeFirst())?.time_zone ??
        'UTC';
      zones.set(walk.greenhouse_id, zone);
    }
    const recorded = DateTime.fromISO(walk.created_at, { zone: 'utc' }).setZone(zone).toISODate()!;
    if (filter.from && recorded < filter.from) continue;
    if (filter.to && recorded > filter.to) continue;
    out.push({ walk, zone, recorded });
  }
  return out;
}

const round6 = (v: number) => Math.round(v * 1e6) / 1e6;

/** The YOLO line of a box in a frame of this size, or null when nothing of it is inside. */
export function yoloLine(classIndex: number, box: Box, width: number, height: number): string | null {
  const x1 = Math.max(0, Math.min(width, box[0]));
  const y1 = Math.max(0, Math.min(height, box[1]));
  const x2 = Math.max(0, Math.min(width, box[2]));
  const y2 = Math.max(0, Math.min(height, box[3]));
  if (!(x2 > x1 && y2 > y1)) return null;
  const cx = (x1 + x2) / 2 / width;
  const cy = (y1 + y2) / 2 / height;
  return `${classIndex} ${round6(cx)} ${round6(cy)} ${round6((x2 - x1) / width)} ${round6((y2 - y1) / height)}`;
}

/** The labelled frames of one reviewed walk, or why it has none. */
export async function labelWalk(
  dataDir: string,
  walk: WalkTable,
  rows: readonly WalkCorrectionTable[],
): Promise<{ frames: LabelledFrame[]; skipped: { frame: number; reason: string }[] } | { reason: string }> {
  if (walk.status !== 'done' || walk.result === null) return { reason: `the walk is ${walk.status}, not scored` };
  if (walk.frames_removed_at) return { reason: `its frames were removed (retention) at ${walk.frames_removed_at}` };
  const result = JSON.parse(walk.result) as StoredResult;
  const boxes = await readFrameBoxes(framesDir(dataDir, walk.id));
  if (!boxes) return { reason: 'scored before the box kept each frame’s boxes, so its corrections cannot be placed on frames' };
  const corrected: Corrected = applyCorrections(result.fruit, rows.map(toCorrection));
  const ripenessOf = new Map<number, { ripeness: Ripeness; changed: boolean }>();
  for (const f of corrected.fruit)
    if (f.track_id !== null) ripenessOf.set(f.track_id, { ripeness: f.ripeness, changed: f.correction_id !== null });
  const boxesOf = new Map(boxes.map((b) => [b.frame, b]));
  const added = new Map<number, { ripeness: Ripeness; box: Box | null }[]>();
  for (const f of corrected.fruit) {
    if (f.track_id !== null) continue;
    const list = added.get(f.frame) ?? [];
    list.push({ ripeness: f.ripeness, box: f.box });
    added.set(f.frame, list);
  }
  const frames: LabelledFrame[] = [];
  const skipped: { frame: number; reason: string }[] = [];
  for (const frame of result.frames) {
    const adds = added.get(frame.index) ?? [];
    if (adds.some((a) => a.box === null)) {
      skipped.push({ frame: frame.index, reason: 'a fruit was added on it without a box: it holds a fruit no label marks' });
      continue;
    }
    const mine = boxesOf.get(frame.index);
    if (!mine) {
      skipped.push({ frame: frame.index, reason: 'no boxes were kept for it' });
      continue;
    }
    const image = framePath(dataDir, walk.id, frame.index, 'image.jpg');
    if (
      !image ||
      !(await access(image).then(
        () => true,
        () => false,
      ))
    ) {
      skipped.push({ frame: frame.index, reason: 'its image is not on disk' });
      continue;
    }
    const labelled: LabelledFrame['boxes'] = [];
    for (const d of mine.fruit) {
      if (d.track_id === null) continue;
      const r = ripenessOf.get(d.track_id);
      if (!r) continue; // removed by a correction, or merged away and never counted
      labelled.push({ ripeness: r.ripeness, box: d.box, track_id: d.track_id, source: r.changed ? 'model, ripeness corrected' : 'model' });
    }
    for (const a of adds) labelled.push({ ripeness: a.ripeness, box: a.box!, track_id: null, source: 'added' });
    const lines: string[] = [];
    const kept: LabelledFrame['boxes'] = [];
    for (const b of labelled) {
      const line = yoloLine(TRAINING_CLASSES.indexOf(b.ripeness), b.box, mine.width, mine.height);
      if (line) {
        lines.push(line);
        kept.push(b);
      }
    }
    frames.push({
      name: `${walk.id}-${String(frame.index).padStart(5, '0')}`,
      image,
      walk_id: walk.id,
      frame: frame.index,
      clip: frame.clip,
      time_s: frame.time_s,
      width: mine.width,
      height: mine.height,
      lines,
      boxes: kept,
    });
  }
  return { frames, skipped };
}

/** Everything the export holds, before it is written out. */
export async function buildTrainingExport(db: Db, dataDir: string, filter: TrainingFilter): Promise<TrainingExport> {
  const out: TrainingExport = {
    classes: TRAINING_CLASSES,
    filter: { greenhouse_id: filter.greenhouseId, from: filter.from, to: filter.to },
    walks: [],
    skipped_walks: [],
    frames: [],
  };
  for (const { walk, recorded } of await reviewedWalks(db, filter)) {
    const rows = await db.selectFrom('walk_corrections').selectAll().where('walk_id', '=', walk.id).orderBy('id').execute();
    const labelled = await labelWalk(dataDir, walk, rows);
    if ('reason' in labelled) {
      out.skipped_walks.push({ walk_id: walk.id, reason: labelled.reason });
      continue;
    }
    const result = JSON.parse(walk.result!) as StoredResult;
    out.walks.push({
      walk_id: walk.id,
      farm_id: walk.farm_id,
      greenhouse_id: walk.greenhouse_id,
      row_id: walk.row_id,
      cycle_id: walk.cycle_id,
      week: walk.week,
      recorded_at: walk.created_at,
      recorded_on: recorded,
      detector: { name: result.detector.name, kind: result.detector.kind, sha256: result.detector.model?.sha256 ?? null },
      corrections: rows.length,
      frames: labelled.frames.length,
      skipped_frames: labelled.skipped,
    });
    out.frames.push(...labelled.frames);
  }
  return out;
}

/** The export a request asks for: dates in order, a greenhouse of the organization (404 otherwise). */
export async function trainingExport(
  db: Db,
  dataDir: string,
  organizationId: string,
  query: { greenhouse_id?: string; from?: string; to?: string },
): Promise<TrainingExport> {
  if (query.from && query.to && query.to < query.from) throw Invalid.field('to', `is before from (${query.from})`, 'query');
  if (query.greenhouse_id) {
    const gh = await db
      .selectFrom('greenhouses')
      .select('id')
      .where('id', '=', query.greenhouse_id)
      .where('organization_id', '=', organizationId)
      .executeTakeFirst();
    if (!gh) throw new NotFound('greenhouse');
  }
  return buildTrainingExport(db, dataDir, {
    organizationId,
    greenhouseId: query.greenhouse_id ?? null,
    from: query.from ?? null,
    to: query.to ?? null,
  });
}
