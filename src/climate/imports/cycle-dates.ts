import { DateTime } from 'luxon';
import type { Problem } from '../exports-reader/index.js';

/**
 * A warning when a file's readings lie outside the crop cycle's days (from `started_on` to
 * `ended_on`, local dates in the greenhouse zone): readings of 2014 imported into a cycle of 2026
 * are stored all the same (the cycle's dates may be the wrong ones), but not without a word.
 * Null when the range lies inside, or there is none.
 */
export function outsideCycleWarning(
  cycle: { started_on: string; ended_on: string | null },
  zone: string,
  range: { from: string | number; to: string | number } | null,
): Problem | null {
  if (!range) return null;
  const at = (x: string | number) => (typeof x === 'number' ? DateTime.fromMillis(x, { zone }) : DateTime.fromISO(x, { zone }));
  const from = at(range.from);
  const to = at(range.to);
  if (!from.isValid || !to.isValid) return null;
  const start = DateTime.fromISO(cycle.started_on, { zone }).startOf('day');
  const end = cycle.ended_on ? DateTime.fromISO(cycle.ended_on, { zone }).startOf('day').plus({ days: 1 }) : null;
  const day = (d: DateTime) => d.toISODate()!;
  const span = `${day(from)} to ${day(to)}`;
  const check = 'check that this is the right file for this cycle, or correct the cycle';
  const code = 'outside_cycle_dates';
  if (to < start)
    return {
      code,
      message: `the file's readings run from ${span}, before the crop cycle started on ${cycle.started_on}: ${check}'s started_on`,
    };
  if (end && from >= end)
    return { code, message: `the file's readings run from ${span}, after the crop cycle ended on ${cycle.ended_on}: ${check}'s ended_on` };
  const early = from < start;
  const late = end !== null && to >= end;
  if (!early && !late) return null;
  const parts = [
    ...(early ? [`begin on ${day(from)}, before the crop cycle started on ${cycle.started_on}`] : []),
    ...(late ? [`end on ${day(to)}, after the crop cycle ended on ${cycle.ended_on}`] : []),
  ];
  return { code, message: `the file's readings ${parts.join(', and ')}: ${check}'s dates` };
}
