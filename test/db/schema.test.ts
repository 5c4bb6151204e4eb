import t from 'tap';
import { sqliteOf } from '../helpers/postgres.js';
import { startServer } from '../helpers/server.js';

/**
 * The schema is sync-ready: every table of organization data carries the
 * synced columns. Tables that are not organization records say why here.
 */
const NOT_SYNCED: Record<string, string> = {
  change_log: 'the log itself (audit trail and sync outbox)',
  meta: 'per-box settings (node id)',
  kysely_migration: 'migration bookkeeping',
  kysely_migration_lock: 'migration bookkeeping',
  climate_import_undo:
    "the box's undo bookkeeping for an import (what it did to each reading, packed per metric); the import itself is a synced record",
  climate_points:
    "climate readings, one row per cycle, instant and metric: the id is derived from that key, time and version are the import's when an import set the value, and every change is in the change log",
  climate_cycle_keys: "a small local integer per crop cycle for the climate readings' key",
  climate_metric_codes: "a small local integer per metric name for the climate readings' key",
  schedule_state: "what the box's own schedules last did, to make up a missed run at start (src/schedules/tables.ts)",
  scale_assignments:
    "which crop cycle each of the box's own serial scales records into (src/scales/tables.ts); the harvests it records are synced",
  weather_hours:
    "a greenhouse's outdoor weather, one row per UTC hour keyed by greenhouse and instant, set in place by refreshes; each refresh is a synced record (weather_refreshes) and the change log's entry for it",
  sync_counters: "each organization's feed counter, taken with every change (src/db/feed.ts); the changes themselves are in the change log",
  sync_received: 'every change received by sync and what became of it, so nothing applies twice (src/sync/apply.ts)',
  sync_origins: 'the highest change number received from each node (src/sync/upstream.ts, hello)',
  sync_links: "a box's link to its upstream: cursor, acknowledged position, last rounds (src/sync/agent.ts)",
  sync_quarantine: 'changes refused by the other side or by this one, with the reason (src/sync/agent.ts)',
  sync_tombstones: 'the versions of deleted climate readings, whose ids can come back (src/sync/kinds/climate.ts)',
  sync_field_versions: 'the version each field of a registry record took from a received change (src/sync/kinds/rows.ts)',
  sync_walk_files: "each synced walk's files by content, and whether they are here (src/sync/files.ts)",
  sync_uploads: "a box's queue of walk-file contents to send (src/sync/agent.ts)",
};

t.test('every organization table carries id, organization_id, created_at, updated_at, version', async (t) => {
  const s = await startServer(t);
  const tables = (
    sqliteOf(s.app.services).prepare("select name from sqlite_master where type = 'table' and name not like 'sqlite_%'").all() as {
      name: string;
    }[]
  ).map((r) => r.name);
  t.ok(tables.includes('farms'));
  const exempt: string[] = [];
  for (const table of tables) {
    const cols = (
      sqliteOf(s.app.services)
        .prepare(`pragma table_info(${JSON.stringify(table)})`)
        .all() as { name: string; pk: number }[]
    ).map((c) => c.name);
    if (NOT_SYNCED[table]) {
      exempt.push(table);
      continue;
    }
    for (const c of ['id', 'organization_id', 'created_at', 'updated_at', 'version']) t.ok(cols.includes(c), `${table}.${c}`);
  }
  t.same(
    exempt.sort(),
    Object.keys(NOT_SYNCED)
      .filter((n) => tables.includes(n))
      .sort(),
  );
});

t.test('migrations only go forward: no migration defines down()', async (t) => {
  const { readdirSync, readFileSync } = await import('node:fs');
  const dir = new URL('../../src/db/migrations/', import.meta.url);
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
  t.ok(files.length >= 1);
  const numbers = files.map((f) => f.slice(0, 4));
  t.same(numbers, [...new Set(numbers)].sort(), 'numbered, unique, in order');
  for (const f of files) t.notMatch(readFileSync(new URL(f, dir), 'utf8'), /export\s+(async\s+)?function\s+down/, `${f} has no down()`);
});
