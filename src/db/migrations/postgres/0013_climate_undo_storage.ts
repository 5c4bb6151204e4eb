import type { Kysely } from 'kysely';
import { statements } from '../../ddl.js';

// Forward-only: never edit a migration that has shipped; add the next number.
//
// An import's undo record holds, per metric, the instants it added and changed as packed float64
// (src/climate/imports/point-storage.ts packFloats): about 70 kB a metric for a year of hours.
// PostgreSQL compressed each with pglz before storing it out of line: to about 60 % of its size,
// at about 2 ms a metric, 67–117 ms of a year's import (docs/postgres.md, "Bulk paths"). EXTERNAL
// keeps them out of line, uncompressed: about 0.8 MB more for a year of 28 metrics, a rare import.
// It applies to values written from now on.
export async function up(db: Kysely<any>): Promise<void> {
  await statements(
    db,
    `ALTER TABLE climate_import_undo ALTER COLUMN added SET STORAGE EXTERNAL, ALTER COLUMN updated SET STORAGE EXTERNAL`,
  );
}
