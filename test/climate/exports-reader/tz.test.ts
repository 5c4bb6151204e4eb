// The result must not depend on the process time zone: the same files read under TZ=UTC and
// TZ=America/New_York (whose own DST dates differ from Europe's) give the same instants.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fixtures, repoRoot } from '../../fixtures/climate/paths.js';

function probe(tz: string): { tz: string; offsetNow: number; out: { name: string; first_rows: { at: string }[] }[] } {
  const stdout = execFileSync(process.execPath, ['--import', 'tsx', path.join(fixtures, 'tz-probe.ts')], {
    cwd: repoRoot,
    env: { ...process.env, TZ: tz },
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(stdout);
}

t.test('same instants under TZ=UTC and TZ=America/New_York', async (t) => {
  const utc = probe('UTC');
  const ny = probe('America/New_York');
  t.equal(utc.tz, 'UTC');
  t.equal(ny.tz, 'America/New_York');
  t.not(utc.offsetNow, ny.offsetNow, 'the two processes really run in different zones');
  t.same(ny.out, utc.out);
  const autumn = utc.out.find((o) => o.name === '30mhz-autumn.csv')!;
  t.equal(autumn.first_rows[6]!.at, '2020-10-25T02:00:00+01:00', 'the repeated hour, second pass, in winter time');
});
