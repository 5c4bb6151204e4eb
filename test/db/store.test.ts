import t from 'tap';
import { sqliteOf } from '../helpers/postgres.js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { openDatabase } from '../../src/db/database.js';
import { Store } from '../../src/db/store.js';
import { HybridLogicalClock } from '../../src/db/hlc.js';

t.test('the database file: WAL, synchronous=FULL, foreign keys, migrations once', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-store-'));
  const first = await openDatabase(dir);
  t.equal(sqliteOf(first).pragma('journal_mode', { simple: true }), 'wal');
  t.equal(sqliteOf(first).pragma('synchronous', { simple: true }), 2, 'FULL');
  t.equal(sqliteOf(first).pragma('foreign_keys', { simple: true }), 1);
  const applied = sqliteOf(first).prepare('select name from kysely_migration order by name').all() as { name: string }[];
  t.ok(applied.some((m) => m.name === '0001_registry'));
  const node = first.hlc.node;
  const stamp = first.hlc.now();
  await first.close();
  const second = await openDatabase(dir);
  t.same(sqliteOf(second).prepare('select name from kysely_migration order by name').all(), applied, 'nothing re-applied');
  t.equal(second.hlc.node, node, 'the node id is kept');
  await second.close();
  t.ok(stamp.endsWith(node));
});

t.test('every write appends to the change log in the same transaction', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-store-'));
  const opened = await openDatabase(dir);
  t.teardown(() => opened.close());
  const store = new Store(opened.db, opened.hlc);
  const actor = { keyId: 'key-1', label: 'key:key-1' };

  const org = await store.write(actor, (w) => w.insert('organizations', { organization_id: 'org-1', id: 'org-1', name: 'A' } as any));
  const farm = await store.write(actor, (w) =>
    w.insert('farms', { organization_id: 'org-1', name: 'F', location: null, notes: null } as any),
  );
  const { after } = await store.write(actor, (w) => w.update('farms', (farm as any).id, { name: 'G' } as any));
  t.equal((after as any).name, 'G');
  t.ok((after as any).version > (farm as any).version, 'the version stamp grows');
  await store.write(actor, (w) => w.remove('farms', (farm as any).id));

  const log = sqliteOf(opened).prepare('select * from change_log order by seq').all() as any[];
  t.same(
    log.map((l) => [l.entity, l.op]),
    [
      ['organizations', 'insert'],
      ['farms', 'insert'],
      ['farms', 'update'],
      ['farms', 'delete'],
    ],
  );
  t.equal(log[2].actor_key_id, 'key-1');
  t.equal(JSON.parse(log[2].before).name, 'F');
  t.equal(JSON.parse(log[2].after).name, 'G');
  t.equal(JSON.parse(log[3].before).name, 'G', 'the tombstone keeps what was deleted');
  t.equal(log[3].after, null);
  t.ok(
    log.every((l, i) => i === 0 || l.version > log[i - 1].version),
    'log versions only grow',
  );
  t.ok(org);

  // A failure half way leaves nothing: neither the rows nor their log entries.
  const countBefore = (sqliteOf(opened).prepare('select count(*) n from change_log').get() as any).n;
  await t.rejects(
    store.write(actor, async (w) => {
      await w.insert('farms', { organization_id: 'org-1', name: 'H1', location: null, notes: null } as any);
      await w.insert('farms', { organization_id: 'org-1', name: 'H2', location: null, notes: null } as any);
      throw new Error('crash half way');
    }),
  );
  t.equal((sqliteOf(opened).prepare("select count(*) n from farms where name like 'H%'").get() as any).n, 0);
  t.equal((sqliteOf(opened).prepare('select count(*) n from change_log').get() as any).n, countBefore);

  // Many rows at once: multi-row statements, still one log entry each, still all or nothing.
  const many = Array.from({ length: 2500 }, (_, i) => ({ organization_id: 'org-1', name: `M${i}`, location: null, notes: null }));
  const inserted = await store.write(actor, (w) => w.insertMany('farms', many as any));
  t.equal(inserted.length, 2500);
  t.equal((sqliteOf(opened).prepare("select count(*) n from farms where name like 'M%'").get() as any).n, 2500);
  const logged = sqliteOf(opened)
    .prepare("select * from change_log where entity = 'farms' and op = 'insert' and json_extract(after, '$.name') like 'M%'")
    .all() as any[];
  t.equal(logged.length, 2500, 'one change-log entry per row');
  t.equal(new Set(logged.map((l) => l.entity_id)).size, 2500);
  t.equal(logged[0].actor_key_id, 'key-1');
  await t.rejects(
    store.write(actor, async (w) => {
      await w.insertMany('farms', [
        { organization_id: 'org-1', name: 'N1', location: null, notes: null },
        { organization_id: 'org-1', name: null, location: null, notes: null },
      ] as any);
    }),
  );
  t.equal(
    (sqliteOf(opened).prepare("select count(*) n from farms where name = 'N1'").get() as any).n,
    0,
    'a bad row leaves none of its batch',
  );

  // The guard: an outer query inside a write fails at once instead of deadlocking.
  const guarded = opened.db.withPlugin((await import('../../src/db/store.js')).outsideWriteGuard);
  await t.rejects(
    store.write(actor, async () => guarded.selectFrom('farms').selectAll().execute()),
    /use w\.trx/,
  );
  // The context that tells the guard it is inside a write is on only while a write is open
  // (it slows every promise): it must come back for the next write, survive the end of an
  // overlapping one, and leave reads after the writes alone.
  await t.rejects(
    store.write(actor, async () => guarded.selectFrom('farms').selectAll().execute()),
    /use w\.trx/,
    'again after the first write ended',
  );
  // One connection: the second write queues behind the first, its context already open.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const first = store.write(actor, async (w) => {
    await held;
    return w.trx.selectFrom('farms').select('id').limit(1).execute();
  });
  const second = store.write(actor, async () => guarded.selectFrom('farms').selectAll().execute());
  release();
  await first;
  await t.rejects(second, /use w\.trx/, 'a write still open when another ends keeps its context');
  t.ok((await guarded.selectFrom('farms').select('id').limit(1).execute()).length, 'outside any write the guarded db reads');
});

t.test('hybrid logical clock', async (t) => {
  let wall = 1_000;
  const clock = new HybridLogicalClock('n1', () => wall);
  const a = clock.now();
  const b = clock.now();
  t.ok(b > a, 'same millisecond: the counter grows');
  wall = 500;
  const c = clock.now();
  t.ok(c > b, 'the wall clock stepped back: the stamp still grows');
  wall = 2_000;
  const d = clock.now();
  t.equal(HybridLogicalClock.parse(d).ms, 2000);
  t.equal(HybridLogicalClock.parse(d).counter, 0);
  const remote = HybridLogicalClock.format(5_000, 3, 'n2');
  const e = clock.receive(remote);
  t.ok(e > remote, 'after receiving a later stamp, ours is later still');
  const fresh = new HybridLogicalClock('n1', () => 100);
  fresh.seed(e);
  t.ok(fresh.now() > e, 'seeded from the stored maximum, a restart never goes back');
  t.throws(() => HybridLogicalClock.parse('garbage'));
});
