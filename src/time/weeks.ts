import { DateTime } from 'luxon';
import { Invalid, type FieldSource } from '../errors.js';

/**
 * ISO 8601 weeks (Monday to Sunday, ISO week-numbering year). Requests name a
 * week by its label (`2026-W07`) or by any date of it (`2026-02-11`); answers
 * always use the label (docs/api-conventions.md, "Time and weeks").
 */
export interface IsoWeek {
  label: string;
  year: number;
  week: number;
  /** Monday, YYYY-MM-DD. */
  start: string;
  /** Sunday, YYYY-MM-DD. */
  end: string;
}

export const WEEK_FORMS = 'a week label such as 2026-W07, or a date of that week as YYYY-MM-DD';
export const WEEK_PATTERN = '^(\\d{4}-W\\d{2}|\\d{4}-\\d{2}-\\d{2})$';

const LABEL = /^(\d{4})-W(\d{2})$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

function fromDateTime(d: DateTime): IsoWeek {
  const monday = d.startOf('week');
  return {
    label: `${d.weekYear}-W${String(d.weekNumber).padStart(2, '0')}`,
    year: d.weekYear,
    week: d.weekNumber,
    start: monday.toISODate()!,
    end: monday.plus({ days: 6 }).toISODate()!,
  };
}

/**
 * Weeks already worked out, by the label or date they were read from. luxon's week arithmetic
 * was a twentieth of what an upstream spent applying a pushed week (a harvest's week is read
 * and its date's week worked out for every harvest: docs/postgres.md), and a season names a few
 * hundred distinct labels and dates. Only the short texts a week can be are kept, frozen, and
 * the whole is dropped when it grows past a bound.
 */
const known = new Map<string, IsoWeek | null>();
const KNOWN_MAX = 20_000;
function remembered(input: string, work: (input: string) => IsoWeek | null): IsoWeek | null {
  const hit = known.get(input);
  if (hit !== undefined || known.has(input)) return hit ?? null;
  const week = work(input);
  if (input.length <= 10) {
    if (known.size >= KNOWN_MAX) known.clear();
    known.set(input, week && Object.freeze(week));
  }
  return week;
}

/** Parses a week label or date; null when the text is neither (the caller answers 422 naming WEEK_FORMS). */
export function parseWeek(input: string): IsoWeek | null {
  return remembered(input, parseAnew);
}

function parseAnew(input: string): IsoWeek | null {
  const label = LABEL.exec(input);
  if (label) {
    const year = Number(label[1]);
    const week = Number(label[2]);
    const d = DateTime.fromObject({ weekYear: year, weekNumber: week, weekday: 1 }, { zone: 'UTC' });
    // luxon rolls week 53 of a 52-week year into the next year: refuse it instead.
    if (!d.isValid || d.weekYear !== year || d.weekNumber !== week) return null;
    return fromDateTime(d);
  }
  if (DATE.test(input)) return weekOfDate(input);
  return null;
}

/** The ISO week a calendar date (YYYY-MM-DD) falls in; null for an impossible date. */
export function weekOfDate(date: string): IsoWeek | null {
  return DATE.test(date) ? remembered(date, weekOfDateAnew) : null;
}

function weekOfDateAnew(date: string): IsoWeek | null {
  const d = DateTime.fromISO(date, { zone: 'UTC' });
  return d.isValid ? fromDateTime(d) : null;
}

/** The week `n` weeks after `week` (negative goes back). */
export function addWeeks(week: IsoWeek, n: number): IsoWeek {
  return fromDateTime(DateTime.fromISO(week.start, { zone: 'UTC' }).plus({ weeks: n }));
}

/** The week an instant falls in, read on the greenhouse's clock. */
export function weekOfInstant(instantIso: string, zone: string): IsoWeek {
  return fromDateTime(DateTime.fromISO(instantIso, { setZone: true }).setZone(zone));
}

export function isValidDate(date: string): boolean {
  return DATE.test(date) && DateTime.fromISO(date, { zone: 'UTC' }).isValid;
}

/**
 * A week label or date that a schema's pattern let through can still be impossible (week 53 of
 * a 52-week year, 2026-02-31): that is a 422 naming the field, like any other bad field.
 */
export function requireWeek(text: string, name: string, where: FieldSource = 'body'): IsoWeek {
  const week = parseWeek(text);
  if (!week) throw Invalid.field(name, `must be ${WEEK_FORMS}, and an existing week or date`, where);
  return week;
}

/**
 * The week as an instant range [from, to) on the greenhouse clock: Monday 00:00 local to the
 * next Monday 00:00 local. A week with a clock change is 167 or 169 hours long, which a fixed
 * UTC window would get wrong.
 */
export function weekWindowUtc(week: IsoWeek, zone: string): { from: string; to: string } {
  const start = DateTime.fromISO(week.start, { zone }).startOf('day');
  return { from: start.toUTC().toISO()!, to: start.plus({ weeks: 1 }).toUTC().toISO()! };
}
