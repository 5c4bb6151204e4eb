import { withDeadline } from '../../helpers/wait.js';
import t from 'tap';
import { mkdirSync, mkdtempSync, writeFileSync, copyFileSync, rmSync, symlinkSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { DateTime } from 'luxon';
import { startServer, createTree, dbRows, type TestServer } from '../../helpers/server.js';
import { startClimateWatcher, currentCycle, type ClimateWatcher, type Outcome } from '../../../src/climate/watch/watcher.js';
import { climateCsv, form } from '../imports/helpers.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function outcomes(w: ClimateWatcher) {
  const seen: { file: string; outcome: Outcome }[] = [];
  w.events.on('outcome', (file: string, outcome: Outcome) => seen.push({ file: path.basename(file), outcome }));
  return {
    seen,
    /** Waits until `name` has been handled `times` times. */
    async waitFor(name: string, times = 1, timeoutMs = 15_000) {
      const until = Date.now() + timeoutMs;
      while (seen.filter((x) => x.file === name).length < times) {
        if (Date.now() > until) throw new Error(`no outcome for ${name} after ${timeoutMs} ms; seen ${JSON.stringify(seen)}`);
        await sleep(50);
      }
      return seen.filter((x) => x.file === name)[times - 1]!.outcome;
    },
  };
}

/** Writes a file in pieces with pauses, as a climate computer writing over a share does. */
async function writeInPieces(file: string, content: string, pieces = 4, pauseMs = 150) {
  const fh = await open(file, 'w');
  const size = Math.ceil(content.length / pieces);
  for (let i = 0; i < content.length; i += size) {
    await fh.write(content.slice(i, i + size));
    await fh.sync();
    await sleep(pauseMs);
  }
  await fh.close();
}

t.test('the watched folder', async (t) => {
  const s = await startServer(t);
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-watch-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const { db, store, clock, log } = s.app.services;
  const deps = { db, store, clock };
  const start = () => startClimateWatcher({ dir, deps, log, limitBytes: 1024 * 1024, stabilityMs: 500, pollMs: 50 });
  const tree = await createTree(s, { timeZone: 'Europe/Amsterdam' });
  const saved = await s.request('POST', `${tree.cyclePath}/climate/file`, {
    key: tree.adminKey,
    raw: form(climateCsv(12), 'first.csv', { remember: 'true' }),
  });
  t.equal(saved.status, 200);
  const imports = () =>
    dbRows<any>(
      s,
      'SELECT id, kind, status, failure_reason, rows_read, file_name, actor FROM climate_imports WHERE cycle_id = ? ORDER BY created_at, id',
      tree.cycleId,
    );
  const ghDir = path.join(dir, tree.greenhouseId);
  mkdirSync(ghDir);

  let w = start();
  let o = outcomes(w);
  await w.ready;

  t.test('a file written in pieces is imported once, whole', async (t) => {
    const content = climateCsv(48, { start: '2026-03-03T00:00' });
    await writeInPieces(path.join(ghDir, 'export-a.csv'), content);
    const outcome = await o.waitFor('export-a.csv');
    t.equal(outcome.kind, 'imported', JSON.stringify(outcome));
    const rows = (await imports()).filter((i) => i.file_name === 'export-a.csv');
    t.equal(rows.length, 1, 'one import, not one per piece');
    t.match(rows[0], { kind: 'watch', status: 'done', rows_read: 48, actor: 'watcher' });
    const temps = await s.request('GET', `${tree.cyclePath}/climate?metric=air_temperature&from=2026-03-03T00:00`, { key: tree.adminKey });
    t.equal(temps.body.total, 4, 'four hours of the file');
  });

  t.test('the same content under another name is not imported again', async (t) => {
    const before = (await imports()).length;
    copyFileSync(path.join(ghDir, 'export-a.csv'), path.join(ghDir, 'copy-of-a.csv'));
    const outcome = await o.waitFor('copy-of-a.csv');
    t.same(outcome, { kind: 'skipped', reason: 'content imported before' });
    t.equal((await imports()).length, before);
  });

  t.test('a file that no longer fits the saved choices becomes a failed import', async (t) => {
    writeFileSync(path.join(ghDir, 'other.csv'), climateCsv(12, { header: 'time,Temperature (°C),RH (%),CO2 (ppm)' }));
    const outcome = await o.waitFor('other.csv');
    t.equal(outcome.kind, 'failed');
    const row = (await imports()).find((i) => i.file_name === 'other.csv');
    t.match(row, { status: 'failed', kind: 'watch' });
    t.match(row.failure_reason, /saved column choices/);
    const list = await s.request('GET', `${tree.cyclePath}/climate/imports`, { key: tree.adminKey });
    t.equal(list.body.items.find((i: any) => i.file_name === 'other.csv').status, 'failed', 'visible in the history');
  });

  t.test('unknown greenhouse folders and stray files are logged, not imported', async (t) => {
    const before = (await imports()).length;
    mkdirSync(path.join(dir, randomUUID()));
    const stray = path.join(dir, randomUUID());
    mkdirSync(stray, { recursive: true });
    writeFileSync(path.join(stray, 'lost.csv'), climateCsv(3));
    writeFileSync(path.join(dir, 'top-level.csv'), climateCsv(3));
    t.same(await o.waitFor('lost.csv'), { kind: 'skipped', reason: 'unknown greenhouse folder' });
    t.same(await o.waitFor('top-level.csv'), { kind: 'skipped', reason: 'not in a greenhouse folder' });
    t.equal((await imports()).length, before);
    const lines = (s as TestServer & { logLines: string[] }).logLines;
    t.ok(
      lines.some((l) => l.includes('folder names no greenhouse')),
      'logged',
    );
  });

  t.test('a link in a greenhouse folder is not followed', async (t) => {
    const before = (await imports()).length;
    const outside = path.join(mkdtempSync(path.join(tmpdir(), 'cropwalk-outside-')), 'secret.csv');
    writeFileSync(outside, climateCsv(24, { start: '2026-06-01T00:00' }));
    symlinkSync(outside, path.join(ghDir, 'link.csv'));
    t.same(await o.waitFor('link.csv'), { kind: 'skipped', reason: 'not a plain file' });
    t.equal((await imports()).length, before);
    rmSync(path.dirname(outside), { recursive: true, force: true });
  });

  t.test('a greenhouse without saved choices: failed import with the reason, recorded once', async (t) => {
    const other = await createTree(s);
    const otherDir = path.join(dir, other.greenhouseId);
    mkdirSync(otherDir);
    const file = path.join(otherDir, 'x.csv');
    writeFileSync(file, climateCsv(6));
    const first = await o.waitFor('x.csv');
    t.equal(first.kind, 'failed');
    t.match((first as any).reason, /no saved column choices/);
    writeFileSync(file, climateCsv(6));
    const second = await o.waitFor('x.csv', 2);
    t.equal(second.kind, 'skipped', 'the same content failing for the same reason is not recorded twice');
    const rows = await dbRows(s, 'SELECT status FROM climate_imports WHERE cycle_id = ?', other.cycleId);
    t.same(rows, [{ status: 'failed' }]);
  });

  t.test('after a restart: what arrived meanwhile is imported, nothing twice', async (t) => {
    await w.close();
    const before = await imports();
    writeFileSync(path.join(ghDir, 'while-down.csv'), climateCsv(24, { start: '2026-03-05T00:00' }));
    w = start();
    o = outcomes(w);
    const outcome = await o.waitFor('while-down.csv');
    t.equal(outcome.kind, 'imported');
    await o.waitFor('export-a.csv');
    await o.waitFor('copy-of-a.csv');
    await o.waitFor('other.csv');
    await w.idle();
    const after = await imports();
    t.equal(after.length, before.length + 1, 'only the new file');
    t.same(
      o.seen.filter((x) => x.outcome.kind === 'imported').map((x) => x.file),
      ['while-down.csv'],
    );
    await w.close();
  });
});

t.test('the current crop cycle: latest start that has not ended', async (t) => {
  const s = await startServer(t);
  const tree = await createTree(s, { timeZone: 'Pacific/Auckland', startedOn: '2026-01-05' });
  const { db, store, clock } = s.app.services;
  const deps = { db, store, clock };
  const rows = `${tree.greenhousePath}/rows/${tree.rowId}/cycles`;
  const ended = await s.request('POST', rows, {
    key: tree.adminKey,
    body: { name: 'ended', started_on: '2026-02-01', ended_on: '2026-06-30' },
  });
  t.equal(ended.status, 201);
  const gh = await db.selectFrom('greenhouses').selectAll().where('id', '=', tree.greenhouseId).executeTakeFirstOrThrow();
  t.equal((await currentCycle(deps, gh, DateTime.fromISO('2026-07-10T00:00:00Z')))!.id, tree.cycleId, 'the ended one is passed over');
  t.equal(
    (await currentCycle(deps, gh, DateTime.fromISO('2026-05-10T00:00:00Z')))!.id,
    ended.body.cycle_id,
    'before its end it is current',
  );
  // 2026-06-30T13:00Z is already 1 July in Auckland: the cycle ended yesterday there.
  t.equal((await currentCycle(deps, gh, DateTime.fromISO('2026-06-30T13:00:00Z')))!.id, tree.cycleId, "today is the greenhouse's today");
  t.equal((await currentCycle(deps, gh, DateTime.fromISO('2026-06-30T11:00:00Z')))!.id, ended.body.cycle_id);
});

t.test('the feature starts the watcher from CLIMATE_WATCH_DIR and stops it on close', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-watch-feature-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const s = await startServer(t, { climateWatchDir: dir });
  const tree = await createTree(s);
  await s.request('POST', `${tree.cyclePath}/climate/file`, {
    key: tree.adminKey,
    raw: form(climateCsv(12), 'first.csv', { remember: 'true' }),
  });
  mkdirSync(path.join(dir, tree.greenhouseId));
  writeFileSync(path.join(dir, tree.greenhouseId, 'drop.csv'), climateCsv(24, { start: '2026-04-01T00:00' }));
  const until = Date.now() + 20_000;
  let list: any;
  do {
    await sleep(200);
    list = await s.request('GET', `${tree.cyclePath}/climate/imports`, { key: tree.adminKey });
  } while (list.body.total < 2 && Date.now() < until);
  t.equal(list.body.items[0].file_name, 'drop.csv');
  t.equal(list.body.items[0].kind, 'watch');
  const health = await s.request('GET', '/api/health');
  t.match(health.body.checks.climate_watch, { ok: true, dir, imported: 1 });
  // The server stops its watcher on close: a close that waited on a watcher still running would never end.
  await withDeadline('closing the server with its watcher running', s.close(), 15_000);
});
