import t from 'tap';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { startServer, createTree } from '../helpers/server.js';
import { irrigationInstant } from '../../src/records/irrigation/commands.js';
import { presentIrrigation } from '../../src/records/irrigation/presenters.js';
import { harvestWeek } from '../../src/records/harvests/commands.js';
import { fruitMassWeek } from '../../src/records/fruit-mass/commands.js';

// tap's typings want an Error as the pattern; the thrown HttpProblem is matched on its status.
const unprocessable = { code: 'validation_failed' } as unknown as Error;

/**
 * Record times must depend on the greenhouse zone only, never on the zone the
 * process runs in. This file runs its checks in this process, and (unless it
 * is such a child) again in children with TZ=UTC and TZ=America/New_York.
 */
const CHILD = process.env.RECORDS_TZ_CHILD === '1';

t.test(`record times in process zone ${process.env.TZ ?? '(unset)'}`, async (t) => {
  t.equal(irrigationInstant('2026-03-01T07:30', 'Europe/Amsterdam'), '2026-03-01T06:30:00.000Z');
  t.equal(irrigationInstant('2026-07-01T07:30', 'Europe/Amsterdam'), '2026-07-01T05:30:00.000Z');
  t.equal(irrigationInstant('2026-10-25T02:30', 'Europe/Amsterdam'), '2026-10-25T00:30:00.000Z', 'the repeated hour: the first instant');
  t.equal(irrigationInstant('2026-10-25T02:30+01:00', 'Europe/Amsterdam'), '2026-10-25T01:30:00.000Z', 'an offset names the second');
  t.equal(irrigationInstant('2026-03-08T02:30:00-05:00', 'America/New_York'), '2026-03-08T07:30:00.000Z', 'an offset wins over the zone');
  t.throws(() => irrigationInstant('2026-03-29T02:30', 'Europe/Amsterdam'), unprocessable);
  t.throws(() => irrigationInstant('2026-03-08T02:30', 'America/New_York'), unprocessable, 'New York gap');
  t.doesNotThrow(() => irrigationInstant('2026-03-29T02:30', 'America/New_York'), 'not a gap in New York');

  const stored = { at: '2026-03-29T00:30:00.000Z' } as any;
  t.equal(presentIrrigation(stored, 'Europe/Amsterdam').at, '2026-03-29T01:30:00+01:00');
  t.equal(presentIrrigation({ at: '2026-03-29T01:30:00.000Z' } as any, 'Europe/Amsterdam').at, '2026-03-29T03:30:00+02:00');

  t.equal(harvestWeek(undefined, '2026-03-29').label, '2026-W13', 'a local date names its week, whatever the process zone');
  t.equal(harvestWeek(undefined, '2026-03-30').label, '2026-W14');

  // Sunday 23:30 UTC: already Monday (next week) in Amsterdam, still Sunday in New York.
  t.equal(fruitMassWeek(undefined, 'Europe/Amsterdam', '2026-02-15T23:30:00Z').label, '2026-W08');
  t.equal(fruitMassWeek(undefined, 'America/New_York', '2026-02-15T23:30:00Z').label, '2026-W07');
  t.equal(fruitMassWeek(undefined, 'Pacific/Kiritimati', '2026-02-15T09:59:00Z').label, '2026-W07');
  t.equal(fruitMassWeek(undefined, 'Pacific/Kiritimati', '2026-02-15T10:00:00Z').label, '2026-W08', 'UTC+14');

  const s = await startServer(t);
  const tree = await createTree(s, { timeZone: 'Europe/Amsterdam' });
  const r = await s.request('POST', `${tree.cyclePath}/irrigation`, { key: tree.adminKey, body: { at: '2026-03-29T01:59', volume_l: 10 } });
  t.equal(r.body.at, '2026-03-29T01:59:00+01:00');
  const r2 = await s.request('POST', `${tree.cyclePath}/irrigation`, {
    key: tree.adminKey,
    body: { at: '2026-03-29T03:00', volume_l: 10 },
  });
  t.equal(r2.body.at, '2026-03-29T03:00:00+02:00');
  const gap = await s.request('POST', `${tree.cyclePath}/irrigation`, {
    key: tree.adminKey,
    body: { at: '2026-03-29T02:30', volume_l: 10 },
  });
  t.equal(gap.status, 422);
  const list = await s.request('GET', `${tree.cyclePath}/irrigation`, { key: tree.adminKey });
  t.same(
    list.body.items.map((e: any) => e.at),
    ['2026-03-29T03:00:00+02:00', '2026-03-29T01:59:00+01:00'],
    'one minute of real time apart, newest first',
  );
  const h = await s.request('POST', `${tree.cyclePath}/harvests`, { key: tree.adminKey, body: { harvested_on: '2026-03-29', kg: 1 } });
  t.equal(h.body.week, '2026-W13');
});

if (!CHILD) {
  const self = fileURLToPath(import.meta.url);
  for (const zone of ['UTC', 'America/New_York']) {
    t.test(`the same checks under TZ=${zone}`, async (t) => {
      const child = spawnSync(process.execPath, ['--import', 'tsx', self], {
        env: { ...process.env, TZ: zone, RECORDS_TZ_CHILD: '1' },
        encoding: 'utf8',
        timeout: 120_000,
      });
      t.equal(child.status, 0, `child under TZ=${zone} passed:\n${child.stdout.slice(-3000)}\n${child.stderr.slice(-2000)}`);
      t.match(child.stdout, new RegExp(`record times in process zone ${zone.replace('/', '\\/')}`));
    });
  }
}
