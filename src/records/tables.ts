import type { SyncedColumns } from '../db/schema.js';

/** The registry parents every record on a cycle carries, so it can be found and cascaded by any of them. */
export interface CycleColumns extends SyncedColumns {
  farm_id: string;
  greenhouse_id: string;
  row_id: string;
  cycle_id: string;
}

export interface HarvestTable extends CycleColumns {
  /** ISO week label. */
  week: string;
  kg: number;
  note: string | null;
  /** Local date in the greenhouse zone, inside `week`. */
  harvested_on: string | null;
}

export interface IrrigationTable extends CycleColumns {
  /** UTC instant, ISO 8601. */
  at: string;
  volume_l: number | null;
  drain_l: number | null;
  ec_in: number | null;
  ec_drain: number | null;
  ph_in: number | null;
  ph_drain: number | null;
  duration_min: number | null;
  note: string | null;
}

export interface FruitMassTable extends CycleColumns {
  week: string;
  green_g: number;
  turning_g: number;
  red_g: number;
}

export interface TrussCountTable extends CycleColumns {
  counted_on: string;
  /** Stem density in force from this date until the next date that carries one (stems/m²); migration 0009. */
  stems_per_m2: number | null;
}

export interface TrussCountRowTable extends CycleColumns {
  count_id: string;
  counted_on: string;
  /** Index of the row in the saved request, to answer rows in the order they were typed. */
  position: number;
  plant: string;
  truss: number;
  fruits: number;
  flowers: number | null;
}

export interface WeekNoteTable extends CycleColumns {
  week: string;
  /** The saved object, as JSON text. */
  body: string;
}

declare module '../db/schema.js' {
  interface Database {
    harvests: HarvestTable;
    irrigation_entries: IrrigationTable;
    fruit_masses: FruitMassTable;
    truss_counts: TrussCountTable;
    truss_count_rows: TrussCountRowTable;
    week_notes: WeekNoteTable;
  }
}
