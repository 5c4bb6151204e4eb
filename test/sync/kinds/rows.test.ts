import t from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CompiledQuery, type Kysely } from 'kysely';
import { openStorage } from '../../../src/db/database.js';
import { among } from '../../../src/db/bulk.js';
import { tombstones, wasDeleted } from '../../../src/sync/kinds/rows.js';
import { apiOnPostgres, testDatabase } from '../../helpers/postgres.js';

/**
 * Whether a record was deleted here, on the engine of this pass: a tombstone counts, a loss of a
 * natural key and an update do not; and the read goes through the tombstones' own index
 * (migration 0012) on a change log the planner holds no statistics of, as a new upstream's is.
 */
t.test('tombstones: what counts, and the index that answers', async (t) => {
  let url: string | undefined;
  if (apiOnPostgres()) {
    const made = await testDatabase(t);
    if (!made) return;
    url = made;
  }
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-tombstones-'));
  const opened = await openStorage(dir, { databaseUrl: url });
  t.teardown(async () => {
    await opened.close();
    rmSync(dir, { recursive: true, force: true });
  });
  const db = opened.db as unknown as Kysely<any>;
  const entry = (entity_id: string, op: string, after: string | null) => ({
    organization_id: 'org-1',
    entity: 'harvests',
    entity_id,
    op,
    actor: 'test',
    before: '{}',
    after,
    version: '1',
    at: '2026-11-29T00:00:00.000Z',
  });
  await db
    .insertInto('change_log')
    .values([
      entry('made', 'insert', '{}'),
      entry('changed', 'insert', '{}'),
      entry('changed', 'update', '{}'),
      entry('gone', 'insert', '{}'),
      entry('gone', 'delete', null),
      entry('lost', 'delete', '{"superseded_by":"other"}'),
    ])
    .execute();
  for (const [id, deleted] of [
    ['made', false],
    ['changed', false],
    ['gone', true],
    ['lost', false],
    ['never', false],
  ] as const)
    t.equal(await wasDeleted(db, 'harvests', id), deleted, `${id}: ${deleted ? 'deleted' : 'not deleted'}`);
  t.equal(await wasDeleted(db, 'irrigation_entries', 'gone'), false, 'a tombstone is of its own kind only');

  const read = tombstones(db)
    .select('entity_id')
    .where('entity', '=', 'harvests')
    .where(among(db, 'entity_id', ['gone', 'made', 'never']))
    .compile();
  t.same(
    (await db.executeQuery<{ entity_id: string }>(read)).rows.map((r) => r.entity_id),
    ['gone'],
    'a batch asks for many ids at once',
  );
  const pg = opened.engine.kind === 'postgres';
  const explained = await db.executeQuery<Record<string, string>>(
    CompiledQuery.raw(`${pg ? 'EXPLAIN' : 'EXPLAIN QUERY PLAN'} ${read.sql}`, [...read.parameters]),
  );
  const plan = explained.rows.map((r) => (pg ? r['QUERY PLAN'] : r.detail)).join('\n');
  t.match(plan, /change_log_tombstones/, `the plan reads the tombstones' index:\n${plan}`);
});
