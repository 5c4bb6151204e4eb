import t from 'tap';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { dayCases } from './day-cases.js';

t.test('local days across clock changes', async (t) => {
  const c = dayCases();
  t.equal(c.monday, '2020-12-28');
  t.same(c.amsterdamSpring, [24, 23, 24], 'the day summer time starts has 23 hours');
  t.same(c.amsterdamAutumn, [24, 25, 24], 'the day it ends has 25');
  t.same(c.aucklandSpring, [24, 23, 24], 'and on the other side of the world in September');
  t.same(c.cursor, ['2026-03-28', '2026-03-30']);
  t.equal(c.instant, '2026-07-01', 'UTC 23:30 is the next morning in India');
  t.equal(c.sun, 61, 'the noon sun at Amsterdam on midsummer');
});

t.test('answers do not depend on the process time zone', async (t) => {
  const file = fileURLToPath(new URL('./day-cases.ts', import.meta.url));
  const expected = JSON.stringify(dayCases());
  for (const tz of ['UTC', 'America/New_York', 'Pacific/Auckland']) {
    const out = execFileSync(process.execPath, ['--import', 'tsx', file], { env: { ...process.env, TZ: tz }, encoding: 'utf8' });
    t.equal(out, expected, `TZ=${tz}`);
  }
});
