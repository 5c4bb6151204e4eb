// From a table's first rows and the caller's options to a reading plan: which rows are
// headers, how time cells read, which column goes to which metric in which unit.
import { createHash } from 'node:crypto';
import { climateMetric, DAILY_OF, isClimateMetric } from '../metrics.js';
import { conversion, parseUnit, unitBySymbol, type UnitDef } from '../../units/units.js';
import { guessColumn, MAX_HEADER_CELL, sameCompartment, type ColumnGuess, type HeaderCells } from './columns.js';
import {
  describeDateFormat,
  emptyEvidence,
  parseTimeCell,
  serialToWall,
  splitDateCell,
  wallFromParts,
  type CellOrder,
  type WallClock,
} from './dates.js';
import { decideOrder, detectDecimal, detectTime, headerRoles, orderEvidence, stampColumn, timeColumns } from './layout.js';
import { ZoneClock } from './local-time.js';
import type { Table } from './table.js';
import type { AnalyseOptions, ColumnReport, ConfirmedMapping, HeaderRole, Problem, TimeSpec } from './types.js';

export interface SelectedColumn {
  index: number;
  metric: string;
  unit: string;
  conversion: string | null;
  apply: (v: number) => number;
  lo: number;
  hi: number;
}

export interface Plan {
  headerRows: { row: number; role: HeaderRole }[];
  firstDataRow: number;
  time: TimeSpec;
  order: CellOrder;
  serial: boolean;
  dateOnly: boolean;
  dateFormat: string;
  decimal: '.' | ',';
  columns: ColumnReport[];
  selected: SelectedColumn[];
  compartments: string[];
  compartment: string | null;
  fingerprint: string;
  zone: ZoneClock;
  warnings: Problem[];
  blocking: Problem[];
}

export function fingerprintOf(headerRows: string[][]): string {
  const h = createHash('sha256');
  for (const r of headerRows) h.update(JSON.stringify(r.map((c) => c.trim().normalize('NFC'))));
  return h.digest('hex').slice(0, 32);
}

export type TimeReader = (row: string[]) => WallClock | null;

export function timeReader(spec: TimeSpec, order: CellOrder, serial: boolean): TimeReader {
  const readDate = (cell: string | undefined): WallClock | null => {
    if (cell === undefined) return null;
    if (serial) {
      const t = cell.trim();
      return /^\d+(?:\.\d+)?$/.test(t) ? serialToWall(+t) : null;
    }
    const p = splitDateCell(cell);
    return p ? wallFromParts(p, order) : null;
  };
  if (spec.kind === 'single') return (row) => readDate(row[spec.column]);
  if (spec.kind === 'period') return (row) => readDate(row[spec.start_column]);
  // A date column repeats its cell for a whole day of rows: read each date once. Time cells
  // repeat every day: each is read once (while there are few kinds, as in every export).
  let lastCell: string | undefined;
  let lastDate: WallClock | null = null;
  const times = new Map<string, ReturnType<typeof parseTimeCell>>();
  return (row) => {
    const cell = row[spec.date_column];
    if (cell !== lastCell) {
      lastCell = cell;
      lastDate = readDate(cell);
    }
    const d = lastDate;
    const t = row[spec.time_column];
    if (!d || t === undefined) return null;
    let tt = times.get(t);
    if (tt === undefined) {
      tt = parseTimeCell(t);
      if (times.size >= 4096) times.clear();
      times.set(t, tt);
    }
    if (!tt) return null;
    return { y: d.y, mo: d.mo, d: d.d, h: tt[0], mi: tt[1], s: tt[2], ms: tt[3], offset: d.offset };
  };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor(s.length / 2)]! : Number.NaN;
}

function numberReader(decimal: '.' | ','): (cell: string) => number | null {
  // Number() does the work; what it accepts beyond decimal numbers (hex, binary, octal,
  // Infinity, blanks) is refused around it.
  return (cell) => {
    let t = cell;
    const c0 = t.charCodeAt(0);
    if (c0 === 32 || c0 === 9 || t.charCodeAt(t.length - 1) === 32) t = t.trim();
    if (t.length === 0) return null;
    if (decimal === ',') {
      if (t.indexOf('.') !== -1) t = t.replace(/\.(?=\d{3}(?:[.,]|$))/g, '');
      t = t.replace(',', '.');
    }
    const n = +t;
    if (n !== n || n === Infinity || n === -Infinity) return null;
    if (t.length > 2 && t.charCodeAt(0) === 48) {
      const c1 = t.charCodeAt(1) | 32; // 0x.., 0b.., 0o.. are not readings
      if (c1 === 120 || c1 === 98 || c1 === 111) return null;
    }
    return n;
  };
}

export { numberReader };

function report(g: ColumnGuess): ColumnReport {
  const def = g.metric ? climateMetric(g.metric) : null;
  const c = def && g.unit ? conversion(g.unit, def.unit) : null;
  return {
    index: g.index,
    header: g.header,
    name: g.name,
    compartment: g.compartment,
    metric: g.metric,
    unit: g.unit?.symbol ?? (g.unitAssumed && def ? def.unit : null),
    canonical_unit: def?.unit ?? null,
    conversion: c && !c.identity ? c.label : null,
    confidence: g.metric ? g.confidence : 0,
    reason: g.reason,
    setpoint: g.setpoint,
    selected: false,
  };
}

function select(col: ColumnReport, metric: string, unit: UnitDef | null): SelectedColumn | Problem {
  const def = climateMetric(metric);
  if (!def)
    return { code: 'unknown_metric', message: `column ${col.index} (${col.header}): unknown metric '${metric}'`, column: col.index };
  const from = unit ?? unitBySymbol(def.unit)!;
  const c = conversion(from, def.unit);
  if (!c) {
    return {
      code: 'unit_not_convertible',
      message: `column ${col.index} (${col.header}): ${from.symbol} cannot be converted to ${def.unit} for ${metric}`,
      column: col.index,
    };
  }
  col.selected = true;
  col.metric = metric;
  col.unit = from.symbol;
  col.canonical_unit = def.unit;
  col.conversion = c.identity ? null : c.label;
  col.setpoint = def.setpoint;
  return { index: col.index, metric, unit: from.symbol, conversion: col.conversion, apply: c.apply, lo: def.range[0], hi: def.range[1] };
}

function isProblem(x: SelectedColumn | Problem): x is Problem {
  return 'code' in x;
}

/**
 * Builds the plan. `fullScanOrder` reads the whole file's date cells when the first rows
 * leave day-month order open; it is only called when needed.
 */
export async function makePlan(
  table: Table,
  options: AnalyseOptions,
  fullScanOrder: (col: number) => Promise<ReturnType<typeof emptyEvidence>>,
): Promise<Plan | { blocking: Problem[]; warnings: Problem[]; headerRows?: Plan['headerRows'] }> {
  const warnings: Problem[] = [];
  const blocking: Problem[] = [];
  const zone = new ZoneClock(options.timeZone);
  const rows = table.head;
  const sepHint = rows[0]?.length === 1 && /^sep=.$/.test(rows[0][0]!) ? 1 : 0;
  const body = rows.slice(sepHint);
  const det = detectTime(body);
  if (!det) {
    const wide = body.some((r) => r.length > 1);
    blocking.push(
      wide
        ? {
            code: 'no_time_column',
            message:
              'no column reads as dates and times in the first rows (ISO, day-month-year, month-day-year, Excel serial days, or separate date and time columns)',
          }
        : { code: 'not_a_table', message: 'the file does not hold a table of columns' },
    );
    return { blocking, warnings };
  }
  const firstDataRow = det.firstDataRow + sepHint;
  const headerRowsText = rows.slice(sepHint, firstDataRow).map((r) => r.map((c) => c.slice(0, MAX_HEADER_CELL)));
  const tcols = new Set(timeColumns(det.spec).map((c) => c));
  const roles = headerRoles(headerRowsText, tcols);
  const headerRows: Plan['headerRows'] = [];
  if (sepHint) headerRows.push({ row: 1, role: 'delimiter_hint' });
  roles.forEach((role, i) => headerRows.push({ row: sepHint + i + 1, role }));
  // Columns are file columns: a sep= line shifts rows, never columns.
  const adjusted: TimeSpec = det.spec;

  const dataHead = rows.slice(firstDataRow);
  const ncols = Math.max(0, ...headerRowsText.map((r) => r.length), ...dataHead.slice(0, 20).map((r) => r.length));
  const nameRow = headerRowsText[roles.indexOf('names')] ?? [];
  const unitRow = roles.includes('units') ? headerRowsText[roles.indexOf('units')]! : null;
  const compRow = roles.includes('compartments') ? headerRowsText[roles.indexOf('compartments')]! : null;
  let lastComp: string | null = null;
  const guesses: ColumnGuess[] = [];
  for (let j = 0; j < ncols; j++) {
    let comp = compRow?.[j]?.trim() || null;
    if (compRow) {
      if (comp) lastComp = comp;
      else comp = lastComp;
    }
    if (tcols.has(j)) continue;
    const cells: HeaderCells = { index: j, name: nameRow[j] ?? '', compartmentCell: comp, unitCell: unitRow?.[j] ?? null };
    guesses.push(guessColumn(cells));
  }

  // Date order
  let order: CellOrder = 'ymd';
  const optOrder = options.mapping ? (options.mapping.date_order === 'ymd' ? undefined : options.mapping.date_order) : options.dateOrder;
  let sampleSep = '-';
  let yearDigits = 4;
  let named = false;
  if (!det.serial) {
    const col = stampColumn(adjusted);
    const ev = orderEvidence(dataHead, col);
    const sample = dataHead.map((r) => splitDateCell(r[col] ?? '')).find((p) => p);
    if (sample) {
      sampleSep = sample.sep;
      yearDigits = sample.aDigits === 4 ? 4 : sample.cDigits;
      named = sample.named;
    }
    let decided = decideOrder(ev);
    if (decided === 'ambiguous' && !table.headIsAll) decided = decideOrder(await fullScanOrder(col));
    if (decided === 'conflict') {
      blocking.push({
        code: 'inconsistent_dates',
        message: 'the date cells mix orders (a first part above 12 in some rows, a second part above 12 in others)',
      });
    } else if (decided === 'ambiguous') {
      if (optOrder) order = optOrder;
      else
        blocking.push({
          code: 'ambiguous_date_order',
          message:
            'every day in the file is 12 or less, so day-month-year and month-day-year read differently: send date_order (dmy or mdy)',
        });
    } else if (decided) {
      if (optOrder && decided !== 'ymd' && decided !== optOrder) {
        blocking.push({
          code: 'date_order_conflict',
          message: `date_order ${optOrder} was sent, but the file's dates only read as ${decided}`,
        });
      }
      order = decided;
    }
  }
  const dateFormat = blocking.some((b) => b.code === 'ambiguous_date_order')
    ? `${describeDateFormat('dmy', sampleSep, yearDigits, false)} or ${describeDateFormat('mdy', sampleSep, yearDigits, false)}`
    : describeDateFormat(order, sampleSep, yearDigits, det.serial, named);

  const decimal = table.kind === 'xlsx' ? '.' : detectDecimal(dataHead.slice(0, 50), tcols, table.delimiter);
  const readNumber = numberReader(decimal);

  // A VPD column without a unit whose values are in hPa (as in Danish exports: ~10 for 1 kPa).
  for (const g of guesses) {
    if (g.metric === 'vpd' && g.unitAssumed) {
      const vals = dataHead
        .slice(0, 100)
        .map((r) => readNumber(r[g.index] ?? ''))
        .filter((v): v is number => v !== null && v > 0);
      if (vals.length > 0 && median(vals) > 3.5) {
        g.unit = parseUnit('hPa');
        g.unitAssumed = false;
        g.reason = g.reason.replace(
          /; no unit in the file, kPa assumed$/,
          '; no unit in the file, values around ' + Math.round(median(vals)) + ' read as hPa',
        );
      }
    }
  }

  // Rows of whole days: an amount per row is that day's total, a daily metric of its own. Finer
  // rows: an energy column is an amount per row, not a day's total, and is not read as one.
  for (const g of guesses) {
    if (!g.metric) continue;
    if (det.dateOnly && DAILY_OF[g.metric]) {
      g.metric = DAILY_OF[g.metric]!;
      g.reason += "; the rows are days, so each value is the day's total";
    } else if (!det.dateOnly && climateMetric(g.metric)!.daily && g.metric !== 'daily_light_integral') {
      g.reason += `; read as ${g.metric} only from rows of whole days (these rows have times)`;
      g.metric = null;
      g.confidence = 0;
    }
  }

  const columns = guesses.map(report);
  for (const g of guesses) {
    if (g.emptyName && (nameRow[g.index] !== undefined || g.header !== '')) {
      const hasData = dataHead.slice(0, 20).some((r) => (r[g.index] ?? '').trim() !== '');
      if (g.header !== '' || hasData) {
        warnings.push({ code: 'empty_column_name', message: `column ${g.index} has no name and is ignored`, column: g.index });
      }
    }
  }
  const compartments = [...new Set(columns.filter((c) => c.compartment).map((c) => c.compartment!))];
  const byIndex = new Map(columns.map((c) => [c.index, c]));
  const selected: SelectedColumn[] = [];
  let compartment: string | null = null;
  const fingerprint = fingerprintOf(headerRowsText);

  if (options.columns && options.columns.length > 0) {
    for (const choice of options.columns) {
      const col =
        typeof choice.column === 'number'
          ? byIndex.get(choice.column)
          : (columns.find((c) => c.header === choice.column) ?? columns.find((c) => c.name === choice.column));
      if (!col) {
        blocking.push({ code: 'unknown_column', message: `no column ${JSON.stringify(choice.column)} in the file` });
        continue;
      }
      let unit: UnitDef | null = null;
      if (choice.unit !== undefined) {
        unit = unitBySymbol(choice.unit) ?? parseUnit(choice.unit);
        if (!unit) {
          blocking.push({ code: 'unknown_unit', message: `column ${col.index}: unknown unit '${choice.unit}'`, column: col.index });
          continue;
        }
      } else if (col.unit) unit = unitBySymbol(col.unit);
      if (!isClimateMetric(choice.metric)) {
        blocking.push({ code: 'unknown_metric', message: `column ${col.index}: unknown metric '${choice.metric}'`, column: col.index });
        continue;
      }
      if (selected.some((s) => s.index === col.index)) {
        blocking.push({ code: 'duplicate_column', message: `column ${col.index} is named twice`, column: col.index });
        continue;
      }
      const s = select(col, choice.metric, unit);
      if (isProblem(s)) blocking.push(s);
      else {
        col.reason = 'named by the caller';
        col.confidence = 1;
        selected.push(s);
      }
    }
  } else if (options.mapping) {
    const m = options.mapping;
    if (m.fingerprint !== fingerprint) {
      blocking.push({
        code: 'mapping_mismatch',
        message: 'the confirmed mapping was made for a file with other header rows; preview this file and confirm its own mapping',
      });
    } else {
      compartment = m.compartment;
      for (const mc of m.columns) {
        const col = byIndex.get(mc.index);
        if (!col) {
          blocking.push({ code: 'unknown_column', message: `mapping names column ${mc.index}, which the file does not have` });
          continue;
        }
        const unit = unitBySymbol(mc.unit) ?? parseUnit(mc.unit);
        const s = select(col, mc.metric, unit);
        if (isProblem(s)) blocking.push(s);
        else {
          col.reason = 'confirmed mapping';
          selected.push(s);
        }
      }
    }
  } else {
    // Detection: one compartment, then the most confident column per metric.
    if (options.compartment !== undefined && options.compartment !== '') {
      const found = compartments.find((c) => sameCompartment(c, options.compartment!));
      if (!found) {
        blocking.push({
          code: 'unknown_compartment',
          message: `no compartment '${options.compartment}' in the file; found: ${compartments.join(', ') || 'none'}`,
        });
      }
      compartment = found ?? null;
    } else if (compartments.length > 1) {
      const mapped = (c: string) => columns.filter((x) => x.metric && x.compartment === c).length;
      compartment = [...compartments].sort((a, b) => mapped(b) - mapped(a))[0]!;
      warnings.push({
        code: 'compartment_chosen',
        message: `the file holds compartments ${compartments.join(', ')}; ${compartment} (the most columns) is read, the others are left out. Send compartment to choose.`,
      });
    } else {
      compartment = compartments[0] ?? null;
    }
    const eligible = columns.filter((c) => c.metric && (!compartment || !c.compartment || c.compartment === compartment));
    for (const c of columns) {
      if (c.metric && compartment && c.compartment && c.compartment !== compartment) c.reason += `; compartment ${c.compartment} not read`;
    }
    const byMetric = new Map<string, ColumnReport[]>();
    for (const c of eligible) byMetric.set(c.metric!, [...(byMetric.get(c.metric!) ?? []), c]);
    for (const [metric, cands] of byMetric) {
      const usable = cands.filter((c) => {
        const def = climateMetric(metric)!;
        return c.unit !== null && conversion(c.unit, def.unit) !== null;
      });
      for (const c of cands) {
        if (!usable.includes(c)) {
          warnings.push({
            code: 'unit_not_convertible',
            message: `column ${c.index} (${c.header}) looks like ${metric} but its unit ${c.unit ?? '(unknown)'} cannot be converted to ${climateMetric(metric)!.unit}; not read`,
            column: c.index,
          });
        }
      }
      if (usable.length === 0) continue;
      const ranked = [...usable].sort(
        (a, b) => b.confidence - a.confidence || Number(!!b.compartment) - Number(!!a.compartment) || a.index - b.index,
      );
      const winner = ranked[0]!;
      const s = select(winner, metric, unitBySymbol(winner.unit!) ?? parseUnit(winner.unit!));
      if (!isProblem(s)) selected.push(s);
      if (ranked.length > 1) {
        for (const other of ranked.slice(1)) other.reason += `; column ${winner.index} is read for ${metric}`;
        warnings.push({
          code: 'duplicate_metric',
          message: `${ranked.length} columns read as ${metric}: column ${winner.index} (${winner.header}) is read, not ${ranked
            .slice(1)
            .map((o) => `column ${o.index} (${o.header})`)
            .join(', ')}. Name columns to choose another.`,
          column: winner.index,
        });
      }
    }
  }
  for (const c of columns) if (c.metric === null && !c.reason.startsWith('empty')) c.confidence = 0;
  const emptyNames = new Set(guesses.filter((g) => g.emptyName).map((g) => g.index));
  const unknown = columns.filter((c) => !c.metric && !emptyNames.has(c.index));
  if (unknown.length > 0) {
    warnings.push({
      code: 'unmapped_columns',
      message: `${unknown.length} column(s) not recognised and not read: ${unknown
        .slice(0, 10)
        .map((c) => c.header)
        .join('; ')}${unknown.length > 10 ? '; …' : ''}`,
      count: unknown.length,
    });
  }
  if (selected.length === 0 && blocking.length === 0) {
    blocking.push({ code: 'no_mapped_columns', message: 'no column reads as a climate metric; name the columns (columns) to import them' });
  }
  selected.sort((a, b) => a.index - b.index);
  return {
    headerRows,
    firstDataRow,
    time: adjusted,
    order,
    serial: det.serial,
    dateOnly: det.dateOnly,
    dateFormat,
    decimal,
    columns,
    selected,
    compartments,
    compartment,
    fingerprint,
    zone,
    warnings,
    blocking,
  };
}

export function mappingOf(plan: Plan): ConfirmedMapping {
  return {
    version: 1,
    fingerprint: plan.fingerprint,
    time: plan.time,
    date_order: plan.order,
    compartment: plan.compartment,
    columns: plan.selected.map((s) => ({
      index: s.index,
      header: plan.columns.find((c) => c.index === s.index)!.header,
      metric: s.metric,
      unit: s.unit,
    })),
  };
}
