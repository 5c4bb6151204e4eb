import { DateTime } from 'luxon';

/**
 * Instants arrive as ISO 8601; one without an offset is wall-clock time in the
 * greenhouse's IANA zone (docs/api-conventions.md, "Time and weeks"). A wall time that does not exist in
 * that zone (the spring-forward gap) is refused rather than silently shifted;
 * a wall time that occurs twice (the autumn hour) is its first instant.
 */
const HAS_OFFSET = /(Z|[+-]\d{2}:?\d{2})$/i;
const WALL = "yyyy-MM-dd'T'HH:mm:ss.SSS";
const ISO_LOCAL = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?)?$/;

export type InstantResult = { ok: true; utc: string; local: DateTime } | { ok: false; message: string };

export function parseInstant(text: string, zone: string): InstantResult {
  const trimmed = text.trim();
  if (HAS_OFFSET.test(trimmed)) {
    const d = DateTime.fromISO(trimmed.replace(' ', 'T'), { setZone: true });
    if (!d.isValid) return { ok: false, message: 'must be an ISO 8601 time, e.g. 2026-03-01T14:00:00+01:00' };
    return { ok: true, utc: d.toUTC().toISO()!, local: d.setZone(zone) };
  }
  if (!ISO_LOCAL.test(trimmed))
    return {
      ok: false,
      message: 'must be an ISO 8601 time, e.g. 2026-03-01T14:00:00+01:00 (without an offset it is read in the greenhouse time zone)',
    };
  const d = DateTime.fromISO(trimmed.replace(' ', 'T'), { zone });
  if (!d.isValid) return { ok: false, message: 'must be an ISO 8601 time' };
  // luxon moves a nonexistent wall time forward; detect it by formatting back.
  const roundTrip = d.toFormat(trimmed.length <= 10 ? 'yyyy-MM-dd' : "yyyy-MM-dd'T'HH:mm");
  if (!trimmed.replace(' ', 'T').startsWith(roundTrip)) {
    return { ok: false, message: `does not exist in ${zone} (the clock skips that hour when summer time starts)` };
  }
  // A repeated autumn wall time names two instants; luxon picks the later one.
  // Take the first (still summer time), as a person reading the clock would.
  // Shifts of 30, 60 or 120 minutes cover every zone in the tz database.
  const wall = d.toFormat(WALL);
  for (const minutes of [30, 60, 120]) {
    const earlier = d.minus({ minutes });
    if (earlier.offset !== d.offset && earlier.toFormat(WALL) === wall) return { ok: true, utc: earlier.toUTC().toISO()!, local: earlier };
  }
  return { ok: true, utc: d.toUTC().toISO()!, local: d };
}

/** Presents a stored UTC instant on the greenhouse's clock, with its offset. */
export function presentInstant(utcIso: string, zone: string): string {
  return DateTime.fromISO(utcIso, { zone: 'utc' }).setZone(zone).toISO({ suppressMilliseconds: true })!;
}

/**
 * The instants the box stores: readings before the epoch or centuries ahead are typing mistakes,
 * and the fixed-width text form of a stored instant (and its CHECK) only holds for four-digit
 * years. Typed readings, imports and history bounds all keep to these.
 */
export const STORED_FROM_MS = Date.UTC(1970, 0, 1);
export const STORED_UNTIL_MS = Date.UTC(2200, 0, 1);

export type StoredInstant = { ok: true; utc: string } | { ok: false; message: string };

/**
 * Reads an instant to store or to bound a query: `parseInstant` (greenhouse zone without an
 * offset, spring gap refused, autumn repeat read as its first instant), limited to the years a
 * stored instant can hold.
 */
export function readInstant(text: string, zone: string): StoredInstant {
  const parsed = parseInstant(text, zone);
  if (!parsed.ok) return parsed;
  const ms = Date.parse(parsed.utc);
  if (!(ms >= STORED_FROM_MS && ms < STORED_UNTIL_MS)) return { ok: false, message: 'must be between 1970 and 2200' };
  return { ok: true, utc: new Date(ms).toISOString() };
}
