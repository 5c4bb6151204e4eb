import { sql, type Kysely } from 'kysely';

// Forward-only: never edit a migration that has shipped; add the next number.
//
// Climate readings move from one row of text per reading over six b-trees
// (reading, id, unique key, time index, undo effect, its index) to one
// WITHOUT ROWID b-tree keyed by small integers for (cycle, instant, metric), and an import's undo
// bookkeeping to one packed row per import and metric. A year of hourly values
// from an export is 245,000 readings: written the old way the import took 13×
// the time of parsing the file, the new way about 3× (docs/climate-exports.md).
//
// A reading's point_id is derived from its key (src/climate/readings/point-id.ts),
// so it needs no column and no index; readings stored before this migration keep
// the random ids they were given, in `fixed_id`.
export async function up(db: Kysely<any>): Promise<void> {
  // A small integer per crop cycle, so the readings' key is three short values instead of 36 characters of text.
  await db.schema
    .createTable('climate_cycle_keys')
    .addColumn('key', 'integer', (c) => c.primaryKey())
    .addColumn('cycle_id', 'text', (c) => c.notNull().unique().references('cycles.id'))
    .execute();

  // Imports get a small integer too: the readings name the import that last set them by it.
  await db.schema.alterTable('climate_imports').addColumn('seq', 'integer').execute();
  await sql`UPDATE climate_imports SET seq = (SELECT count(*) FROM climate_imports o WHERE o.rowid <= climate_imports.rowid)`.execute(db);
  await db.schema.createIndex('climate_imports_seq').unique().on('climate_imports').column('seq').execute();

  // And a small integer per metric name: an integer key inserts in about 60 % of the time a text one does.
  await db.schema
    .createTable('climate_metric_codes')
    .addColumn('code', 'integer', (c) => c.primaryKey())
    .addColumn('metric', 'text', (c) =>
      c
        .notNull()
        .unique()
        .check(sql`length(metric) between 1 and 64`),
    )
    .execute();

  await sql`
    CREATE TABLE climate_points (
      -- No REFERENCES on the key: a foreign-key check per row is a third of an import's insert
      -- time. Codes are never deleted, and a cycle's key goes only with its readings (points.ts).
      cycle_key integer NOT NULL,
      at_ms integer NOT NULL CHECK (at_ms >= 0 AND at_ms < 7258118400000),
      metric_code integer NOT NULL,
      value real NOT NULL,
      -- The import (climate_imports.seq) that last set the value; null when typed or edited by hand.
      import_seq integer,
      created_ms integer NOT NULL,
      -- Null while the value is the one import_seq set: the reading's updated_at and version are then that import's.
      changed_ms integer,
      version text,
      -- The point_id when it is not the one derived from the key (readings stored before this migration).
      fixed_id text,
      PRIMARY KEY (cycle_key, at_ms, metric_code)
    ) WITHOUT ROWID`.execute(db);
  await sql`CREATE UNIQUE INDEX climate_points_fixed_id ON climate_points (cycle_key, fixed_id) WHERE fixed_id IS NOT NULL`.execute(db);

  // What an import did, packed per metric: `added` holds the instants it added (float64 epoch ms),
  // `updated` triples (instant, previous value, previous import seq or NaN for a manual value).
  await sql`
    CREATE TABLE climate_import_undo (
      import_seq integer NOT NULL,
      metric text NOT NULL,
      added blob NOT NULL,
      updated blob NOT NULL,
      PRIMARY KEY (import_seq, metric)
    ) WITHOUT ROWID`.execute(db);

  await sql`INSERT INTO climate_cycle_keys (cycle_id) SELECT DISTINCT cycle_id FROM climate_readings ORDER BY cycle_id`.execute(db);
  await sql`INSERT INTO climate_metric_codes (metric) SELECT DISTINCT metric FROM climate_readings ORDER BY metric`.execute(db);
  await sql`
    INSERT INTO climate_points (cycle_key, at_ms, metric_code, value, import_seq, created_ms, changed_ms, version, fixed_id)
    SELECT k.key, CAST(round((julianday(r.at_utc) - 2440587.5) * 86400000.0) AS integer), m.code, r.value, i.seq,
           CAST(round((julianday(r.created_at) - 2440587.5) * 86400000.0) AS integer),
           CAST(round((julianday(r.updated_at) - 2440587.5) * 86400000.0) AS integer), r.version, r.id
      FROM climate_readings r
      JOIN climate_cycle_keys k ON k.cycle_id = r.cycle_id
      JOIN climate_metric_codes m ON m.metric = r.metric
      LEFT JOIN climate_imports i ON i.id = r.import_id`.execute(db);

  // Effects become packed rows. Effects whose reading was deleted since cannot say which
  // instant they were about; the old undo counted them as missing, and so does the new one
  // by their absence.
  const effects = await sql<{
    seq: number;
    metric: string;
    at_utc: string;
    action: 'added' | 'updated';
    previous_value: number | null;
    previous_seq: number | null;
  }>`
    SELECT i.seq AS seq, r.metric AS metric, r.at_utc AS at_utc, e.action AS action, e.previous_value AS previous_value, p.seq AS previous_seq
      FROM climate_import_effects e
      JOIN climate_imports i ON i.id = e.import_id
      JOIN climate_readings r ON r.id = e.point_id
      LEFT JOIN climate_imports p ON p.id = e.previous_import_id
     ORDER BY i.seq, r.metric, r.at_utc`.execute(db);
  const packed = new Map<string, { seq: number; metric: string; added: number[]; updated: number[] }>();
  for (const e of effects.rows) {
    const k = `${e.seq}\u0000${e.metric}`;
    let p = packed.get(k);
    if (!p) packed.set(k, (p = { seq: e.seq, metric: e.metric, added: [], updated: [] }));
    const ms = Date.parse(e.at_utc);
    if (e.action === 'added') p.added.push(ms);
    else p.updated.push(ms, e.previous_value ?? Number.NaN, e.previous_seq ?? Number.NaN);
  }
  const blob = (xs: number[]) => Buffer.from(new Float64Array(xs).buffer);
  for (const p of packed.values()) {
    await sql`INSERT INTO climate_import_undo (import_seq, metric, added, updated) VALUES (${p.seq}, ${p.metric}, ${blob(p.added)}, ${blob(p.updated)})`.execute(
      db,
    );
  }

  await db.schema.dropTable('climate_import_effects').execute();
  await db.schema.dropTable('climate_readings').execute();

  // For people reading the database by hand (sqlite3 data/cropwalk.sqlite): the readings with
  // their cycle, UTC text time and import id, as the old table showed them. Not used by the service.
  await sql`
    CREATE VIEW climate_readings AS
    SELECT k.cycle_id AS cycle_id, m.metric AS metric, strftime('%Y-%m-%dT%H:%M:%fZ', p.at_ms / 1000.0, 'unixepoch') AS at_utc,
           p.value AS value, i.id AS import_id, p.fixed_id AS fixed_id
      FROM climate_points p
      JOIN climate_cycle_keys k ON k.key = p.cycle_key
      JOIN climate_metric_codes m ON m.code = p.metric_code
      LEFT JOIN climate_imports i ON i.seq = p.import_seq`.execute(db);
}
