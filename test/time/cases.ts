import { parseWeek, weekOfDate, weekOfInstant, addWeeks } from '../../src/time/weeks.js';
import { parseInstant, presentInstant } from '../../src/time/instants.js';

/** Time cases whose answers must not depend on the process's own zone (TZ). */
export function timeCases() {
  return {
    label: parseWeek('2026-W07'),
    date: parseWeek('2026-02-11')?.label,
    yearEdge: weekOfDate('2027-01-01')?.label,
    week53: parseWeek('2026-W53'),
    week53ok: parseWeek('2020-W53')?.start,
    bad: [parseWeek('2026-7'), parseWeek('2026-W00'), parseWeek('2026-13-01'), parseWeek('yesterday')],
    next: addWeeks(parseWeek('2026-W52')!, 1).label,
    instantLocal: parseInstant('2026-03-01T14:00', 'Europe/Amsterdam'),
    instantOffset: parseInstant('2026-03-01T14:00:00+05:30', 'Europe/Amsterdam'),
    springGap: parseInstant('2026-03-29T02:30', 'Europe/Amsterdam'),
    autumnRepeat: parseInstant('2026-10-25T02:30', 'Europe/Amsterdam'),
    dateOnly: parseInstant('2026-06-01', 'America/New_York'),
    garbage: parseInstant('next tuesday', 'Europe/Amsterdam'),
    present: presentInstant('2026-07-01T10:00:00.000Z', 'Europe/Amsterdam'),
    sundayNight: weekOfInstant('2026-03-01T23:30:00Z', 'Europe/Amsterdam').label,
    sundayNightUtc: weekOfInstant('2026-03-01T23:30:00Z', 'UTC').label,
  };
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  process.stdout.write(JSON.stringify(timeCases(), (k, v) => (k === 'local' ? undefined : v)));
}
