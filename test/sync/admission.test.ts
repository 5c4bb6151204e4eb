// A busy upstream (src/sync/admission.ts): past SYNC_PUSH_AT_ONCE batches applying and
// SYNC_PUSH_WAITING waiting, a push is answered 503 upstream_busy with Retry-After and nothing
// of it is applied; a real box waits that long and sends the batch again in the same round.
import t from 'tap';
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { gzipSync } from 'node:zlib';
import { Busy } from '../../src/errors.js';
import { loadConfig, pushAdmissionFor } from '../../src/config.js';
import { PushGate, pushGateOf } from '../../src/sync/admission.js';
import { retryAfterMs } from '../../src/sync/client.js';
import { createTree } from '../helpers/server.js';
import { call, digest, startBox, startUpstream, syncOnce, syncUntilQuiet } from './helpers.js';

/** A promise and the function that settles it. */
function held() {
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  return { done, release };
}

t.test('the gate: atOnce + waiting are let in, the rest turned away; atOnce apply at once, in order', async (t) => {
  const gate = new PushGate(2, 1);
  const releases = [gate.admit(), gate.admit(), gate.admit()];
  t.equal(gate.inFlight, 3);
  const turned = (() => {
    try {
      gate.admit();
    } catch (err) {
      return err;
    }
  })();
  t.ok(turned instanceof Busy, 'a fourth is turned away');
  t.equal((turned as Busy).code, 'upstream_busy');
  t.ok((turned as Busy).retryAfterSeconds >= 1 && (turned as Busy).retryAfterSeconds <= 60, 'with a wait of 1 to 60 s');
  t.equal(gate.turnedAway, 1);
  t.equal(gate.inFlight, 3, 'a push turned away holds no place');
  releases[0]!();
  releases[0]!();
  t.equal(gate.inFlight, 2, 'a place is freed once, however often its release is called');
  const again = gate.admit();
  t.equal(gate.inFlight, 3, 'and taken by the next');
  for (const r of [...releases, again]) r();
  t.equal(gate.inFlight, 0);

  const order: string[] = [];
  const holds = [held(), held(), held()];
  const runs = holds.map((h, i) =>
    gate.run(async () => {
      order.push(`start ${i}`);
      await h.done;
      return i;
    }),
  );
  await new Promise((r) => setImmediate(r));
  t.same(order, ['start 0', 'start 1'], 'two apply at once; the third waits');
  holds[0]!.release();
  t.equal(await runs[0], 0);
  await new Promise((r) => setImmediate(r));
  t.same(order, ['start 0', 'start 1', 'start 2'], 'the waiting one starts when a place frees');
  holds[1]!.release();
  holds[2]!.release();
  t.same(await Promise.all(runs), [0, 1, 2]);

  // A failing batch frees its place too.
  const solo = new PushGate(1, 0);
  await t.rejects(
    solo.run(async () => {
      throw new Error('refused');
    }),
    /refused/,
  );
  t.equal(await solo.run(async () => 'next'), 'next');
});

t.test('Retry-After is read as seconds or as an HTTP date', async (t) => {
  const now = Date.parse('2026-11-28T12:00:00Z');
  t.equal(retryAfterMs('3', now), 3000);
  t.equal(retryAfterMs(' 0 ', now), 0);
  t.equal(retryAfterMs('Sat, 28 Nov 2026 12:00:05 GMT', now), 5000);
  t.equal(retryAfterMs('Sat, 28 Nov 2026 11:00:00 GMT', now), 0, 'a date gone by: now');
  t.equal(retryAfterMs(undefined, now), null);
  t.equal(retryAfterMs('soon', now), null);
  t.equal(retryAfterMs('-1', now), null);
});

t.test('SYNC_PUSH_AT_ONCE and SYNC_PUSH_WAITING are whole numbers, at least one at once', async (t) => {
  const { atOnce, waiting } = pushAdmissionFor(availableParallelism());
  t.equal(loadConfig({ DATA_DIR: t.testdirName }).syncPushAtOnce, atOnce, 'default: by the cores');
  t.equal(loadConfig({ DATA_DIR: t.testdirName }).syncPushWaiting, waiting);
  t.equal(loadConfig({ DATA_DIR: t.testdirName, SYNC_PUSH_AT_ONCE: '2', SYNC_PUSH_WAITING: '0' }).syncPushWaiting, 0);
  t.throws(() => loadConfig({ DATA_DIR: t.testdirName, SYNC_PUSH_AT_ONCE: '0' }), /SYNC_PUSH_AT_ONCE must be a whole number from 1/);
  t.throws(() => loadConfig({ DATA_DIR: t.testdirName, SYNC_PUSH_WAITING: '1.5' }), /SYNC_PUSH_WAITING must be a whole number/);
});

t.test('the default admission: half the cores at once, from one to eight, as many waiting', async (t) => {
  t.same(pushAdmissionFor(1), { atOnce: 1, waiting: 1 }, 'one core');
  t.same(pushAdmissionFor(2), { atOnce: 1, waiting: 1 }, 'two cores: the database has the other');
  t.same(pushAdmissionFor(3), { atOnce: 1, waiting: 1 });
  t.same(pushAdmissionFor(4), { atOnce: 2, waiting: 2 });
  t.same(pushAdmissionFor(8), { atOnce: 4, waiting: 4 });
  t.same(pushAdmissionFor(16), { atOnce: 8, waiting: 8 });
  t.same(pushAdmissionFor(64), { atOnce: 8, waiting: 8 }, 'under the pool of ten connections');
});

t.test('a full upstream answers 503 upstream_busy with Retry-After, applies nothing, and the box sends again', async (t) => {
  const up = await startUpstream(t, { syncPushAtOnce: 1, syncPushWaiting: 0 });
  const tree = await createTree(up);
  const key = tree.adminKey;
  const box = await startBox(t, up.base, key);
  await syncUntilQuiet([box]);
  for (let i = 0; i < 3; i++) await call(box, 'POST', `${tree.cyclePath}/harvests`, key, { week: '2026-W10', kg: i + 1 });

  // Another box's batch holds the only place.
  const gate = pushGateOf(up.app.services);
  const other = gate.admit();
  const before = await digest(up, key);

  // Over the wire: the answer a box gets.
  const res = await fetch(`${up.base}/api/sync/v1/push`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json', 'content-encoding': 'gzip' },
    body: gzipSync(JSON.stringify({ changes: [] })),
  });
  t.equal(res.status, 503);
  t.match(res.headers.get('content-type'), /application\/problem\+json/);
  t.match(res.headers.get('retry-after'), /^\d+$/, 'Retry-After in seconds');
  const problem = (await res.json()) as Record<string, unknown>;
  t.match(problem, { status: 503, code: 'upstream_busy', detail: /nothing of this one was read or applied/, retry_after_seconds: Number });
  t.equal(String(problem.retry_after_seconds), res.headers.get('retry-after'));

  // A big batch is turned away as cleanly: the answer comes, its body unread (it would not even unzip).
  const big = await fetch(`${up.base}/api/sync/v1/push`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json', 'content-encoding': 'gzip' },
    body: randomBytes(3 * 1024 * 1024),
  });
  t.equal(big.status, 503, 'a 3 MiB body is answered busy');
  t.match(await big.json(), { code: 'upstream_busy' });

  // The box's round meets the same answer, waits, and is let in once the place frees.
  const turnedBefore = gate.turnedAway;
  const round = syncOnce(box);
  const deadline = Date.now() + 30_000;
  while (gate.turnedAway === turnedBefore) {
    if (Date.now() > deadline) throw new Error('the box never reached the full gate');
    await new Promise((r) => setTimeout(r, 20));
  }
  t.same(await digest(up, key), before, 'nothing of a turned-away batch is applied');
  other();
  const r = (await round) as Awaited<ReturnType<typeof syncOnce>> & { busy_waits: number };
  t.match(r, { ok: true, state: 'idle', pushed: 3, refused: 0 }, 'the round ends with the batch acknowledged');
  t.ok(r.busy_waits >= 1, 'after waiting on the busy upstream');
  const kgs = (await call(up, 'GET', `${tree.cyclePath}/harvests`, key)).items.map((h: { kg: number }) => h.kg).sort();
  t.same(kgs, [1, 2, 3], 'the upstream has every harvest, once');
  const status = await call(box, 'GET', '/api/sync', key);
  t.match(status, { state: 'idle' }, 'a busy upstream is not an offline one: no backoff left behind');
  t.equal(gate.inFlight, 0, 'every push let in gave its place back');
});
