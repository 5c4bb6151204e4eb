// From header cells to a metric and unit per column, with a confidence and the reason.
import { climateMetric } from '../metrics.js';
import { conversion, parseUnit, type UnitDef } from '../../units/units.js';
import { CO2, foldHeader, HEATING, HUMIDITY, NAME_RULES, NOT_A_READING, OUTSIDE, PIPE, SETPOINT, VENTILATION } from './vocabulary.js';

export interface HeaderCells {
  index: number;
  /** The name cell (or the single header cell). */
  name: string;
  /** The compartment row's cell, forward-filled across merged cells. */
  compartmentCell: string | null;
  /** The unit row's cell. */
  unitCell: string | null;
}

export interface ColumnGuess {
  index: number;
  header: string;
  name: string;
  compartment: string | null;
  metric: string | null;
  /** The unit of the file's values. */
  unit: UnitDef | null;
  /** Unit text found but not recognised (from a unit row). */
  unknownUnitText: string | null;
  /** The unit was not in the file and was taken to be the metric's canonical unit. */
  unitAssumed: boolean;
  confidence: number;
  reason: string;
  setpoint: boolean;
  emptyName: boolean;
}

const COMPARTMENT_WORD =
  '(afd(?:eling)?\\.?|afdeling|kas|comp(?:artment)?\\.?|abt(?:eilung)?\\.?|abteilung|celle|cell|house|haus|hus|sectie|section|zone)';
const COMPARTMENT_IN_PARENS = new RegExp(`\\(\\s*${COMPARTMENT_WORD}\\s*(\\d+[a-z]?)\\s*\\)`, 'i');
const COMPARTMENT_PREFIX = new RegExp(`^\\s*${COMPARTMENT_WORD}\\s*(\\d+[a-z]?)\\s*(?::|-|\\s|$)`, 'i');
const COMPARTMENT_CELL = new RegExp(`^\\s*${COMPARTMENT_WORD}?\\s*(\\d+[a-z]?)\\s*:?\\s*$`, 'i');

function compartmentLabel(word: string | undefined, num: string): string {
  return word ? `${word.replace(/\.$/, '')} ${num}` : num;
}

/** `(afd 4)`, `Celle 5:`, `Kas 1 ...` → 'afd 4', 'Celle 5', 'Kas 1'. */
export function compartmentOf(text: string): { label: string; match: string } | null {
  const m = COMPARTMENT_IN_PARENS.exec(text) ?? COMPARTMENT_PREFIX.exec(text);
  if (!m) return null;
  return { label: compartmentLabel(m[1], m[2]!), match: m[0] };
}

export function isCompartmentCell(text: string): boolean {
  return text.trim() !== '' && COMPARTMENT_CELL.test(text) && /[a-z]/i.test(text);
}

export function compartmentFromCell(text: string): string | null {
  const m = COMPARTMENT_CELL.exec(text);
  return m ? compartmentLabel(m[1], m[2]!) : null;
}

/** Compartment names compare without case, dots and spacing; a bare number matches its compartment. */
export function sameCompartment(a: string, b: string): boolean {
  const f = (s: string) => s.toLowerCase().replace(/[.:]/g, '').replace(/\s+/g, ' ').trim();
  const fa = f(a);
  const fb = f(b);
  if (fa === fb) return true;
  const na = /(\d+[a-z]?)$/.exec(fa)?.[1];
  const nb = /(\d+[a-z]?)$/.exec(fb)?.[1];
  return (/^\d+[a-z]?$/.test(fa) || /^\d+[a-z]?$/.test(fb)) && na !== undefined && na === nb;
}

/** The unit written inside a column name: in brackets, or as a last token such as `RH%`. */
export function unitInName(name: string): UnitDef | null {
  const found: UnitDef[] = [];
  for (const m of name.matchAll(/[([]([^()[\]]*)[)\]]/g)) {
    const u = parseUnit(m[1]!);
    if (u) found.push(u);
  }
  if (found.length > 0) return found[found.length - 1]!;
  for (const seg of name.replace(/\s+/g, ' ').split(' - ')) {
    const u = parseUnit(seg);
    if (u && seg.trim().length > 1) found.push(u);
  }
  if (found.length > 0) return found[found.length - 1]!;
  const last = name.trim().split(/\s+/).pop() ?? '';
  if (last.length > 1 && /[^a-z]/i.test(last) && last !== name.trim()) {
    const u = parseUnit(last) ?? parseUnit(last.replace(/^rh|^rv/i, ''));
    if (u) return u;
  }
  return null;
}

interface Match {
  metric: string;
  confidence: number;
  reason: string;
}

function bestNameMatch(folded: string): Match | null {
  let best: Match | null = null;
  for (const r of NAME_RULES) {
    if (r.re.test(folded) && (!best || r.confidence > best.confidence)) {
      best = { metric: r.metric, confidence: r.confidence, reason: r.reason };
    }
  }
  return best;
}

function setpointMatch(folded: string): Match | null {
  if (!SETPOINT.test(folded)) return null;
  const pipe = PIPE.test(folded);
  if (HEATING.test(folded)) {
    return pipe
      ? { metric: 'pipe_setpoint', confidence: 0.9, reason: 'heating pipe setpoint' }
      : { metric: 'heating_setpoint', confidence: 0.9, reason: 'heating temperature setpoint' };
  }
  if (VENTILATION.test(folded)) return { metric: 'ventilation_setpoint', confidence: 0.9, reason: 'ventilation temperature setpoint' };
  if (CO2.test(folded)) return { metric: 'co2_setpoint', confidence: 0.9, reason: 'CO₂ setpoint' };
  if (HUMIDITY.test(folded)) return { metric: 'humidity_setpoint', confidence: 0.85, reason: 'humidity setpoint' };
  if (pipe) return { metric: 'pipe_setpoint', confidence: 0.85, reason: 'pipe temperature setpoint' };
  return { metric: '', confidence: 0, reason: 'a setpoint of a quantity outside the vocabulary' };
}

/**
 * Matches each ' - ' segment of a name on its own, so that a word like 'efficiency' in a
 * sensor's name does not veto the quantity named after it ('Sendot Fotosynthese efficiency - par').
 */
function metricFromName(name: string): Match | null {
  const whole = foldHeader(name);
  const sp = setpointMatch(whole);
  if (sp) return sp;
  let best: Match | null = null;
  let vetoed = false;
  for (const seg of name.replace(/\s+/g, ' ').split(' - ')) {
    const f = foldHeader(seg);
    if (f === '') continue;
    if (NOT_A_READING.test(f)) {
      vetoed = true;
      continue;
    }
    const m = bestNameMatch(f);
    if (m && (!best || m.confidence > best.confidence)) best = m;
  }
  if (!best)
    return vetoed ? { metric: '', confidence: 0, reason: 'not a climate reading (difference, battery, probability or similar)' } : null;
  if (OUTSIDE.test(whole)) {
    if (best.metric === 'air_temperature')
      best = {
        metric: 'outside_temperature',
        confidence: Math.max(best.confidence, 0.8),
        reason: `${best.reason}, outside (weather station)`,
      };
    else if (best.metric === 'relative_humidity')
      best = {
        metric: 'outside_relative_humidity',
        confidence: Math.max(best.confidence, 0.8),
        reason: `${best.reason}, outside (weather station)`,
      };
  }
  return best;
}

function metricFromUnit(unit: UnitDef | null): Match | null {
  if (!unit) return null;
  if (unit.dimension === 'mole_fraction') return { metric: 'co2', confidence: 0.6, reason: `only the unit (${unit.symbol}) says CO₂` };
  if (unit.dimension === 'photon_flux') return { metric: 'par', confidence: 0.6, reason: `only the unit (${unit.symbol}) says PAR` };
  if (unit.dimension === 'photon_dose')
    return { metric: 'daily_light_integral', confidence: 0.6, reason: `only the unit (${unit.symbol}) says a daily light integral` };
  return null;
}

/** Header cells are cut to this length before any matching: no real column name is longer. */
export const MAX_HEADER_CELL = 512;

export function guessColumn(input: HeaderCells): ColumnGuess {
  const cut = (x: string | null) => (x === null ? null : x.slice(0, MAX_HEADER_CELL));
  const h: HeaderCells = {
    index: input.index,
    name: cut(input.name)!,
    compartmentCell: cut(input.compartmentCell),
    unitCell: cut(input.unitCell),
  };
  const parts = [h.name, h.compartmentCell, h.unitCell].filter((p): p is string => !!p && p.trim() !== '');
  const header = parts.map((p) => p.trim()).join(' | ');
  const comp = h.compartmentCell ? compartmentFromCell(h.compartmentCell) : null;
  const inName = compartmentOf(h.name);
  const compartment = comp ?? inName?.label ?? null;
  let nameText = h.name;
  if (inName) nameText = nameText.replace(inName.match, ' ');
  let unitText: string | null = null;
  let unit: UnitDef | null;
  if (h.unitCell && h.unitCell.trim() !== '') {
    unitText = h.unitCell.trim();
    unit = parseUnit(unitText);
  } else {
    unit = unitInName(nameText);
  }
  const bare = foldHeader(nameText.replace(/[([][^()[\]]*[)\]]/g, ' '))
    .replace(/[%°]/g, '')
    .trim();
  const guess: ColumnGuess = {
    index: h.index,
    header,
    name: h.name.trim(),
    compartment,
    metric: null,
    unit,
    unknownUnitText: unitText && !unit ? unitText : null,
    unitAssumed: false,
    confidence: 0,
    reason: '',
    setpoint: false,
    emptyName: bare === '',
  };
  if (guess.emptyName) {
    guess.reason = 'empty column name';
    return guess;
  }
  const m = metricFromName(nameText) ?? metricFromUnit(unit);
  if (!m || m.metric === '') {
    guess.reason = m?.reason ?? 'no known climate quantity in the name';
    return guess;
  }
  const def = climateMetric(m.metric)!;
  let confidence = m.confidence;
  let reason = m.reason;
  if (m.metric === 'air_temperature' && m.confidence <= 0.5 && /^(?:temperatuur|temperature|temperatur|temp)$/.test(bare)) {
    // A column named only 'Temperature' (often under a compartment) is the air temperature.
    confidence = 0.75;
    reason = 'a column named only "temperature", taken as air temperature';
  }
  if (unit) {
    const c = conversion(unit, def.unit);
    if (c) {
      confidence = Math.min(1, confidence + 0.05);
      reason += `; unit ${unit.symbol}`;
    } else {
      reason += `; unit ${unit.symbol} cannot be converted to ${def.unit}`;
    }
  } else if (guess.unknownUnitText) {
    reason += `; unit '${guess.unknownUnitText}' not recognised`;
  } else {
    guess.unitAssumed = true;
    confidence *= 0.85;
    reason += `; no unit in the file, ${def.unit} assumed`;
  }
  guess.metric = m.metric;
  guess.confidence = Math.round(confidence * 100) / 100;
  guess.reason = reason;
  guess.setpoint = def.setpoint;
  return guess;
}
