import t from 'tap';
import { sql } from 'kysely';
import pg from 'pg';
import { openStorage, type OpenedDatabase } from '../../src/db/database.js';
import { MAX_ATTEMPTS, Store, SYSTEM_ACTOR } from '../../src/db/store.js';
import { createOrganization } from '../../src/keys/commands.js';
import { problemOf } from '../../src/http/problem.js';
import { sqlitePassSkip, testDatabase } from '../helpers/postgres.js';
import { createTree, startServer, dbCount, dbRows } from '../helpers/server.js';
import { readdirSync } from 'node:fs';

/**
 * The Writer on PostgreSQL: a connection per transaction, an organization's writers one after
 * another, what the database gives up on run again a bounded number of times (503, never 500),
 * values as SQLite answers them, migrations once when processes start together.
 */

async function open(t: { teardown(fn: () => unknown): void }, url: string): Promise<OpenedDatabase> {
  const opened = await openStorage('/nonexistent', { databaseUrl: url });
  t.teardown(() => opened.close());
  return opened;
}

const storeOf = (o: OpenedDatabase) => new Store(o.db, o.hlc, undefined, o.engine);

t.test('PostgreSQL storage', async (t) => {
  if (sqlitePassSkip(t)) return;
  const url = await testDatabase(t);
  if (!url) return;

  t.test('processes starting at once migrate once; both open', async (t) => {
    const [a, b, c] = await Promise.all([open(t, url), open(t, url), open(t, url)]);
    const files = readdirSync(new URL('../../src/db/migrations/', import.meta.url)).filter((f) => /^\d{4}_.*\.ts$/.test(f));
    const ran = await a.db
      .selectFrom('kysely_migration' as never)
      .selectAll()
      .execute();
    t.equal(ran.length, files.length, 'every migration recorded once');
    const node = (o: OpenedDatabase) => o.hlc.node;
    t.equal(node(a), node(b), 'one node id for the database');
    t.equal(node(b), node(c));
    t.not(
      a.engine.kind === 'postgres' && a.engine.instance,
      b.engine.kind === 'postgres' && b.engine.instance,
      'each process its own instance',
    );
  });

  const opened = await open(t, url);
  const store = storeOf(opened);

  t.test('BIGINT and NUMERIC come back as numbers', async (t) => {
    const r = await sql<{
      n: number;
      big: number;
      num: number;
    }>`select count(*) as n, 7258118399999::bigint as big, 2.5::numeric as num`.execute(opened.db);
    t.same(r.rows[0], { n: 1, big: 7258118399999, num: 2.5 });
    const unsafe = await sql`select 9007199254740993::bigint as x`.execute(opened.db).catch((e: Error) => e);
    t.match(String(unsafe), /does not fit a JavaScript number/, 'a value that would round is an error, not a wrong number');
  });

  t.test('a deadlock between two organizations is run again, and both writes land', async (t) => {
    const one = await store.write(SYSTEM_ACTOR, (w) => createOrganization(w, 'One', 'admin'));
    const two = await store.write(SYSTEM_ACTOR, (w) => createOrganization(w, 'Two', 'admin'));
    let runs = 0;
    // Each takes one organization's lock, then waits for the other's: PostgreSQL breaks the cycle.
    let arrived = 0;
    let release!: () => void;
    const bothIn = new Promise<void>((r) => (release = r));
    const cross = (first: string, second: string, name: string) =>
      store.write(SYSTEM_ACTOR, async (w) => {
        runs++;
        await w.update('organizations', first, { name: `${name}-a` });
        if (++arrived === 2) release();
        await Promise.race([bothIn, new Promise((r) => setTimeout(r, 2000))]);
        await w.update('organizations', second, { name: `${name}-b` });
        return name;
      });
    const results = await Promise.all([cross(one.org.id, two.org.id, 'x'), cross(two.org.id, one.org.id, 'y')]);
    t.same(results.sort(), ['x', 'y'], 'both committed');
    t.ok(runs >= 3, `one of them ran again (${runs} runs)`);
    const names = await opened.db.selectFrom('organizations').select('name').where('id', 'in', [one.org.id, two.org.id]).execute();
    t.equal(names.length, 2);
    const log = await opened.db
      .selectFrom('change_log')
      .select('op')
      .where('entity', '=', 'organizations')
      .where('op', '=', 'update')
      .execute();
    t.equal(log.length, 4, 'each committed update logged once, none from the attempt that rolled back');
  });

  t.test(
    'a transaction PostgreSQL keeps giving up on answers 503 database_busy after a bounded number of runs, storing nothing',
    async (t) => {
      const before = Number((await sql<{ n: number }>`select count(*) as n from change_log`.execute(opened.db)).rows[0]!.n);
      for (const retry of [true, false]) {
        let runs = 0;
        const err = await store
          .write(
            SYSTEM_ACTOR,
            async (w) => {
              runs++;
              await createOrganization(w, 'Doomed', 'admin');
              await sql`DO $$ BEGIN RAISE EXCEPTION 'forced' USING ERRCODE = '40001'; END $$`.execute(w.trx);
            },
            { retry },
          )
          .catch((e) => e);
        t.equal(runs, retry ? MAX_ATTEMPTS : 1, retry ? 'run again up to the bound' : 'retry: false runs once');
        const problem = problemOf(err);
        t.equal(problem?.status, 503);
        t.equal(problem?.toBody().code, 'database_busy');
      }
      const after = Number((await sql<{ n: number }>`select count(*) as n from change_log`.execute(opened.db)).rows[0]!.n);
      t.equal(after, before, 'nothing of any attempt stayed');
      t.equal((await opened.db.selectFrom('organizations').select('id').where('name', '=', 'Doomed').execute()).length, 0);
    },
  );

  t.test('an error that is not the database giving way is not run again', async (t) => {
    let runs = 0;
    const err = await store
      .write(SYSTEM_ACTOR, async (w) => {
        runs++;
        await sql`select 1/0`.execute(w.trx);
      })
      .catch((e) => e);
    t.equal(runs, 1);
    t.match(String(err), /division by zero/);
  });
});

t.test('many requests of one organization at once, over HTTP', async (t) => {
  if (sqlitePassSkip(t)) return;
  const url = await testDatabase(t);
  if (!url) return;
  const s = await startServer(t, { databaseUrl: url });
  const tree = await createTree(s);
  const key = tree.adminKey;
  let manager = key;

  t.test('the same week posted 30 times at once: one record, every answer a 2xx, each write logged', async (t) => {
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        s.request('POST', `${tree.cyclePath}/fruit-mass`, {
          key,
          body: { week: '2026-W10', green_g: 100 + i, turning_g: 110, red_g: 120 },
        }),
      ),
    );
    t.same(
      [...new Set(answers.map((a) => Math.floor(a.status / 100)))],
      [2],
      answers
        .map((a) => `${a.status} ${a.text}`)
        .join('\n')
        .slice(0, 500),
    );
    t.equal(await dbCount(s, "select count(*) as n from fruit_masses where week = '2026-W10'"), 1);
    const log = await dbRows<{ op: string }>(s, "select op from change_log where entity = 'fruit_masses' order by seq");
    t.same(
      log.map((l) => l.op),
      ['insert', ...Array(29).fill('update')],
      'one insert, then the others as updates of it',
    );
  });

  t.test('two admin keys revoking each other at once: the organization keeps one (409 or 401 for the other)', async (t) => {
    for (let round = 0; round < 5; round++) {
      const made = await s.request('POST', `/api/organizations/${tree.orgId}/keys`, {
        key: manager,
        body: { name: `a${round}`, role: 'admin' },
      });
      const other = await s.request('POST', `/api/organizations/${tree.orgId}/keys`, {
        key: manager,
        body: { name: `b${round}`, role: 'admin' },
      });
      // Leave only these two active admin keys.
      const keys = await s.request('GET', `/api/organizations/${tree.orgId}/keys?limit=200`, { key: manager });
      for (const k of keys.body.items)
        if (k.role === 'admin' && !k.revoked_at && ![made.body.key_id, other.body.key_id].includes(k.key_id))
          t.equal(
            (await s.request('POST', `/api/organizations/${tree.orgId}/keys/${k.key_id}/revoke`, { key: made.body.api_key })).status,
            200,
          );
      const [x, y] = await Promise.all([
        s.request('POST', `/api/organizations/${tree.orgId}/keys/${other.body.key_id}/revoke`, { key: made.body.api_key }),
        s.request('POST', `/api/organizations/${tree.orgId}/keys/${made.body.key_id}/revoke`, { key: other.body.api_key }),
      ]);
      const statuses = [x.status, y.status].sort();
      t.ok(statuses[0] === 200 && [401, 409].includes(statuses[1]!), `round ${round}: one revoked, the other refused (${statuses})`);
      const active = await dbCount(
        s,
        "select count(*) as n from api_keys where organization_id = ? and role = 'admin' and revoked_at is null",
        tree.orgId,
      );
      t.equal(active, 1, 'exactly one admin key left');
      // The survivor manages the next round.
      manager = x.status === 200 ? made.body.api_key : other.body.api_key;
    }
  });

  t.test('the database going away answers 503 on /api/health, and the service comes back with it', async (t) => {
    const name = new URL(url).pathname.slice(1);
    const admin = new pg.Client({ connectionString: process.env.CROPWALK_TEST_POSTGRES ?? url.replace(`/${name}`, '/postgres') });
    await admin.connect();
    t.teardown(() => admin.end());
    // ALLOW_CONNECTIONS, not CONNECTION LIMIT 0: a superuser (the test cluster's role) is held to the first only.
    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS false`);
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
    const down = await s.request('GET', '/api/health');
    t.equal(down.status, 503);
    t.equal(down.body.checks.database.ok, false);
    // A read and a write meanwhile (an earlier subtest may have revoked the key: its check is a read too): a 503
    // that says the database cannot be reached, not a 500 nor a 401.
    const harvestsBefore = `${tree.cyclePath}/harvests`;
    const read = await s.request('GET', harvestsBefore, { key: tree.adminKey });
    t.equal(read.status, 503, read.text);
    t.equal(read.body.code, 'database_unavailable');
    t.match(read.headers.get('content-type'), /application\/problem\+json/);
    const write = await s.request('POST', harvestsBefore, { key: tree.adminKey, body: { harvested_on: '2026-03-02', kg: 12 } });
    t.equal(write.status, 503, write.text);
    t.equal(write.body.code, 'database_unavailable');
    await admin.query(`ALTER DATABASE ${name} ALLOW_CONNECTIONS true`);
    const up = await s.request('GET', '/api/health');
    t.equal(up.status, 200, 'the pool connects again');
    t.equal(
      await dbCount(s, 'select count(*) as n from harvests where cycle_id = ?', tree.cycleId),
      0,
      'the write refused meanwhile stored nothing',
    );
  });
});
