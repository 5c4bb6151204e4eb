// The reader's two entry points: analyseExport (the preview: what would be stored) and
// readReadings (the import: every reading, streamed in batches).
import { addEvidence, emptyEvidence, splitDateCell } from './dates.js';
import { makePlan, mappingOf, type Plan } from './plan.js';
import { HourlyAccumulator, METRIC_INDEX, newColumns } from './hourly.js';
import { Scanner, type RowOut } from './scan.js';
import { ReaderError } from './source.js';
import { openTables, type OpenedTables, type Table } from './table.js';
import {
  DEFAULT_LIMITS,
  type AnalyseOptions,
  type Analysis,
  type ConfirmedMapping,
  type ExportInput,
  type Layout,
  type PreviewRow,
  type Problem,
  type ReaderLimits,
  type ReadingColumns,
  type ReadOptions,
  type Reading,
  type ReadStats,
} from './types.js';

function emptyStats(): ReadStats {
  return {
    rows_read: 0,
    data_rows: 0,
    values: 0,
    skipped: { empty: 0, not_a_number: 0, out_of_range: 0 },
    skipped_by_column: [],
    rows_without_time: 0,
    dst: { repeated_hours: [], repeated_rows: 0, missing_hours: [], missing_rows_skipped: 0 },
  };
}

function fileNameOf(input: ExportInput): string | null {
  return input.fileName ?? ('path' in input ? (input.path.split(/[\\/]/).pop() ?? null) : null);
}

function baseLayout(table: Table | null, bytesRead: number): Layout {
  return {
    kind: table?.kind ?? 'csv',
    encoding: table?.encoding?.encoding ?? null,
    bom: table?.encoding?.bom ?? false,
    delimiter: table?.delimiter ?? null,
    decimal: '.',
    quoted: table?.quoted ?? false,
    sheet: table?.sheet ?? null,
    other_sheets: table?.otherSheets ?? [],
    header_rows: [],
    time: null,
    date_format: null,
    date_order: null,
    data_rows: null,
    trailing_rows_dropped: 0,
    compartments: [],
    bytes_read: bytesRead,
  };
}

function refused(
  input: ExportInput,
  options: AnalyseOptions,
  blocking: Problem[],
  warnings: Problem[],
  table: Table | null,
  bytesRead: number,
): Analysis {
  return {
    file_name: fileNameOf(input),
    layout: baseLayout(table, bytesRead),
    columns: [],
    time_zone: options.timeZone,
    time_range: null,
    first_rows: [],
    warnings,
    blocking,
    mapping: null,
    stats: emptyStats(),
  };
}

function limitsOf(options: AnalyseOptions): ReaderLimits {
  return { ...DEFAULT_LIMITS, ...(options.limits ?? {}) };
}

type Planned = Awaited<ReturnType<typeof makePlan>>;

/** Makes the plan for one table; `fullScanOrder` reads its date cells when the first rows leave the order open. */
function planFor(t: Table, options: AnalyseOptions): Promise<Planned> {
  return makePlan(t, options, async (col) => {
    const ev = emptyEvidence();
    // Stops at the first day above 12 (or a conflict): most files settle within a month.
    for await (const row of t.rows()) {
      const p = splitDateCell(row[col] ?? '');
      if (p) {
        addEvidence(ev, p);
        if (ev.firstOver12 > 0 || ev.secondOver12 > 0 || ev.ymd > 0) break;
      }
    }
    return ev;
  });
}

const isPlan = (p: Planned): p is Plan => 'time' in p && p.blocking.length === 0;
/** How well a sheet reads: a plan without blocking problems first, then one with a time column, then the most columns read. */
function score(p: Planned): [number, number, number] {
  const tier = isPlan(p) ? 2 : 'time' in p ? 1 : 0;
  const selected = 'selected' in p ? p.selected : [];
  const confidence = 'columns' in p ? p.columns.filter((c) => c.selected).reduce((a, c) => a + c.confidence, 0) : 0;
  return [tier, selected.length, confidence];
}
const better = (a: [number, number, number], b: [number, number, number]) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/**
 * The table to read and its plan. A workbook's sheets are all planned from their heads and the
 * one that reads best is taken (exports put cover sheets, charts and other registrations first);
 * `options.sheet` names one instead. The others are listed on the table with why.
 */
async function chooseTable(opened: OpenedTables, options: AnalyseOptions): Promise<{ table: Table; planned: Planned } | Problem> {
  const { tables, unreadable, sheetNames } = opened;
  const listOthers = (chosen: Table, why: (name: string) => string) => {
    chosen.otherSheets = sheetNames.filter((n) => n !== chosen.sheet).map((name) => ({ name, reason: why(name) }));
  };
  const unreadableWhy = (name: string) => unreadable.find((u) => u.sheet === name)?.problem.message;
  if (options.sheet !== undefined) {
    const named = tables.find((t) => t.sheet === options.sheet);
    if (!named) {
      const problem = unreadable.find((u) => u.sheet === options.sheet)?.problem;
      if (problem) throw problem;
      return {
        code: 'unknown_sheet',
        message:
          sheetNames.length === 0
            ? `the file is not a workbook: it has no sheet ${JSON.stringify(options.sheet)}`
            : `no sheet ${JSON.stringify(options.sheet)} in the workbook; its sheets: ${sheetNames.join(', ')}`,
      };
    }
    listOthers(named, (n) => unreadableWhy(n) ?? 'not asked for (sheet)');
    return { table: named, planned: await planFor(named, options) };
  }
  if (tables.length === 0) throw unreadable[0]!.problem;
  const tried: { table: Table; planned: Planned }[] = [];
  for (const table of tables) tried.push({ table, planned: await planFor(table, options) });
  let best = tried[0]!;
  for (const x of tried.slice(1)) if (better(score(x.planned), score(best.planned)) > 0) best = x;
  const chosen = best;
  const [, chosenColumns] = score(chosen.planned);
  listOthers(chosen.table, (name) => {
    const why = unreadableWhy(name);
    if (why) return why;
    const p = tried.find((x) => x.table.sheet === name)!.planned;
    if (p.blocking.length > 0) return p.blocking.map((b) => b.message).join('; ');
    return `fewer columns read as climate metrics (${score(p)[1]} against ${chosenColumns} on ${chosen.table.sheet})`;
  });
  return chosen;
}

async function prepare(
  input: ExportInput,
  options: AnalyseOptions,
): Promise<{ ok: true; table: Table; plan: Plan } | { ok: false; analysis: Analysis }> {
  let table: Table | null = null;
  try {
    const opened = await openTables(input, limitsOf(options));
    const chosen = await chooseTable(opened, options);
    if ('code' in chosen) return { ok: false, analysis: refused(input, options, [chosen], [], null, 0) };
    table = chosen.table;
    const planOrProblems = chosen.planned;
    if (!('time' in planOrProblems)) {
      return { ok: false, analysis: refused(input, options, planOrProblems.blocking, planOrProblems.warnings, table, table.bytesRead()) };
    }
    return { ok: true, table, plan: planOrProblems };
  } catch (err) {
    if (err instanceof ReaderError) {
      const blocking = [{ code: err.code, message: err.message }];
      return { ok: false, analysis: refused(input, options, blocking, [], table, err.bytesRead ?? table?.bytesRead() ?? 0) };
    }
    throw err;
  }
}

/**
 * Reads an export through once and says what an import would store, writing nothing.
 * Never throws for a bad file: problems come back in `blocking`. Throws RangeError for an
 * unknown time zone (a caller's mistake, not the file's).
 */
export async function analyseExport(input: ExportInput, options: AnalyseOptions): Promise<Analysis> {
  const prep = await prepare(input, options);
  if (!prep.ok) return prep.analysis;
  const { table, plan } = prep;
  const previewN = Math.min(200, Math.max(0, options.previewRows ?? 10));
  const scanner = new Scanner(plan, { delimiter: table.delimiter });
  const first: PreviewRow[] = [];
  const layout = baseLayout(table, 0);
  const blocking: Problem[] = [...plan.blocking];
  // With a blocking problem from the plan (dates that cannot be read in one order, columns that
  // do not fit) nothing would be stored: the file is not read through.
  const scan = plan.blocking.length === 0;
  const wantHours = Math.max(0, options.firstHours ?? 0);
  const hours = wantHours > 0 ? new HourlyAccumulator() : null;
  const metricOf = plan.selected.map((s) => METRIC_INDEX.get(s.metric) ?? -1);
  let stopAt = Infinity;
  let hoursDone = false;
  const onRow = (out: RowOut) => {
    if (hours && !hoursDone && out.count > 0) {
      if (stopAt === Infinity) stopAt = Math.floor(out.ms / HOUR) * HOUR + wantHours * HOUR;
      if (out.ms >= stopAt) hoursDone = true;
      else hours.addRow(out.ms, out.cols, metricOf, out.values, out.count);
    }
    if (first.length >= previewN) return;
    const values: Record<string, number> = {};
    for (let i = 0; i < out.count; i++) values[out.metrics[i]!] = out.values[i]!;
    first.push({ at: out.at, values });
  };
  try {
    if (scan) for await (const _ of scanPass(table, plan, scanner, onRow));
  } catch (err) {
    if (!(err instanceof ReaderError)) throw err;
    blocking.push({ code: err.code, message: err.message });
  }
  const { trailingRowsDropped } = scanner.finish();
  Object.assign(layout, {
    decimal: plan.decimal,
    header_rows: plan.headerRows,
    time: plan.time,
    date_format: plan.dateFormat,
    date_order: plan.blocking.some((b) => DATE_BLOCKERS.has(b.code)) ? null : plan.order,
    data_rows: scanner.firstDataRow ? { first: scanner.firstDataRow, last: scanner.lastDataRow } : null,
    trailing_rows_dropped: trailingRowsDropped,
    compartments: plan.compartments,
    bytes_read: table.bytesRead(),
  } satisfies Partial<Layout>);
  if (scan && scanner.stats.data_rows === 0 && blocking.length === 0) {
    blocking.push({ code: 'no_data_rows', message: 'no row holds a readable time' });
  }
  const zone = plan.zone;
  const warnings = passWarnings(plan, scanner);
  return {
    file_name: fileNameOf(input),
    layout,
    columns: plan.columns,
    time_zone: options.timeZone,
    time_range: scanner.stats.data_rows > 0 ? { from: zone.iso(scanner.minMs), to: zone.iso(scanner.maxMs) } : null,
    first_rows: first,
    warnings,
    blocking,
    mapping: blocking.length === 0 ? mappingOf(plan) : null,
    stats: scanner.stats,
    ...(hours ? { first_hours: hours.values({ timeZone: options.timeZone }) } : {}),
  };
}

const HOUR = 3_600_000;

const DATE_BLOCKERS = new Set(['ambiguous_date_order', 'inconsistent_dates', 'date_order_conflict']);

/** The plan's and the pass's warnings, as the analysis reports them and an import records them. */
function passWarnings(plan: Plan, scanner: Scanner): Problem[] {
  const warnings = [...plan.warnings, ...scanner.warnings];
  if (plan.dateOnly)
    warnings.push({ code: 'date_only', message: 'the time column holds dates without times: each reading is stamped at local midnight' });
  if (plan.time.kind === 'period')
    warnings.push({
      code: 'period_start_stamps',
      message: `each row covers a period (columns ${plan.time.start_column} to ${plan.time.end_column}); its reading is stamped with the period's start`,
    });
  return warnings;
}

/** One pass over the table: every data row goes to onRow; yields after each block. */
/** One pass over the table, each row with readings handed to onRow; yields after each block. */
async function* scanPass(table: Table, plan: Plan, scanner: Scanner, onRow: (out: RowOut) => void): AsyncGenerator<void> {
  for await (const block of table.scanBlocks(plan.decimal === ',')) {
    if (block.kind === 'text') {
      scanner.pushText(block.text, onRow);
    } else {
      for (const cells of block.rows) {
        const out = scanner.push(cells, block.decimal);
        if (out) onRow(out);
      }
    }
    yield;
  }
}

/**
 * scanPass for a reader that stores: a reader error mid-file (a line too long) is an
 * ExportRefused like a blocking problem found before the pass. (A preview reports it instead.)
 */
async function* storingPass(table: Table, plan: Plan, scanner: Scanner, onRow: (out: RowOut) => void): AsyncGenerator<void> {
  try {
    yield* scanPass(table, plan, scanner, onRow);
  } catch (err) {
    if (err instanceof ReaderError) throw new ExportRefused([{ code: err.code, message: err.message }]);
    throw err;
  }
}

export class ExportRefused extends Error {
  constructor(readonly blocking: Problem[]) {
    super(blocking.map((b) => b.message).join('; '));
  }
}

/** What a reader tells once its pass is over (null before). */
export interface ReadOutcome {
  stats: ReadStats | null;
  warnings: Problem[];
  /** The mapping the pass's plan amounts to: what an analysis would answer as `mapping`. */
  mapping: ConfirmedMapping | null;
}

/** The table and plan for a pass that stores; ExportRefused when the file cannot be imported. */
async function openPass(
  input: ExportInput,
  options: ReadOptions,
  withAt: boolean,
): Promise<{ table: Table; plan: Plan; scanner: Scanner }> {
  const prep = await prepare(input, options);
  if (!prep.ok) throw new ExportRefused(prep.analysis.blocking);
  const { table, plan } = prep;
  if (plan.blocking.length > 0) throw new ExportRefused(plan.blocking);
  return { table, plan, scanner: new Scanner(plan, { delimiter: table.delimiter, withAt }) };
}

/**
 * A pass whose readings are handed out in batches of `batchSize`: `fresh` makes an empty
 * batch, `add` appends reading `i` of a row to it. The outcome is filled as the pass goes.
 */
function batchedPass<B>(
  input: ExportInput,
  options: ReadOptions,
  withAt: boolean,
  fresh: (size: number) => B,
  add: (batch: B, out: RowOut, i: number) => void,
): AsyncIterable<B> & ReadOutcome {
  const batchSize = Math.max(1, options.batchSize ?? 5000);
  const result = {
    stats: null as ReadStats | null,
    warnings: [] as Problem[],
    mapping: null as ConfirmedMapping | null,
    async *[Symbol.asyncIterator](): AsyncGenerator<B> {
      const { table, plan, scanner } = await openPass(input, options, withAt);
      result.stats = scanner.stats;
      result.mapping = mappingOf(plan);
      let batch = fresh(batchSize);
      let filled = 0;
      const ready: B[] = [];
      const onRow = (out: RowOut) => {
        for (let i = 0; i < out.count; i++) {
          add(batch, out, i);
          if (++filled === batchSize) {
            ready.push(batch);
            batch = fresh(batchSize);
            filled = 0;
          }
        }
      };
      for await (const _ of storingPass(table, plan, scanner, onRow)) {
        while (ready.length > 0) yield ready.shift()!;
      }
      if (filled > 0) yield batch;
      scanner.finish();
      result.warnings = passWarnings(plan, scanner);
    },
  };
  return result;
}

/**
 * Every reading of the export, in batches, converted to canonical units. Detects the layout
 * first unless a mapping is given. Rejects with ExportRefused when the file has blocking
 * problems (before the first batch, or mid-file for a line that is too long).
 * `stats` (filled as the iteration goes), the warnings and the mapping used are available on
 * the returned object after the loop.
 */
export function readReadings(input: ExportInput, options: ReadOptions): AsyncIterable<Reading[]> & ReadOutcome {
  return batchedPass<Reading[]>(
    input,
    options,
    true,
    () => [],
    (batch, out, i) => {
      batch.push({ at: out.at, metric: out.metrics[i]!, value: out.values[i]! });
    },
  );
}

/**
 * readReadings' readings as columns (instants in epoch ms), without an object or an ISO text
 * per reading: what an import of every reading as read (the climate CSV route) stores.
 */
export function readColumns(input: ExportInput, options: ReadOptions): AsyncIterable<ReadingColumns> & ReadOutcome {
  return batchedPass(input, options, false, newColumns, (batch, out, i) => {
    const j = batch.length++;
    batch.ms[j] = out.ms;
    batch.metric[j] = out.metrics[i]!;
    batch.value[j] = out.values[i]!;
  });
}

/**
 * The export's hourly values (see aggregateHourly), read in one pass without an object per
 * reading: what an import of a climate-computer export stores. Detects the layout first
 * unless a mapping is given; read() rejects with ExportRefused as readReadings does. The
 * outcome (stats, warnings, mapping) is filled by read().
 */
export function readHourly(
  input: ExportInput,
  options: AnalyseOptions,
): { read(afterRow?: (acc: HourlyAccumulator) => void): Promise<HourlyAccumulator> } & ReadOutcome {
  const result = {
    stats: null as ReadStats | null,
    warnings: [] as Problem[],
    mapping: null as ConfirmedMapping | null,
    /** `afterRow` sees the accumulator after each data row (to take finished hours while reading). */
    async read(afterRow?: (acc: HourlyAccumulator) => void): Promise<HourlyAccumulator> {
      const { table, plan, scanner } = await openPass(input, options, false);
      result.stats = scanner.stats;
      result.mapping = mappingOf(plan);
      const acc = new HourlyAccumulator();
      // The vocabulary index of each selected column's metric (a mapping names only known metrics).
      const metricOf = plan.selected.map((s) => METRIC_INDEX.get(s.metric) ?? -1);
      const onRow = afterRow
        ? (out: RowOut) => {
            acc.addRow(out.ms, out.cols, metricOf, out.values, out.count);
            afterRow(acc);
          }
        : (out: RowOut) => acc.addRow(out.ms, out.cols, metricOf, out.values, out.count);
      for await (const _ of storingPass(table, plan, scanner, onRow));
      scanner.finish();
      result.warnings = passWarnings(plan, scanner);
      return acc;
    },
  };
  return result;
}
