import t from 'tap';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { timeCases } from './cases.js';
import { parseWeek, weekOfDate } from '../../src/time/weeks.js';

const strip = (v: unknown) => JSON.parse(JSON.stringify(v, (k, x) => (k === 'local' ? undefined : x)));

t.test('weeks and instants', async (t) => {
  const c = timeCases();
  t.same(c.label, { label: '2026-W07', year: 2026, week: 7, start: '2026-02-09', end: '2026-02-15' });
  t.equal(c.date, '2026-W07', 'any date of the week names it');
  t.equal(c.yearEdge, '2026-W53', '2027-01-01 is in ISO week 53 of 2026');
  t.ok(c.week53, '2026 has 53 ISO weeks');
  t.equal(c.week53ok, '2020-12-28');
  t.same(c.bad, [null, null, null, null]);
  t.equal(c.next, '2026-W53');
  t.same(strip(c.instantLocal), { ok: true, utc: '2026-03-01T13:00:00.000Z' }, 'no offset: read in the greenhouse zone');
  t.same(strip(c.instantOffset), { ok: true, utc: '2026-03-01T08:30:00.000Z' }, 'an offset is taken as given');
  t.equal(c.springGap.ok, false, 'a wall time in the spring gap does not exist');
  t.same(
    strip(c.autumnRepeat),
    { ok: true, utc: '2026-10-25T00:30:00.000Z' },
    'the repeated autumn hour reads as its first (summer-time) instant',
  );
  t.same(strip(c.dateOnly), { ok: true, utc: '2026-06-01T04:00:00.000Z' });
  t.equal(c.garbage.ok, false);
  t.equal(c.present, '2026-07-01T12:00:00+02:00');
  t.equal(c.sundayNight, '2026-W10', 'Sunday 23:30 UTC is Monday in Amsterdam');
  t.equal(c.sundayNightUtc, '2026-W09');
});

t.test('answers do not depend on the process time zone', async (t) => {
  const file = fileURLToPath(new URL('./cases.ts', import.meta.url));
  const expected = JSON.stringify(strip(timeCases()));
  for (const tz of ['UTC', 'America/New_York', 'Asia/Kolkata']) {
    const out = execFileSync(process.execPath, ['--import', 'tsx', file], { env: { ...process.env, TZ: tz }, encoding: 'utf8' });
    t.equal(out, expected, `TZ=${tz}`);
  }
});

t.test('a week worked out once is the same the next time, and cannot be changed by whoever got it', async (t) => {
  for (const text of ['2026-W07', '2026-02-11', '2026-W53', '2026-W54', '2026-02-30', 'yesterday']) {
    const first = parseWeek(text);
    t.same(parseWeek(text), first, `${text}: the same answer again`);
  }
  t.equal(parseWeek('2026-W54'), null, 'an impossible week stays refused');
  const week = parseWeek('2026-W10')!;
  t.throws(() => {
    (week as { label: string }).label = '1999-W01';
  }, 'a week handed out is frozen');
  t.equal(parseWeek('2026-W10')!.label, '2026-W10', 'so the next caller gets the week itself');
  t.equal(weekOfDate('2026-03-04')!.label, '2026-W10', 'a date read as a week and as a date agree');
  t.equal(weekOfDate('2026-W10'), null, 'a label is no date');
});
