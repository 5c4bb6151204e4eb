import type { Kysely } from 'kysely';
import { statements, SYNCED_PG } from '../../ddl.js';

// Forward-only: never edit a migration that has shipped; add the next number.
//
// PostgreSQL's form of ../0009_forecasts_weather.ts: the same columns, keyed with
// organization_id and referring to their parents by (id, organization_id) (docs/citus.md).
// weather_hours carries organization_id here only (SQLite's is keyed by greenhouse and hour
// alone): src/climate/weather/commands.ts writes it on PostgreSQL (pgOnlyOrganization).
export async function up(db: Kysely<any>): Promise<void> {
  await statements(
    db,
    `ALTER TABLE cycles ADD COLUMN area_m2 double precision`,
    `ALTER TABLE truss_counts ADD COLUMN stems_per_m2 double precision`,
    `CREATE TABLE forecasts (${SYNCED_PG},
       farm_id text COLLATE "C" NOT NULL,
       greenhouse_id text COLLATE "C" NOT NULL,
       row_id text COLLATE "C" NOT NULL,
       cycle_id text COLLATE "C" NOT NULL,
       week text COLLATE "C" NOT NULL,
       made_by text COLLATE "C" NOT NULL,
       made_by_key_id text COLLATE "C",
       weeks text COLLATE "C" NOT NULL,
       inputs text COLLATE "C" NOT NULL,
       model text COLLATE "C" NOT NULL,
       PRIMARY KEY (id, organization_id),
       CONSTRAINT forecasts_cycle_fk FOREIGN KEY (cycle_id, organization_id) REFERENCES cycles (id, organization_id) DEFERRABLE INITIALLY IMMEDIATE
     )`,
    `CREATE INDEX forecasts_cycle ON forecasts (cycle_id, id)`,
    `CREATE TABLE weather_refreshes (${SYNCED_PG},
       farm_id text COLLATE "C" NOT NULL,
       greenhouse_id text COLLATE "C" NOT NULL,
       source text COLLATE "C" NOT NULL,
       latitude double precision NOT NULL,
       longitude double precision NOT NULL,
       past_days integer NOT NULL,
       forecast_days integer NOT NULL,
       fetched_at text COLLATE "C" NOT NULL,
       from_utc text COLLATE "C",
       to_utc text COLLATE "C",
       hours integer NOT NULL,
       added integer NOT NULL,
       updated integer NOT NULL,
       unchanged integer NOT NULL,
       past_hours integer NOT NULL,
       forecast_hours integer NOT NULL,
       conversions text COLLATE "C" NOT NULL,
       PRIMARY KEY (id, organization_id),
       CONSTRAINT weather_refreshes_greenhouse_fk FOREIGN KEY (greenhouse_id, organization_id) REFERENCES greenhouses (id, organization_id) DEFERRABLE INITIALLY IMMEDIATE
     )`,
    `CREATE INDEX weather_refreshes_greenhouse ON weather_refreshes (greenhouse_id, id)`,
    `CREATE TABLE weather_hours (
       greenhouse_id text COLLATE "C" NOT NULL,
       at_ms bigint NOT NULL,
       forecast integer NOT NULL CHECK (forecast IN (0, 1)),
       temperature_c double precision,
       relative_humidity double precision,
       shortwave_w_m2 double precision,
       precipitation_mm double precision,
       wind_speed_m_s double precision,
       fetched_ms bigint NOT NULL,
       refresh_id text COLLATE "C" NOT NULL,
       organization_id text COLLATE "C" NOT NULL,
       PRIMARY KEY (greenhouse_id, at_ms, organization_id)
     )`,
  );
}
