import { DateTime } from 'luxon';

/**
 * Calendar days as whole numbers (days since 1970-01-01), for models that step
 * day by day over a season: a local date YYYY-MM-DD of the greenhouse is one
 * number, so "the day after" is `+ 1` and a week is 7, whatever the clock does.
 * Converting instants to local days goes through the zone (luxon), once per
 * day boundary rather than once per reading.
 */
const DAY_MS = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** The day number of a local date; NaN for text that is not YYYY-MM-DD. */
export function dayNumber(date: string): number {
  const m = DATE.exec(date);
  if (!m) return Number.NaN;
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) / DAY_MS;
}

/** The local date YYYY-MM-DD of a day number. */
export function dateOfDay(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/** The Monday (ISO week start) of the week holding `day`. 1970-01-01 was a Thursday. */
export function weekStartDay(day: number): number {
  return day - ((((day + 3) % 7) + 7) % 7);
}

/** The ISO weekday of a day number, 1 = Monday ... 7 = Sunday. */
export function isoWeekday(day: number): number {
  return ((((day + 3) % 7) + 7) % 7) + 1;
}

/**
 * Local midnights of the days `firstDay` to `lastDay + 1` in `zone`, as epoch ms:
 * `bounds[i]` starts day `firstDay + i`. A day with a clock change is 23 or 25
 * hours long, which a fixed 24-hour step would get wrong.
 */
export function localMidnights(firstDay: number, lastDay: number, zone: string): Float64Array {
  const out = new Float64Array(lastDay - firstDay + 2);
  let d = DateTime.fromISO(dateOfDay(firstDay), { zone }).startOf('day');
  for (let i = 0; i < out.length; i++) {
    out[i] = d.toMillis();
    d = d.plus({ days: 1 }).startOf('day');
  }
  return out;
}

/** The local day number of an instant (epoch ms) in `zone`. */
export function dayOfInstant(ms: number, zone: string): number {
  return dayNumber(DateTime.fromMillis(ms, { zone }).toISODate()!);
}

/**
 * Groups instants sorted by time into local days with one pass: `dayIndex(ms)`
 * answers the day number for ms ≥ the previous call's, moving a cursor over the
 * precomputed midnights. Instants outside [firstDay, lastDay] answer NaN.
 */
export function localDayCursor(firstDay: number, lastDay: number, zone: string): (ms: number) => number {
  const bounds = localMidnights(firstDay, lastDay, zone);
  let i = 0;
  return (ms: number) => {
    if (ms < bounds[0]! || ms >= bounds[bounds.length - 1]!) return Number.NaN;
    if (ms < bounds[i]!) i = 0;
    while (ms >= bounds[i + 1]!) i++;
    return firstDay + i;
  };
}
