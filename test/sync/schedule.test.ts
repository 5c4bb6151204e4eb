// The `sync` schedule (src/sync/schedule.ts): listed by GET /api/schedules on every instance, on
// only where there is an upstream, and a run is a real round against a real upstream on loopback.
// The box's clock is settable and the scheduler is ticked by hand, so nothing waits on real time.
import t from 'tap';
import { createServer } from 'node:net';
import { SettableClock } from '../../src/clock.js';
import { schedulerOf } from '../../src/schedules/scheduler.js';
import { createTree, type TestServer } from '../helpers/server.js';
import { call, startBox, startUpstream, syncOnce } from './helpers.js';

async function listedSync(s: TestServer) {
  const r = await s.request('GET', '/api/schedules', { admin: true });
  if (r.status !== 200) throw new Error(`GET /api/schedules: ${r.status} ${r.text}`);
  return r.body.items.find((i: { name: string }) => i.name === 'sync');
}

/** A loopback port nothing listens on: a link that is down. */
async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address() as { port: number };
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

t.test('an instance without an upstream lists the sync schedule as off, and why', async (t) => {
  const up = await startUpstream(t);
  const item = await listedSync(up);
  t.match(item, { name: 'sync', when: '0 * * * *', enabled: false });
  t.match(JSON.stringify(item), /UPSTREAM_URL is not set/, 'the reason names the setting');
});

t.test('on a box with an upstream it runs a round at the top of the hour and shows what moved', async (t) => {
  const up = await startUpstream(t);
  const tree = await createTree(up);
  const clock = new SettableClock('2026-06-01T10:20:00Z');
  const box = await startBox(t, up.base, tree.adminKey, { scheduleTimeZone: 'Europe/Amsterdam' }, { clock });
  t.ok((await syncOnce(box)).ok, 'first contact');
  const scheduler = schedulerOf(box.app.services);

  const item = await listedSync(box);
  t.match(item, { enabled: true, next_run_at: '2026-06-01T11:00:00.000Z', last_run: null });

  // Written upstream, so no write on the box starts a round of its own: what arrives, the schedule fetched.
  await call(up, 'POST', `${tree.cyclePath}/harvests`, tree.adminKey, { week: '2026-W22', kg: 12.5 });
  t.equal((await call(box, 'GET', `${tree.cyclePath}/harvests`, tree.adminKey)).items.length, 0, 'not on the box yet');
  clock.set('2026-06-01T10:59:59Z');
  await scheduler.tick();
  t.equal((await listedSync(box)).last_run, null, 'not before its time');
  clock.set('2026-06-01T11:00:00Z');
  await scheduler.tick();
  const after = await listedSync(box);
  t.match(after.last_run, { outcome: 'ok', started_at: '2026-06-01T11:00:00.000Z', error: null });
  t.equal(after.last_run.result.pulled, 1, 'the run pulled the harvest');
  t.equal(after.next_run_at, '2026-06-01T12:00:00.000Z');
  const there = (await call(box, 'GET', `${tree.cyclePath}/harvests`, tree.adminKey)).items;
  t.same(
    there.map((h: { kg: number }) => h.kg),
    [12.5],
    'and it is on the box',
  );
});

t.test('a run while the upstream is unreachable is a failed run with the reason', async (t) => {
  const port = await closedPort();
  const clock = new SettableClock('2026-06-01T10:20:00Z');
  const box = await startBox(t, `http://127.0.0.1:${port}`, 'cw_unreachable', {}, { clock });
  const scheduler = schedulerOf(box.app.services);
  t.equal((await listedSync(box)).enabled, true, 'on: the box has an upstream, reachable or not');
  clock.set('2026-06-01T11:00:00Z');
  await scheduler.tick();
  const item = await listedSync(box);
  t.equal(item.last_run.outcome, 'failed');
  t.match(item.last_run.error, /^offline: /, 'the error says the link is down');
});

t.test('SCHEDULE_SYNC moves it (a night-only link) or turns it off', async (t) => {
  const up = await startUpstream(t);
  const tree = await createTree(up);
  const night = await startBox(t, up.base, tree.adminKey, { schedules: { sync: '0 2 * * *' } });
  t.match(await listedSync(night), { enabled: true, when: '0 2 * * *' });
  const off = await startBox(t, up.base, tree.adminKey, { schedules: { sync: 'off' } });
  t.match(await listedSync(off), { enabled: false });
});
