// One place for units: the canonical unit of every quantity the service stores,
// the spellings found in exports, and conversions between them.

export type Dimension =
  | 'temperature'
  | 'fraction'
  | 'mole_fraction'
  | 'irradiance'
  | 'photon_flux'
  | 'radiant_exposure'
  | 'photon_dose'
  | 'pressure'
  | 'conductivity'
  | 'vapour_concentration'
  | 'speed'
  | 'angle'
  | 'length'
  | 'mass'
  | 'volume'
  | 'area'
  | 'areal_mass'
  | 'illuminance'
  | 'voltage';

export interface UnitDef {
  /** The display symbol, also the unit's identifier. */
  symbol: string;
  dimension: Dimension;
  /** value_in_base = value * factor + offset, where base is the dimension's canonical unit. */
  factor: number;
  offset?: number;
  /** How the symbol is said in a sentence. */
  name: string;
}

export const CANONICAL_UNITS = [
  'kg',
  'g',
  'L',
  'm³',
  'm²',
  '°C',
  '%',
  'ppm',
  'W/m²',
  'µmol/m²/s',
  'J/cm²',
  'MJ/m²',
  'kWh/m²',
  'mol/m²/d',
  'kPa',
  'hPa',
  'mS/cm',
  'mm',
  'g/m³',
  'm/s',
  '°',
  'kg/ha',
] as const;
export type CanonicalUnit = (typeof CANONICAL_UNITS)[number];

// Several canonical units share a dimension (kg and g; L and m³; kPa and hPa; mm as
// fruit size and as rain): conversion goes through the dimension's base, so each is reachable.
const U = (symbol: string, dimension: Dimension, factor: number, name: string, offset = 0): UnitDef => ({
  symbol,
  dimension,
  factor,
  offset,
  name,
});

export const UNITS: readonly UnitDef[] = [
  U('°C', 'temperature', 1, 'degrees Celsius'),
  U('°F', 'temperature', 5 / 9, 'degrees Fahrenheit', (-32 * 5) / 9),
  U('K', 'temperature', 1, 'kelvin', -273.15),
  U('%', 'fraction', 1, 'percent'),
  U('ppm', 'mole_fraction', 1, 'parts per million'),
  U('vpm', 'mole_fraction', 1, 'volume parts per million'),
  U('µmol/mol', 'mole_fraction', 1, 'micromole per mole'),
  U('ppb', 'mole_fraction', 0.001, 'parts per billion'),
  U('W/m²', 'irradiance', 1, 'watt per square metre'),
  U('kW/m²', 'irradiance', 1000, 'kilowatt per square metre'),
  U('µmol/m²/s', 'photon_flux', 1, 'micromole per square metre per second'),
  U('mmol/m²/s', 'photon_flux', 1000, 'millimole per square metre per second'),
  U('J/cm²', 'radiant_exposure', 1, 'joule per square centimetre'),
  U('J/m²', 'radiant_exposure', 1e-4, 'joule per square metre'),
  U('kJ/m²', 'radiant_exposure', 0.1, 'kilojoule per square metre'),
  U('MJ/m²', 'radiant_exposure', 100, 'megajoule per square metre'),
  U('Wh/m²', 'radiant_exposure', 0.36, 'watt-hour per square metre'),
  U('kWh/m²', 'radiant_exposure', 360, 'kilowatt-hour per square metre'),
  U('GJ/ha', 'radiant_exposure', 10, 'gigajoule per hectare'),
  U('mol/m²/d', 'photon_dose', 1, 'mole per square metre per day'),
  U('kPa', 'pressure', 1, 'kilopascal'),
  U('hPa', 'pressure', 0.1, 'hectopascal'),
  U('mbar', 'pressure', 0.1, 'millibar'),
  U('Pa', 'pressure', 0.001, 'pascal'),
  U('bar', 'pressure', 100, 'bar'),
  U('mS/cm', 'conductivity', 1, 'millisiemens per centimetre'),
  U('µS/cm', 'conductivity', 0.001, 'microsiemens per centimetre'),
  U('dS/m', 'conductivity', 1, 'decisiemens per metre'),
  U('S/m', 'conductivity', 10, 'siemens per metre'),
  U('g/m³', 'vapour_concentration', 1, 'gram per cubic metre'),
  U('m/s', 'speed', 1, 'metre per second'),
  U('km/h', 'speed', 1 / 3.6, 'kilometre per hour'),
  U('mph', 'speed', 0.44704, 'mile per hour'),
  U('kn', 'speed', 0.514444, 'knot'),
  U('°', 'angle', 1, 'degrees'),
  U('mm', 'length', 1, 'millimetre'),
  U('cm', 'length', 10, 'centimetre'),
  U('m', 'length', 1000, 'metre'),
  U('in', 'length', 25.4, 'inch'),
  U('kg', 'mass', 1, 'kilogram'),
  U('g', 'mass', 0.001, 'gram'),
  U('t', 'mass', 1000, 'tonne'),
  U('lb', 'mass', 0.45359237, 'pound'),
  U('L', 'volume', 1, 'litre'),
  U('ml', 'volume', 0.001, 'millilitre'),
  U('m³', 'volume', 1000, 'cubic metre'),
  U('m²', 'area', 1, 'square metre'),
  U('ha', 'area', 10000, 'hectare'),
  U('kg/ha', 'areal_mass', 1, 'kilogram per hectare'),
  U('g/m²', 'areal_mass', 10, 'gram per square metre'),
  U('lux', 'illuminance', 1, 'lux'),
  U('klux', 'illuminance', 1000, 'kilolux'),
  U('V', 'voltage', 1, 'volt'),
];

const BY_SYMBOL = new Map(UNITS.map((u) => [u.symbol, u]));

// Spellings as they are found in exports, written in the normalised form of
// normaliseUnitText (lower case, micro as 'u', superscripts as digits, 'x-1' as '/x').
const ALIASES: Record<string, string[]> = {
  '°C': ['°c', 'c', 'degc', 'deg c', 'celsius', 'gr c', 'grc', 'grad c', '° c', 'oc', 'graden'],
  '°F': ['°f', 'f', 'degf', 'fahrenheit'],
  K: ['k', 'kelvin'],
  '%': ['%', '%rh', 'rh%', '% rh', 'pct', 'percent', 'procent', 'prozent', '%rv', 'rv%'],
  ppm: ['ppm', 'ppmv'],
  vpm: ['vpm'],
  'µmol/mol': ['umol/mol'],
  ppb: ['ppb'],
  'W/m²': ['w/m2', 'wm2', 'watt/m2'],
  'kW/m²': ['kw/m2'],
  'µmol/m²/s': ['umol/m2/s', 'umol/s/m2', 'umol/m2s', 'umol/(m2s)', 'umol/(m2 s)', 'umol/m2 s'],
  'mmol/m²/s': ['mmol/m2/s'],
  'J/cm²': ['j/cm2'],
  'J/m²': ['j/m2'],
  'kJ/m²': ['kj/m2'],
  // An amount per day is still an amount: a daily value names its day by its row.
  'MJ/m²': ['mj/m2', 'mj/m2/d', 'mj/m2/day', 'mj/m2/dag'],
  'Wh/m²': ['wh/m2'],
  'kWh/m²': ['kwh/m2', 'kwh/m2/d', 'kwh/m2/day', 'kwh/m2/dag'],
  'GJ/ha': ['gj/ha', 'gj/ha/d', 'gj/ha/day'],
  'mol/m²/d': ['mol/m2/d', 'mol/m2/day', 'mol/d/m2', 'mol/m2', 'mol/m2/dag'],
  kPa: ['kpa'],
  hPa: ['hpa'],
  mbar: ['mbar', 'mb', 'millibar'],
  Pa: ['pa'],
  bar: ['bar'],
  'mS/cm': ['ms/cm', 'mmho/cm'],
  'µS/cm': ['us/cm', 'umho/cm'],
  'dS/m': ['ds/m'],
  'S/m': ['s/m'],
  'g/m³': ['g/m3', 'gr/m3'],
  'm/s': ['m/s', 'mps', 'm/sec'],
  'km/h': ['km/h', 'kmh', 'km/u', 'kph'],
  mph: ['mph'],
  kn: ['kn', 'kt', 'knots', 'knot'],
  '°': ['°', 'deg', 'degrees', 'grad', 'graden n'],
  mm: ['mm'],
  cm: ['cm'],
  m: ['m'],
  in: ['in', 'inch'],
  kg: ['kg'],
  g: ['g', 'gr', 'gram'],
  t: ['t', 'ton', 'tonne'],
  lb: ['lb', 'lbs'],
  L: ['l', 'liter', 'litre', 'ltr'],
  ml: ['ml'],
  'm³': ['m3', 'cbm'],
  'm²': ['m2', 'sqm'],
  ha: ['ha'],
  'kg/ha': ['kg/ha'],
  'g/m²': ['g/m2'],
  lux: ['lux', 'lx'],
  klux: ['klux', 'klx', 'kilolux'],
  V: ['v', 'volt'],
};

const ALIAS_TO_SYMBOL = new Map<string, string>();
for (const [symbol, spellings] of Object.entries(ALIASES)) {
  for (const s of spellings) ALIAS_TO_SYMBOL.set(s, symbol);
}

/**
 * Folds the many ways one unit is written into one key: NFKC turns ² ³ into digits and
 * the micro sign into Greek mu; both mu forms become 'u'; the Unicode minus becomes '-';
 * exponent notation ('m-2 s-1', 'm^-2·s^-1') becomes division ('/m2/s').
 */
export function normaliseUnitText(text: string): string {
  let t = text
    .normalize('NFKC')
    .replace(/[\u03bc\u00b5]/g, 'u')
    .replace(/[\u2212\u2012\u2013]/g, '-')
    .replace(/º/g, '°')
    .replace(/\^/g, '')
    .toLowerCase()
    .trim();
  t = t.replace(/^[([{]\s*(.*?)\s*[)\]}]$/, '$1').trim();
  const tokens = t.split(/[\s·*⋅]+/).filter(Boolean);
  if (tokens.length > 1 && tokens.slice(1).some((tok) => /^[a-z]+-\d$/.test(tok))) {
    let out = tokens[0]!;
    for (const tok of tokens.slice(1)) {
      const m = /^([a-z]+)-(\d)$/.exec(tok);
      if (m) out += '/' + m[1] + (m[2] === '1' ? '' : m[2]);
      else out += tok;
    }
    return out;
  }
  return tokens.join(' ');
}

/** Recognises a unit as spelled in an export; null when the text is not a known unit. */
export function parseUnit(text: string | null | undefined): UnitDef | null {
  // No unit is spelled longer; refusing long text also bounds the cost of the patterns below.
  if (text == null || text.length > 64) return null;
  const key = normaliseUnitText(text);
  if (key === '') return null;
  const symbol = ALIAS_TO_SYMBOL.get(key) ?? ALIAS_TO_SYMBOL.get(key.replace(/\s+/g, ''));
  return symbol ? BY_SYMBOL.get(symbol)! : null;
}

export function unitBySymbol(symbol: string): UnitDef | null {
  return BY_SYMBOL.get(symbol) ?? null;
}

/** Drops binary floating-point noise (10 × 0.1 = 1.0000000000000002) that a factor adds. */
function tidy(v: number): number {
  return v === 0 || !Number.isFinite(v) ? v : +v.toPrecision(12);
}

export interface Conversion {
  /** e.g. '°F → °C'; for the same unit the symbol alone. */
  label: string;
  /** True when apply is the identity (nothing to report). */
  identity: boolean;
  apply(value: number): number;
}

// Cross-dimension conversions that only hold for sunlight; the label says so.
// Sunlight: 1 µmol/m²/s of PAR ≈ 54 lux (Thimijan & Heins 1983, HortScience 18:818);
// global radiation: 1 W/m² ≈ 2.1 µmol/m²/s PAR (≈ 48 % PAR fraction × 4.57 µmol/J),
// hence 1 W/m² ≈ 113 lux.
const LUX_PER_UMOL = 54;
const LUX_PER_W = 54 * 2.1;

function sunlight(from: UnitDef, to: UnitDef): Conversion | null {
  if (from.dimension !== 'illuminance') return null;
  const lux = from.factor;
  if (to.symbol === 'µmol/m²/s') {
    return {
      label: `${from.symbol} → µmol/m²/s (sunlight approximation, 1 µmol/m²/s ≈ ${LUX_PER_UMOL} lux)`,
      identity: false,
      apply: (v) => tidy((v * lux) / LUX_PER_UMOL),
    };
  }
  if (to.symbol === 'W/m²') {
    return {
      label: `${from.symbol} → W/m² (sunlight approximation, 1 W/m² ≈ ${Math.round(LUX_PER_W)} lux)`,
      identity: false,
      apply: (v) => tidy((v * lux) / LUX_PER_W),
    };
  }
  return null;
}

/**
 * How to turn a value in `fromUnit` (any recognised spelling or a UnitDef) into `toUnit`;
 * null when the two measure different things or either unit is unknown.
 */
export function conversion(fromUnit: string | UnitDef, toUnit: string | UnitDef): Conversion | null {
  const from = typeof fromUnit === 'string' ? (unitBySymbol(fromUnit) ?? parseUnit(fromUnit)) : fromUnit;
  const to = typeof toUnit === 'string' ? (unitBySymbol(toUnit) ?? parseUnit(toUnit)) : toUnit;
  if (!from || !to) return null;
  if (from.symbol === to.symbol) return { label: to.symbol, identity: true, apply: (v) => v };
  if (from.dimension !== to.dimension) return sunlight(from, to);
  const f = from.factor / to.factor;
  const o = ((from.offset ?? 0) - (to.offset ?? 0)) / to.factor;
  const label = `${from.symbol} → ${to.symbol}`;
  if (f === 1 && o === 0) return { label, identity: false, apply: (v) => v };
  if (o === 0) return { label, identity: false, apply: (v) => tidy(v * f) };
  return { label, identity: false, apply: (v) => tidy(v * f + o) };
}
