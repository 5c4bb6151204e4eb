import { DateTime } from 'luxon';
import { parseInstant } from '../../time/instants.js';

export type ReadingInstant = { ok: true; utc: string } | { ok: false; message: string };

const HAS_OFFSET = /(Z|[+-]\d{2}:?\d{2})$/i;
const WALL = "yyyy-MM-dd'T'HH:mm:ss.SSS";
// Readings before the epoch or centuries ahead are typing mistakes, and the
// fixed-width text form (and its CHECK) only holds for four-digit years.
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(2200, 0, 1);

/**
 * Reads an instant for a climate reading or a history bound. Without an offset
 * it is wall-clock time in the greenhouse zone; a time that does not exist
 * there (spring forward) is refused. A wall time that happens twice (the
 * autumn hour) is read as its FIRST occurrence, the summer-time instant:
 * `parseInstant` of the foundation lets luxon pick the later one, so the
 * earlier candidate is looked for here (shifts of 30, 60 or 120 minutes cover
 * every zone in the tz database).
 */
export function readInstant(text: string, zone: string): ReadingInstant {
  const parsed = parseInstant(text, zone);
  if (!parsed.ok) return parsed;
  let ms = DateTime.fromISO(parsed.utc).toMillis();
  if (!HAS_OFFSET.test(text.trim())) {
    const wall = parsed.local.toFormat(WALL);
    for (const minutes of [30, 60, 120]) {
      const earlier = ms - minutes * 60_000;
      if (DateTime.fromMillis(earlier, { zone }).toFormat(WALL) === wall) {
        ms = earlier;
        break;
      }
    }
  }
  if (!(ms >= EARLIEST && ms < LATEST)) return { ok: false, message: 'must be between 1970 and 2200' };
  return { ok: true, utc: new Date(ms).toISOString() };
}

/** Any stored-form UTC text from an epoch time; the one place the fixed format is made. */
export function utcText(ms: number): string {
  return new Date(ms).toISOString();
}
