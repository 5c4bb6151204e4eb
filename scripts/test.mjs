#!/usr/bin/env node
// `npm test [-- files...]`: the suite on SQLite (tap, every test), then the tests that drive the
// API and the storage again on PostgreSQL, against one throwaway server started here
// (scripts/pg-cluster.mjs) or the one CROPWALK_TEST_POSTGRES names. With files given, each pass
// runs those of them it would run. Where no PostgreSQL can be had (not installed and not
// installable: scripts/setup.mjs installs Debian's postgresql as root), the second pass is
// skipped with a line saying so; tests that only PostgreSQL can run skip in the first pass and
// run in the second.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findPgBin, startCluster } from './pg-cluster.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const say = (msg) => process.stderr.write(`[test] ${msg}\n`);

/**
 * The PostgreSQL pass: every test that drives the API over HTTP against a database, and the
 * storage tests written for both engines. Not in it, and why:
 * - test/db/store.test.ts, test/db/schema.test.ts, test/*\/migration.test.ts: SQLite itself (pragmas,
 *   the file, the SQLite migrations); test/db/postgres-*.test.ts are their PostgreSQL counterparts.
 * - test/app.test.ts: closes the SQLite connection to see /api/health answer 503 (test/db/postgres-health
 *   does it on PostgreSQL by terminating the pool's backends); test/main.test.ts: the SQLite file under DATA_DIR.
 * - test/http/storage-full.test.ts: SQLite on a filesystem that fills up (PostgreSQL's disk is its server's).
 * - test/walks/jobs/retention.test.ts and commands.test.ts: set walk rows straight in SQLite.
 * - test/walks/{batch,hdr,heic}.test.ts, examples, detector-choice: media decoding and scoring, where
 *   the database does what test/walks/routes.test.ts already has it do.
 * - test/sync/readme.test.ts: the README's walkthrough, instances started by `npm start` on SQLite as
 *   written; the upstream role on PostgreSQL is the rest of test/sync, listed below.
 * - test/vision, test/time, test/units, test/scripts, test/climate/exports-reader, test/auth,
 *   test/log, test/http/problem, test/http/web-app, test/web: no database, or the browser app;
 *   nor the forecast model's own tests (test/forecast/{model,agc2,export}: plain functions over
 *   arrays), test/weeks/climate.test.ts (the week's climate summary over arrays) and
 *   test/climate/weather/client.test.ts (the Open-Meteo client against a fake service).
 */
export const POSTGRES_PASS = [
  'test/db/postgres-schema.test.ts',
  'test/db/postgres-store.test.ts',
  'test/db/postgres-processes.test.ts',
  'test/db/bulk.test.ts',
  'test/registry/routes.test.ts',
  'test/registry/record-kinds.test.ts',
  'test/keys/routes.test.ts',
  'test/session/routes.test.ts',
  'test/http/access-matrix.test.ts',
  'test/http/openapi.test.ts',
  'test/records/fruit-mass/routes.test.ts',
  'test/records/harvests/routes.test.ts',
  'test/records/harvests/csv.test.ts',
  'test/records/irrigation/routes.test.ts',
  'test/records/truss-counts/routes.test.ts',
  'test/records/week-notes/routes.test.ts',
  'test/records/time-zones.test.ts',
  'test/climate/imports/routes.test.ts',
  'test/climate/imports/engine.test.ts',
  'test/climate/imports/hostile.test.ts',
  'test/climate/imports/zone.test.ts',
  'test/climate/imports/reader-thread.test.ts',
  'test/climate/imports/real-files.test.ts',
  'test/climate/readings/routes.test.ts',
  'test/climate/watch/watcher.test.ts',
  'test/climate/weather/refresh.test.ts',
  'test/weeks/read.test.ts',
  'test/weeks/records.test.ts',
  'test/forecast/engines.test.ts',
  'test/forecast/forecast.test.ts',
  'test/forecast/queries.test.ts',
  'test/forecast/schedule.test.ts',
  'test/forecast/stored.test.ts',
  'test/schedules/scheduler.test.ts',
  'test/scales/routes.test.ts',
  'test/walks/routes.test.ts',
  'test/walks/corrections/routes.test.ts',
  'test/walks/jobs/restart.test.ts',
  // The upstream role: the upstream on PostgreSQL, the boxes on SQLite (test/sync/helpers.ts
  // startBox), two boxes pushing at once in faults.test.ts (5 seeds here, the 20 in the SQLite pass).
  'test/sync/admission.test.ts',
  'test/sync/batch.test.ts',
  'test/sync/conflicts.test.ts',
  'test/sync/faults.test.ts',
  'test/sync/files.test.ts',
  'test/sync/kill.test.ts',
  'test/sync/kinds.test.ts',
  'test/sync/kinds/rows.test.ts',
  'test/sync/refusal.test.ts',
  'test/sync/routes.test.ts',
  'test/sync/schedule.test.ts',
  'test/sync/security.test.ts',
];

function tap(files, env) {
  const r = spawnSync('npx', ['tap', ...files], { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  return r.status ?? 1;
}

const args = process.argv.slice(2);
const asked = args.filter((a) => !a.startsWith('-')).map((a) => path.relative(root, path.resolve(a)));
const options = args.filter((a) => a.startsWith('-'));

const first = tap(args, { CROPWALK_TEST_PASS: 'sqlite' });

const pgFiles = asked.length ? POSTGRES_PASS.filter((f) => asked.some((a) => f === a || f.startsWith(`${a}/`))) : POSTGRES_PASS;
let second = 0;
if (pgFiles.length === 0) {
  say('no test of the PostgreSQL pass among those asked for');
} else if (!process.env.CROPWALK_TEST_POSTGRES && !findPgBin()) {
  say('PostgreSQL pass skipped: PostgreSQL is not installed (apt-get install postgresql, or set CROPWALK_TEST_POSTGRES to an admin URL)');
} else {
  let cluster = null;
  let url = process.env.CROPWALK_TEST_POSTGRES;
  if (!url) {
    try {
      cluster = await startCluster();
      url = cluster.url;
    } catch (err) {
      say(`PostgreSQL pass skipped: no server could be started here (${err.message.split('\n')[0]})`);
    }
  }
  if (url) {
    say(`PostgreSQL pass: ${pgFiles.length} test files against ${cluster ? 'a throwaway server' : 'CROPWALK_TEST_POSTGRES'}`);
    const stop = () => cluster?.stop();
    process.once('SIGINT', () => (stop(), process.exit(130)));
    process.once('SIGTERM', () => (stop(), process.exit(143)));
    try {
      second = tap([...options, ...pgFiles.filter((f) => existsSync(path.join(root, f)))], {
        CROPWALK_TEST_ENGINE: 'postgres',
        CROPWALK_TEST_POSTGRES: url,
      });
    } finally {
      stop();
    }
  }
}
process.exit(first || second);
