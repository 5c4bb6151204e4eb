import { sql, type Kysely } from 'kysely';

// Forward-only: never edit a migration that has shipped; add the next number.
//
// From counts to kilos (docs/forecast.md):
// - a crop cycle may carry the growing area its records cover (area_m2), for every figure per m²;
// - a truss-count date may carry the stem density in force from it (stems_per_m2), when extra stems are kept;
// - stored forecasts: issued once and never changed, one row each with its weeks as JSON;
// - outdoor weather per greenhouse: one row per UTC hour (past and forecast apart by a flag), refreshed
//   in place, never doubled; and a synced record of each refresh, which is what the change log carries
//   (a refresh writes up to 2,600 hours: one log entry for it, not one per hour, like a climate import).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('cycles').addColumn('area_m2', 'real').execute();
  await db.schema.alterTable('truss_counts').addColumn('stems_per_m2', 'real').execute();

  await db.schema
    .createTable('forecasts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('farm_id', 'text', (c) => c.notNull())
    .addColumn('greenhouse_id', 'text', (c) => c.notNull())
    .addColumn('row_id', 'text', (c) => c.notNull())
    .addColumn('cycle_id', 'text', (c) => c.notNull().references('cycles.id'))
    // The ISO week the forecast was made as of (its horizon 0).
    .addColumn('week', 'text', (c) => c.notNull())
    .addColumn('made_by', 'text', (c) => c.notNull())
    .addColumn('made_by_key_id', 'text')
    // JSON: the forecast weeks (week, horizon, kg, kg_per_m2, p10, p90, method), as answered when issued.
    .addColumn('weeks', 'text', (c) => c.notNull())
    // JSON: what the forecast rested on (truss counts, walk, fruit mass, temperature, pick rhythm, area).
    .addColumn('inputs', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('forecasts_cycle').on('forecasts').columns(['cycle_id', 'id']).execute();

  await db.schema
    .createTable('weather_refreshes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('version', 'text', (c) => c.notNull())
    .addColumn('farm_id', 'text', (c) => c.notNull())
    .addColumn('greenhouse_id', 'text', (c) => c.notNull().references('greenhouses.id'))
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('latitude', 'real', (c) => c.notNull())
    .addColumn('longitude', 'real', (c) => c.notNull())
    .addColumn('past_days', 'integer', (c) => c.notNull())
    .addColumn('forecast_days', 'integer', (c) => c.notNull())
    .addColumn('fetched_at', 'text', (c) => c.notNull())
    .addColumn('from_utc', 'text')
    .addColumn('to_utc', 'text')
    .addColumn('hours', 'integer', (c) => c.notNull())
    .addColumn('added', 'integer', (c) => c.notNull())
    .addColumn('updated', 'integer', (c) => c.notNull())
    .addColumn('unchanged', 'integer', (c) => c.notNull())
    .addColumn('past_hours', 'integer', (c) => c.notNull())
    .addColumn('forecast_hours', 'integer', (c) => c.notNull())
    // JSON array of the unit conversions applied (e.g. "wind_speed_10m: km/h → m/s").
    .addColumn('conversions', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('weather_refreshes_greenhouse').on('weather_refreshes').columns(['greenhouse_id', 'id']).execute();

  await sql`
    CREATE TABLE weather_hours (
      greenhouse_id text NOT NULL,
      -- Start of the UTC hour, epoch ms.
      at_ms integer NOT NULL,
      -- 1 when the hour was still ahead when it was last fetched (a forecast), 0 when it was past.
      forecast integer NOT NULL CHECK (forecast IN (0, 1)),
      temperature_c real,
      relative_humidity real,
      shortwave_w_m2 real,
      precipitation_mm real,
      wind_speed_m_s real,
      fetched_ms integer NOT NULL,
      refresh_id text NOT NULL,
      PRIMARY KEY (greenhouse_id, at_ms)
    ) WITHOUT ROWID`.execute(db);
}
