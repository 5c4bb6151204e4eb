import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Db } from '../../db/database.js';
import type { Actor, Store } from '../../db/store.js';
import type { Clock } from '../../clock.js';
import type { CycleScope } from '../../registry/scope.js';
import {
  analyseExport,
  readColumns,
  readHourly,
  ExportRefused,
  type Analysis,
  type AnalyseOptions,
  type ConfirmedMapping,
  type Problem,
  type ReadOutcome,
} from '../exports-reader/index.js';
import { storeImport } from './engine.js';
import { NotInTimeOrder, readHourlyOnThread } from './reader-thread.js';
import { cycleKeyOf } from '../readings/points.js';
import { saveMapping, savedMapping } from './mappings.js';
import { outsideCycleWarning } from './cycle-dates.js';
import type { ClimateImportTable, ImportKind } from './tables.js';
import { Conflict, Invalid, Refused } from '../../errors.js';

/** What the import functions need of the running service; plain values, no Koa. */
export interface ClimateDeps {
  db: Db;
  store: Store;
  clock: Clock;
}

/** An export on disk (an upload spooled by the pipeline, or a file in the watched folder). */
export interface ExportFile {
  path: string;
  fileName: string;
  size: number;
}

/** The caller's choices: columns named by hand win over a confirmed mapping, which wins over detection. */
export interface ExportChoices {
  columns?: AnalyseOptions['columns'];
  mapping?: ConfirmedMapping;
  compartment?: string;
  dateOrder?: 'dmy' | 'mdy';
  /** A workbook's sheet, by name. */
  sheet?: string;
}

export async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

function optionsFor(scope: CycleScope, choices: ExportChoices, previewRows?: number): AnalyseOptions {
  // The reader applies the precedence itself; sending only the winner keeps the record honest.
  const o: AnalyseOptions = { timeZone: scope.zone, ...(previewRows ? { previewRows } : {}) };
  if (choices.columns && choices.columns.length > 0) o.columns = choices.columns;
  else if (choices.mapping) o.mapping = choices.mapping;
  if (choices.compartment !== undefined) o.compartment = choices.compartment;
  if (choices.dateOrder !== undefined) o.dateOrder = choices.dateOrder;
  if (choices.sheet !== undefined) o.sheet = choices.sheet;
  return o;
}

/** 400 `climate_file_blocked` listing the file's blocking problems. */
export function fileBlocked(blocking: Problem[]): Refused {
  return new Refused(
    'climate_file_blocked',
    `The file cannot be imported: ${blocking.map((b) => b.message).join('; ')}. Nothing was stored.`,
    { blocking },
  );
}

const MAPPING_CODES = new Set(['mapping_mismatch', 'unknown_column']);

/** Whether the problems say the file is not the one a saved mapping was made for. */
export function mappingDoesNotFit(blocking: Problem[]): boolean {
  return blocking.some((b) => MAPPING_CODES.has(b.code));
}

export interface StoredCount {
  metric: string;
  readings: number;
}

/** Readings already stored in the cycle per metric between two instants (inclusive). */
export async function storedInRange(db: Db, cycleId: string, from: string, to: string): Promise<StoredCount[]> {
  const key = await cycleKeyOf(db, cycleId);
  if (key === undefined) return [];
  const rows = await db
    .selectFrom('climate_points as p')
    .innerJoin('climate_metric_codes as m', 'm.code', 'p.metric_code')
    .select(['m.metric', (eb) => eb.fn.countAll<number>().as('n')])
    .where('p.cycle_key', '=', key)
    .where('p.at_ms', '>=', Date.parse(from))
    .where('p.at_ms', '<=', Date.parse(to))
    .groupBy('m.metric')
    .orderBy('m.metric')
    .execute();
  return rows.map((r) => ({ metric: r.metric, readings: Number(r.n) }));
}

/** Preview of a climate CSV: the reader's analysis of what an upload would store. Writes nothing. */
export async function previewCsv(scope: CycleScope, file: ExportFile, choices: ExportChoices): Promise<Analysis> {
  return withCycleDates(scope, await analyseExport({ path: file.path, fileName: file.fileName }, optionsFor(scope, choices, 20)));
}

/** The analysis, with a warning when the file's readings lie outside the cycle's days. */
function withCycleDates<A extends Pick<Analysis, 'warnings' | 'time_range'>>(scope: CycleScope, analysis: A): A {
  const outside = outsideCycleWarning(scope.cycle, scope.zone, analysis.time_range);
  return outside ? { ...analysis, warnings: [...analysis.warnings, outside] } : analysis;
}

export const PREVIEW_HOURS = 24;

export interface HourPreview {
  hour: string;
  values: Record<string, number>;
}

/**
 * Preview of a climate-computer export: the analysis, the first hours as the
 * import would store them (from the same pass over the file), and how many
 * readings the cycle already holds in the file's time range (those hours would
 * be updated, not doubled).
 */
export async function previewFile(
  db: Db,
  scope: CycleScope,
  file: ExportFile,
  choices: ExportChoices,
): Promise<Omit<Analysis, 'first_hours'> & { first_hours: HourPreview[]; already_stored: StoredCount[] }> {
  const { first_hours: hours = [], ...analysis } = await analyseExport(
    { path: file.path, fileName: file.fileName },
    { ...optionsFor(scope, choices, 20), firstHours: PREVIEW_HOURS },
  );
  const firstHours: HourPreview[] = [];
  if (analysis.blocking.length === 0 && analysis.mapping) {
    const byHour = new Map<string, HourPreview>();
    for (const h of hours) {
      let row = byHour.get(h.hour);
      if (!row) byHour.set(h.hour, (row = { hour: h.hour, values: {} }));
      row.values[h.metric] = h.value;
    }
    firstHours.push(...[...byHour.values()].slice(0, PREVIEW_HOURS));
  }
  const alreadyStored = analysis.time_range
    ? await storedInRange(db, scope.cycle.id, analysis.time_range.from, analysis.time_range.to)
    : [];
  return { ...withCycleDates(scope, analysis), first_hours: firstHours, already_stored: alreadyStored };
}

export interface ImportRequest {
  kind: ImportKind;
  actor: Actor;
  /** The import record's `actor`: `key:<id>`, `admin-token`, `watcher`. */
  actorLabel: string;
  /** Climate-computer exports are stored as hourly values; climate CSVs as read. */
  hourly: boolean;
  choices: ExportChoices;
  /** Save the mapping used as the greenhouse's column choices, in the same transaction. */
  remember?: boolean;
  /** Set by ingest: the saved mapping must fit the file, else 422. */
  mappingMustFit?: boolean;
}

/**
 * Imports one export into a cycle, in one transaction, in one pass over the file. Without a
 * confirmed mapping the reader settles the layout from the file's head first (the plan an
 * analysis would make), so a file with blocking problems is refused (400) before anything is
 * written; a problem found later in the file (a line too long) rolls everything back.
 * Hourly values are read on the reader thread and written as its hours are finished.
 */
export async function importExport(
  deps: ClimateDeps,
  scope: CycleScope,
  file: ExportFile,
  req: ImportRequest,
): Promise<ClimateImportTable & { duplicates: number; remembered: boolean }> {
  const input = { path: file.path, fileName: file.fileName };
  const options = optionsFor(scope, req.choices);
  // A confirmed mapping is recorded as sent; detection and named columns record what they settled on.
  const given = options.columns ? undefined : options.mapping;
  const hashing = sha256File(file.path);
  // Awaited in storeImport, which may fail before it gets there: not an unhandled rejection then.
  hashing.catch(() => undefined);
  const meta = {
    kind: req.kind,
    fileName: file.fileName,
    // Hashed while the file is read; storeImport awaits it.
    contentHash: hashing,
    sizeBytes: file.size,
    actor: req.actorLabel,
  };
  const rowsRead = (reader: ReadOutcome) => () => reader.stats?.data_rows ?? 0;
  const warnings = (reader: ReadOutcome) => (range: { from: number; to: number } | null) => [
    ...reader.warnings.map((w) => w.message),
    ...[outsideCycleWarning(scope.cycle, scope.zone, range)?.message ?? []].flat(),
  ];
  // The analysis refuses a file without a readable time in any row; a confirmed mapping's import records it as empty.
  const checkRows = (reader: ReadOutcome) => {
    if (!given && (reader.stats?.data_rows ?? 0) === 0)
      throw new ExportRefused([{ code: 'no_data_rows', message: 'no row holds a readable time' }]);
  };

  const store = (reader: ReadOutcome, mapping: () => ConfirmedMapping, batches: Parameters<typeof storeImport>[3]) =>
    deps.store.write(
      req.actor,
      async (w) => {
        const row = await storeImport(
          w,
          scope.cycle,
          { ...meta, mapping, warnings: warnings(reader), rowsRead: rowsRead(reader) },
          batches,
        );
        checkRows(reader);
        if (req.remember) await saveMapping(w, scope.greenhouse, mapping(), file.fileName);
        return { ...row, remembered: req.remember === true };
      },
      // The file is read once, as the import writes; on PostgreSQL the organization's writers
      // wait for it (no other write can invalidate what it checked), and what cannot be run
      // twice answers 503 rather than being run again.
      { organization: scope.cycle.organization_id, retry: false },
    );

  try {
    if (req.hourly) {
      // Written while the reader thread reads: the transaction is open for about the time
      // of the reading, and the event loop does none of the parsing.
      try {
        const reader = readHourlyOnThread(input, options);
        return await store(reader, () => given ?? reader.mapping!, reader.batches);
      } catch (err) {
        if (!(err instanceof NotInTimeOrder)) throw err;
      }
      // Rows out of time order: every hour is made before anything is written.
      const reader = readHourly(input, options);
      const hours = await reader.read();
      return await store(reader, () => given ?? reader.mapping!, hours.columns(5000));
    }
    const reader = readColumns(input, { ...options, batchSize: 5000 });
    return await store(reader, () => given ?? reader.mapping!, reader);
  } catch (err) {
    if (err instanceof ExportRefused) throw refusal(err.blocking, req);
    throw err;
  }
}

function refusal(blocking: Problem[], req: ImportRequest): Invalid | Refused {
  if (req.mappingMustFit && mappingDoesNotFit(blocking)) {
    return new Invalid(
      [{ in: 'body', name: '(body)', message: 'does not have the columns of the saved column choices' }],
      `The file does not match the greenhouse's saved column choices: ${blocking.map((b) => b.message).join('; ')}. Nothing was stored.`,
      'mapping_mismatch',
      { blocking },
    );
  }
  return fileBlocked(blocking);
}

/**
 * An export a script posted: imported with the greenhouse's saved column choices, which must
 * fit the file (409 `no_saved_mapping` without them, 422 `mapping_mismatch` when they do not fit).
 */
export async function ingestExport(deps: ClimateDeps, scope: CycleScope, file: ExportFile, actor: Actor, actorLabel: string) {
  const mapping = await requireSavedMapping(deps.db, scope.greenhouse.id);
  return importExport(deps, scope, file, { kind: 'ingest', actor, actorLabel, hourly: true, choices: { mapping }, mappingMustFit: true });
}

/** The greenhouse's saved mapping, or 409 `no_saved_mapping`. */
export async function requireSavedMapping(db: Db, greenhouseId: string): Promise<ConfirmedMapping> {
  const saved = await savedMapping(db, greenhouseId);
  if (!saved) {
    throw new Conflict(
      'This greenhouse has no saved column choices: preview a file with POST {cycle}/climate/file/preview and import it with remember=true first.',
      {},
      'no_saved_mapping',
    );
  }
  return JSON.parse(saved.mapping) as ConfirmedMapping;
}
