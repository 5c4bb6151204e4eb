import { cycleColumns } from '../common.js';
import type { Db } from '../../db/database.js';
import type { Writer } from '../../db/store.js';
import type { CycleScope } from '../../registry/scope.js';
import { requireWeek, type IsoWeek } from '../../time/weeks.js';
import type { WeekNoteTable } from '../tables.js';
import { measureNote, NOTE_MAX_BYTES, NOTE_MAX_DEPTH, NOTE_MAX_KEYS } from './limits.js';
import { Invalid, TooLarge } from '../../errors.js';

/** Checks a week note against its caps; returns the JSON text to store. */
export function checkWeekNote(note: unknown, receivedBytes?: number): string {
  if (note === null || typeof note !== 'object' || Array.isArray(note)) {
    throw new Invalid([{ in: 'body', name: '(body)', message: 'must be a JSON object' }], 'A week note is a JSON object.');
  }
  const text = JSON.stringify(note);
  const bytes = Math.max(receivedBytes ?? 0, Buffer.byteLength(text));
  if (bytes > NOTE_MAX_BYTES) {
    throw new TooLarge(NOTE_MAX_BYTES, `A week note is at most ${NOTE_MAX_BYTES} bytes; this one is ${bytes}.`);
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
    throw new Invalid(errors, `A week note is at most ${NOTE_MAX_DEPTH} levels deep with at most ${NOTE_MAX_KEYS} keys in all.`);
  return text;
}

/** One note per cycle and week: saving again replaces it. */
/** Checks a note (size, depth) and saves it for the week, replacing what the week had. */
export async function saveWeekNote(
  w: Writer,
  scope: CycleScope,
  weekText: string,
  note: unknown,
  receivedBytes?: number,
): Promise<WeekNoteTable> {
  const week = requireWeek(weekText, 'week', 'path');
  const body = checkWeekNote(note, receivedBytes);
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
