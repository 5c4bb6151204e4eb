import { parseInstant } from '../../time/instants.js';

export type ReadingInstant = { ok: true; utc: string } | { ok: false; message: string };

// Readings before the epoch or centuries ahead are typing mistakes, and the
// fixed-width text form (and its CHECK) only holds for four-digit years.
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(2200, 0, 1);

/**
 * Reads an instant for a climate reading or a history bound: `parseInstant`
 * (greenhouse zone without an offset, spring gap refused, autumn repeat read as
 * its first instant), limited to years the fixed-width stored text can hold.
 */
export function readInstant(text: string, zone: string): ReadingInstant {
  const parsed = parseInstant(text, zone);
  if (!parsed.ok) return parsed;
  const ms = Date.parse(parsed.utc);
  if (!(ms >= EARLIEST && ms < LATEST)) return { ok: false, message: 'must be between 1970 and 2200' };
  return { ok: true, utc: new Date(ms).toISOString() };
}

/** Any stored-form UTC text from an epoch time; the one place the fixed format is made. */
export function utcText(ms: number): string {
  return new Date(ms).toISOString();
}
