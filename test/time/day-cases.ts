import { dateOfDay, dayNumber, dayOfInstant, localDayCursor, localMidnights, weekStartDay } from '../../src/time/days.js';
import { sunElevationDeg } from '../../src/time/sun.js';

/** Day-number cases whose answers must not depend on the process's own zone (TZ). */
export function dayCases() {
  const spring = dayNumber('2026-03-29');
  const autumn = dayNumber('2026-10-25');
  const hours = (first: number, zone: string) => {
    const b = localMidnights(first, first + 2, zone);
    return Array.from({ length: 3 }, (_, i) => (b[i + 1]! - b[i]!) / 3_600_000);
  };
  const cursor = localDayCursor(spring - 1, spring + 1, 'Europe/Amsterdam');
  return {
    monday: dateOfDay(weekStartDay(dayNumber('2021-01-03'))),
    amsterdamSpring: hours(spring - 1, 'Europe/Amsterdam'),
    amsterdamAutumn: hours(autumn - 1, 'Europe/Amsterdam'),
    aucklandSpring: hours(dayNumber('2026-09-26'), 'Pacific/Auckland'),
    // 22:30 UTC on the 28th is 23:30 local (still the 28th); 22:30 UTC on the 29th is 00:30 on the 30th.
    cursor: [Date.parse('2026-03-28T22:30:00Z'), Date.parse('2026-03-29T22:30:00Z')].map((ms) => dateOfDay(cursor(ms))),
    instant: dateOfDay(dayOfInstant(Date.parse('2026-06-30T23:30:00Z'), 'Asia/Kolkata')),
    sun: Math.round(sunElevationDeg(Date.parse('2026-06-21T11:40:00Z'), 52.37, 4.9)),
  };
}

if (process.argv[1]?.endsWith('day-cases.ts')) process.stdout.write(JSON.stringify(dayCases()));
