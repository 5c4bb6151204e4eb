import type { Db } from '../../db/database.js';
import type { Writer } from '../../db/store.js';
import type { CycleScope } from '../../registry/scope.js';
import { HttpProblem, validationFailed } from '../../http/problem.js';
import type { IsoWeek } from '../../time/weeks.js';
import { cycleColumns } from '../common.js';
import type { WeekNoteTable } from '../tables.js';
import { measureNote, NOTE_MAX_BYTES, NOTE_MAX_DEPTH, NOTE_MAX_KEYS } from './limits.js';

/** Checks a week note against its caps; returns the JSON text to store. */
export function checkWeekNote(note: unknown, receivedBytes?: number): string {
  if (note === null || typeof note !== 'object' || Array.isArray(note)) {
    throw validationFailed([{ in: 'body', name: '(body)', message: 'must be a JSON object' }], 'A week note is a JSON object.');
  }
  const text = JSON.stringify(note);
  const bytes = Math.max(receivedBytes ?? 0, Buffer.byteLength(text));
  if (bytes > NOTE_MAX_BYTES) {
    throw new HttpProblem(413, 'payload_too_large', `A week note is at most ${NOTE_MAX_BYTES} bytes; this one is ${bytes}.`, {
      limit_bytes: NOTE_MAX_BYTES,
    });
  }
  const shape = measureNote(note);
  const errors = [];
  if (shape.depth > NOTE_MAX_DEPTH)
    errors.push({
      in: 'body' as const,
      name: '(body)',
      message: `is nested more than ${NOTE_MAX_DEPTH} levels deep (depth limit ${NOTE_MAX_DEPTH})`,
    });
  if (shape.keys > NOTE_MAX_KEYS)
    errors.push({
      in: 'body' as const,
      name: '(body)',
      message: `has more than ${NOTE_MAX_KEYS} keys in all (key limit ${NOTE_MAX_KEYS})`,
    });
  if (errors.length)
    throw validationFailed(errors, `A week note is at most ${NOTE_MAX_DEPTH} levels deep with at most ${NOTE_MAX_KEYS} keys in all.`);
  return text;
}

/** One note per cycle and week: saving again replaces it. */
export async function saveWeekNote(w: Writer, scope: CycleScope, week: IsoWeek, body: string): Promise<WeekNoteTable> {
  const existing = await w.trx
    .selectFrom('week_notes')
    .selectAll()
    .where('cycle_id', '=', scope.cycle.id)
    .where('week', '=', week.label)
    .executeTakeFirst();
  if (existing) return (await w.update<WeekNoteTable>('week_notes', existing.id, { body })).after;
  return w.insert<WeekNoteTable>('week_notes', { ...cycleColumns(scope), week: week.label, body });
}

export async function loadWeekNote(db: Db, cycleId: string, week: IsoWeek): Promise<WeekNoteTable | undefined> {
  return db.selectFrom('week_notes').selectAll().where('cycle_id', '=', cycleId).where('week', '=', week.label).executeTakeFirst();
}
