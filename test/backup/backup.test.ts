import t from 'tap';
import { sqliteOf } from '../helpers/postgres.js';
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import SQLite from 'better-sqlite3';
import { Kysely, SqliteDialect } from 'kysely';
import { SettableClock } from '../../src/clock.js';
import { backupDatabase, checkBackup, listBackups, manifestOf, sha256Of } from '../../src/backup/backup.js';
import { migrate, migrationNames } from '../../src/db/database.js';
import { schedulerOf } from '../../src/schedules/scheduler.js';
import { createTree, startServer } from '../helpers/server.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const CLI = path.join(ROOT, 'scripts', 'cropwalk.mjs');

function cropwalk(args: string[], env: Record<string, string>): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, out, err });
    });
  });
}

const harvestRows = (file: string) => {
  const db = new SQLite(file, { readonly: true });
  try {
    const rows = db.prepare('select id, kg, week, version from harvests order by id').all() as { id: string; kg: number }[];
    const logged = db.prepare("select count(*) as n from change_log where entity = 'harvests' and op = 'insert'").get() as { n: number };
    return { rows, logged: logged.n };
  } finally {
    db.close();
  }
};

t.test('backups taken during a stream of writes are consistent, and restore brings one back', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cropwalk-backup-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const backupDir = path.join(dataDir, 'backups');
  let s = await startServer(t, { dataDir, backupKeep: 5 });
  const tree = await createTree(s);

  // A stream of harvests over HTTP, while one backup is taken in the service's process (the
  // nightly schedule's way) and one by the `cropwalk backup` command in another process.
  let written = 0;
  let stop = false;
  const writer = (async () => {
    for (let i = 0; i < 400 && !stop; i++) {
      const r = await s.request('POST', `${tree.cyclePath}/harvests`, {
        key: tree.adminKey,
        body: { week: '2026-W10', kg: 1 + (i % 17) / 10 },
      });
      if (r.status !== 201) throw new Error(`harvest ${i}: ${r.status} ${r.text}`);
      written++;
    }
  })();
  await waitFor(() => written >= 40, 'the first writes');
  const atStart = written;
  const inService = await backupDatabase(sqliteOf(s.app.services), {
    dir: backupDir,
    keep: 5,
    now: Date.parse('2026-03-02T03:15:00Z'),
    appVersion: 'test',
  });
  const byCli = await cropwalk(['backup'], { DATA_DIR: dataDir, BACKUP_DIR: backupDir, BACKUP_KEEP: '5' });
  t.equal(byCli.code, 0, `cropwalk backup: ${byCli.err}`);
  t.match(byCli.out, /backed up to .*cropwalk-\d{8}T\d{6}Z\.sqlite .*integrity ok/);
  stop = true;
  await writer;
  const atEnd = written;

  const backups = await listBackups(backupDir);
  t.equal(backups.length, 2, 'two backups, each with its manifest');
  for (const b of backups) {
    t.equal(b.size_bytes, readFileSync(b.path).length, `${b.file}: manifest size`);
    t.equal(b.sha256, await sha256Of(b.path), `${b.file}: manifest sha256`);
    t.equal(b.schema_version, migrationNames().at(-1));
    t.equal(b.integrity, 'ok');
    const { rows, logged } = harvestRows(b.path);
    t.ok(rows.length >= atStart && rows.length <= atEnd, `${b.file}: ${rows.length} harvests, between ${atStart} and ${atEnd}`);
    t.equal(logged, rows.length, `${b.file}: every harvest with its change-log entry (one transaction, never half of it)`);
  }
  const chosen = backups.find((b) => b.file === inService.file)!;
  const expected = harvestRows(chosen.path).rows;

  // Restore refuses while the service runs, and leaves the database alone.
  const refused = await cropwalk(['restore', chosen.path, '--yes'], { DATA_DIR: dataDir });
  t.equal(refused.code, 1);
  t.match(refused.err, /the service is running \(pid \d+\).*stop it first/);
  t.equal((await s.request('GET', `${tree.cyclePath}/harvests?limit=500`, { key: tree.adminKey })).body.total, atEnd, 'unchanged');

  await s.close();
  const restored = await cropwalk(['restore', chosen.path, '--yes'], { DATA_DIR: dataDir });
  t.equal(restored.code, 0, `cropwalk restore: ${restored.err}`);
  t.match(restored.out, /restored .* manifest checked/);
  const aside = readdirSync(path.join(dataDir, 'replaced'));
  t.equal(aside.length, 1, 'the database it replaced is kept aside');
  t.equal(harvestRows(path.join(dataDir, 'replaced', aside[0]!)).rows.length, atEnd, 'whole, with its last writes');
  const nodeOf = (file: string) => {
    const db = new SQLite(file, { readonly: true });
    try {
      return (db.prepare("select value from meta where key = 'node_id'").get() as { value: string } | undefined)?.value;
    } finally {
      db.close();
    }
  };
  const before = nodeOf(path.join(dataDir, 'replaced', aside[0]!));
  const now = nodeOf(path.join(dataDir, 'cropwalk.sqlite'));
  t.ok(before && now && now !== before, 'the restored box has a node id of its own (a new site to sync: docs/sync.md)');

  s = await startServer(t, { dataDir });
  const after = await s.request('GET', `${tree.cyclePath}/harvests?limit=500`, { key: tree.adminKey });
  t.equal(after.status, 200);
  t.same(
    after.body.items.map((h: { harvest_id: string; kg: number }) => [h.harvest_id, h.kg]).sort(),
    expected.map((h) => [h.id, h.kg]).sort(),
    'the service serves exactly the backup',
  );
  await s.close();
});

t.test('restore refuses what is not a good backup, and changes nothing', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cropwalk-backup-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const s = await startServer(t, { dataDir });
  await createTree(s);
  const good = await backupDatabase(sqliteOf(s.app.services), {
    dir: path.join(dataDir, 'b'),
    keep: 3,
    now: Date.parse('2026-04-01T03:15:00Z'),
    appVersion: 't',
  });
  await s.close();
  const goodPath = path.join(dataDir, 'b', good.file);
  const before = readFileSync(path.join(dataDir, 'cropwalk.sqlite'));

  const work = path.join(dataDir, 'bad');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  // A flipped byte: the manifest's sha256 no longer matches.
  const flipped = path.join(work, good.file);
  copyFileSync(goodPath, flipped);
  copyFileSync(manifestOf(goodPath), manifestOf(flipped));
  const bytes = readFileSync(flipped);
  bytes[bytes.length - 100] ^= 0xff;
  writeFileSync(flipped, bytes);
  // Cut short, without a manifest.
  const cut = path.join(work, 'cut.sqlite');
  writeFileSync(cut, readFileSync(goodPath).subarray(0, 4096 * 3));
  // Not a database at all.
  const text = path.join(work, 'notes.txt');
  writeFileSync(text, 'not a database\n'.repeat(100));
  // An SQLite file that is not cropwalk's.
  const other = path.join(work, 'other.sqlite');
  new SQLite(other).exec('create table t (x)');
  // From a newer version: a migration this one does not know.
  const newer = path.join(work, 'newer.sqlite');
  copyFileSync(goodPath, newer);
  const n = new SQLite(newer);
  n.prepare("insert into kysely_migration (name, timestamp) values ('9999_from_the_future', '2030-01-01')").run();
  n.close();

  for (const [file, why] of [
    [flipped, /does not match the sha256 of its manifest/],
    [cut, /fails the integrity check|malformed|not a database/],
    [text, /is not an SQLite database/],
    [other, /is not a cropwalk database/],
    [newer, /comes from a newer cropwalk.*9999_from_the_future/],
    [path.join(work, 'missing.sqlite'), /is not a file/],
  ] as const) {
    const r = await cropwalk(['restore', file, '--yes'], { DATA_DIR: dataDir });
    t.equal(r.code, 1, path.basename(file));
    t.match(r.err, why, path.basename(file));
  }
  t.same(readFileSync(path.join(dataDir, 'cropwalk.sqlite')), before, 'the database is untouched');
  t.notOk(existsSync(path.join(dataDir, 'replaced')), 'nothing was set aside');

  const noYes = await cropwalk(['restore', goodPath], { DATA_DIR: dataDir });
  t.equal(noYes.code, 2, 'without a terminal, --yes is needed');
  t.match(noYes.err, /--yes/);
});

t.test('a backup from an older version is migrated forward on restore', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cropwalk-backup-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  // A database as the version before the appliance's migration left it.
  const oldFile = path.join(dataDir, 'old.sqlite');
  const names = migrationNames();
  const previous = names[names.indexOf('0008_appliance') - 1]!;
  const sqlite = new SQLite(oldFile);
  const db = new Kysely<any>({ dialect: new SqliteDialect({ database: sqlite }) });
  await migrate(db, previous);
  await db.destroy();
  const check = await checkBackup(oldFile, names);
  t.equal(check.schema_version, previous);

  const r = await cropwalk(['restore', oldFile, '--yes'], { DATA_DIR: path.join(dataDir, 'data') });
  t.equal(r.code, 0, r.err);
  t.match(r.out, /migrated forward: .*0008_appliance/);
  t.match(r.out, /there was no database before/);
  const restored = new SQLite(path.join(dataDir, 'data', 'cropwalk.sqlite'), { readonly: true });
  const applied = (restored.prepare('select name from kysely_migration order by name').all() as { name: string }[]).map((x) => x.name);
  restored.close();
  t.same(applied, names, 'every migration of this version applied');
  const s = await startServer(t, { dataDir: path.join(dataDir, 'data') });
  t.equal((await s.request('GET', '/api/health')).body.checks.database.ok, true, 'the service starts on it');
  await s.close();
});

t.test('retention keeps the newest BACKUP_KEEP and nothing else is touched', async (t) => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cropwalk-backup-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const dir = path.join(dataDir, 'usb');
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'README.txt'), 'the grower keeps notes here\n');
  writeFileSync(path.join(dir, 'cropwalk-20200101T000000Z.sqlite'), 'a file without a manifest is not ours to remove');
  const s = await startServer(t, { dataDir });
  const made: string[] = [];
  for (let day = 1; day <= 5; day++) {
    made.push(
      (await backupDatabase(sqliteOf(s.app.services), { dir, keep: 3, now: Date.parse(`2026-05-0${day}T03:15:00Z`), appVersion: 't' }))
        .file,
    );
  }
  t.same(
    (await listBackups(dir)).map((b) => b.file),
    made.slice(2).reverse(),
    'the three newest, newest first',
  );
  t.same(
    readdirSync(dir).sort(),
    ['README.txt', 'cropwalk-20200101T000000Z.sqlite', ...made.slice(2).flatMap((f) => [f, f.replace('.sqlite', '.json')])].sort(),
  );
  await t.rejects(backupDatabase(sqliteOf(s.app.services), { dir, keep: 0, now: 0, appVersion: 't' }), /BACKUP_KEEP must be at least 1/);
  const aborted = new AbortController();
  aborted.abort();
  await t.rejects(
    backupDatabase(sqliteOf(s.app.services), {
      dir,
      keep: 3,
      now: Date.parse('2026-06-01T00:00:00Z'),
      appVersion: 't',
      signal: aborted.signal,
    }),
    /abandoned/,
  );
  t.notOk(
    readdirSync(dir).some((f) => f.includes('partial') || f.startsWith('cropwalk-20260601')),
    'an abandoned backup leaves nothing',
  );
});

t.test('the nightly schedule backs up at 03:15 in the box zone, and health tells its age', async (t) => {
  const clock = new SettableClock('2026-03-28T12:00:00Z');
  const s = await startServer(t, { scheduleTimeZone: 'Europe/Amsterdam', backupKeep: 2 }, { clock });
  let h = await s.request('GET', '/api/health');
  t.match(h.body.checks.backups, { ok: true, count: 0, last_good: null, warning: /No backup has been made yet/ });
  // The night the clocks go forward: 03:15 CEST is 01:15 UTC.
  clock.set('2026-03-29T01:15:00Z');
  await schedulerOf(s.app.services).tick();
  const listed = (await s.request('GET', '/api/schedules', { admin: true })).body.items.find((i: { name: string }) => i.name === 'backup');
  t.match(listed, { enabled: true, when: '15 3 * * *', last_run: { outcome: 'ok', result: { file: 'cropwalk-20260329T011500Z.sqlite' } } });
  clock.set('2026-03-29T07:15:00Z');
  h = await s.request('GET', '/api/health');
  t.match(h.body.checks.backups, {
    ok: true,
    count: 1,
    age_s: 6 * 3600,
    last_good: { file: 'cropwalk-20260329T011500Z.sqlite' },
    warning: null,
  });
  clock.set('2026-04-01T07:15:00Z');
  h = await s.request('GET', '/api/health');
  t.match(h.body.checks.backups, { ok: false, warning: /last good backup is 78 hours old/ });
  t.equal(h.body.status, 'degraded');
});

async function waitFor(cond: () => boolean, what: string, ms = 30_000): Promise<void> {
  const deadline = performance.now() + ms;
  while (!cond()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}
