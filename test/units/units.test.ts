import t from 'tap';
import type { Test } from 'tap';

type TapTest = InstanceType<typeof Test>;
import { conversion, parseUnit, normaliseUnitText, UNITS, CANONICAL_UNITS, unitBySymbol } from '../../src/units/units.js';

const close = (t: TapTest, a: number, b: number, msg: string, eps = 1e-9) =>
  t.ok(Math.abs(a - b) <= eps * Math.max(1, Math.abs(b)), `${msg}: ${a} ≈ ${b}`);

t.test('parseUnit recognises the spellings found in exports', async (t) => {
  const cases: [string, string][] = [
    ['°C', '°C'],
    ['C', '°C'],
    ['degC', '°C'],
    ['℃', '°C'],
    ['(°C)', '°C'],
    ['°F', '°F'],
    ['K', 'K'],
    ['%', '%'],
    ['%RH', '%'],
    ['RH%', '%'],
    ['ppm', 'ppm'],
    ['vpm', 'vpm'],
    ['µmol/mol', 'µmol/mol'],
    ['μmol/mol', 'µmol/mol'],
    ['W/m2', 'W/m²'],
    ['W/m²', 'W/m²'],
    ['W m-2', 'W/m²'],
    ['W·m⁻²', 'W/m²'],
    ['klux', 'klux'],
    ['lux', 'lux'],
    ['lx', 'lux'],
    // Greek mu (U+03BC) with Unicode minus (U+2212), as in the 30MHz PAR column
    ['\u03bcmol m\u22122 s\u22121', 'µmol/m²/s'],
    // micro sign (U+00B5)
    ['\u00b5mol m-2 s-1', 'µmol/m²/s'],
    ['umol/m2/s', 'µmol/m²/s'],
    ['µmol/m²/s', 'µmol/m²/s'],
    ['umol m^-2 s^-1', 'µmol/m²/s'],
    ['J/cm2', 'J/cm²'],
    ['kJ/m2', 'kJ/m²'],
    ['MJ/m2', 'MJ/m²'],
    ['mol/m2/d', 'mol/m²/d'],
    ['mol m-2 d-1', 'mol/m²/d'],
    ['kPa', 'kPa'],
    ['hPa', 'hPa'],
    ['mbar', 'mbar'],
    ['mB', 'mbar'],
    ['µS/cm', 'µS/cm'],
    ['uS/cm', 'µS/cm'],
    ['mS/cm', 'mS/cm'],
    ['dS/m', 'dS/m'],
    ['g/m3', 'g/m³'],
    ['g/m³', 'g/m³'],
    ['g m-3', 'g/m³'],
    ['m/s', 'm/s'],
    ['km/h', 'km/h'],
    ['mm', 'mm'],
    ['L', 'L'],
    ['l', 'L'],
    ['ml', 'ml'],
    ['m3', 'm³'],
    ['m²', 'm²'],
    ['kg', 'kg'],
    ['g', 'g'],
    ['kg/ha', 'kg/ha'],
    ['g/m2', 'g/m²'],
    ['°', '°'],
    ['deg', '°'],
  ];
  for (const [text, symbol] of cases) t.equal(parseUnit(text)?.symbol, symbol, `${JSON.stringify(text)} → ${symbol}`);
});

t.test('parseUnit refuses what is not a unit', async (t) => {
  t.equal(parseUnit('(' + ' '.repeat(100_000) + 'x'), null, 'long text is no unit, and is refused without scanning it');
  for (const text of ['', '   ', 'afd 4', '21B', 'units', '%sat', 'averages', 'Temperature', null, undefined]) {
    t.equal(parseUnit(text as string), null, `${JSON.stringify(text)} is not a unit`);
  }
});

t.test('normaliseUnitText folds exponent notation into division', async (t) => {
  t.equal(normaliseUnitText('\u03bcmol m\u22122 s\u22121'), 'umol/m2/s');
  t.equal(normaliseUnitText(' W m-2 '), 'w/m2');
});

t.test('every canonical unit is a known unit and converts to itself without a label', async (t) => {
  for (const symbol of CANONICAL_UNITS) {
    const c = conversion(symbol, symbol);
    t.ok(c, symbol);
    t.equal(c!.identity, true);
    t.equal(c!.apply(12.5), 12.5);
  }
});

t.test('conversions into canonical units', async (t) => {
  const cases: [string, string, number, number, string][] = [
    ['°F', '°C', 212, 100, '°F → °C'],
    ['°F', '°C', 32, 0, '°F → °C'],
    ['K', '°C', 293.15, 20, 'K → °C'],
    ['°C', '°F', 100, 212, '°C → °F'],
    ['vpm', 'ppm', 800, 800, 'vpm → ppm'],
    ['µmol/mol', 'ppm', 420, 420, 'µmol/mol → ppm'],
    ['ppb', 'ppm', 420000, 420, 'ppb → ppm'],
    ['kW/m²', 'W/m²', 0.8, 800, 'kW/m² → W/m²'],
    ['mmol/m²/s', 'µmol/m²/s', 1.2, 1200, 'mmol/m²/s → µmol/m²/s'],
    ['kJ/m²', 'J/cm²', 1000, 100, 'kJ/m² → J/cm²'],
    ['MJ/m²', 'J/cm²', 2.5, 250, 'MJ/m² → J/cm²'],
    ['J/m²', 'J/cm²', 10000, 1, 'J/m² → J/cm²'],
    ['Wh/m²', 'J/cm²', 100, 36, 'Wh/m² → J/cm²'],
    ['hPa', 'kPa', 10.5, 1.05, 'hPa → kPa'],
    ['mbar', 'kPa', 12, 1.2, 'mbar → kPa'],
    ['Pa', 'kPa', 1500, 1.5, 'Pa → kPa'],
    ['mbar', 'hPa', 1013, 1013, 'mbar → hPa'],
    ['kPa', 'hPa', 101.3, 1013, 'kPa → hPa'],
    ['µS/cm', 'mS/cm', 2500, 2.5, 'µS/cm → mS/cm'],
    ['dS/m', 'mS/cm', 3, 3, 'dS/m → mS/cm'],
    ['S/m', 'mS/cm', 0.3, 3, 'S/m → mS/cm'],
    ['km/h', 'm/s', 36, 10, 'km/h → m/s'],
    ['cm', 'mm', 2.5, 25, 'cm → mm'],
    ['ml', 'L', 250, 0.25, 'ml → L'],
    ['m³', 'L', 1.5, 1500, 'm³ → L'],
    ['L', 'm³', 1500, 1.5, 'L → m³'],
    ['g', 'kg', 1500, 1.5, 'g → kg'],
    ['kg', 'g', 1.5, 1500, 'kg → g'],
    ['g/m²', 'kg/ha', 1, 10, 'g/m² → kg/ha'],
    ['ha', 'm²', 1, 10000, 'ha → m²'],
  ];
  for (const [from, to, v, want, label] of cases) {
    const c = conversion(from, to);
    t.ok(c, `${from} → ${to} exists`);
    if (!c) continue;
    t.equal(c.label, label);
    t.equal(c.identity, false);
    close(t, c.apply(v), want, label);
  }
});

t.test('conversion accepts export spellings on both sides', async (t) => {
  const c = conversion('degF', 'degC');
  t.equal(c?.label, '°F → °C');
  close(t, c!.apply(50), 10, 'degF → degC');
  t.equal(conversion('mB', 'kPa')?.label, 'mbar → kPa');
});

t.test('lux converts only as a labelled sunlight approximation', async (t) => {
  const par = conversion('klux', 'µmol/m²/s')!;
  t.match(par.label, /sunlight approximation/);
  close(t, par.apply(54), 1000, 'klux → µmol', 1e-9);
  const glob = conversion('lux', 'W/m²')!;
  t.match(glob.label, /^lux → W\/m² \(sunlight approximation/);
  close(t, glob.apply(54 * 2.1 * 100), 100, 'lux → W/m²');
  t.equal(conversion('W/m²', 'lux'), null, 'the approximation is one-way');
});

t.test('conversion refuses what cannot be converted', async (t) => {
  t.equal(conversion('°C', '%'), null);
  t.equal(conversion('W/m²', 'µmol/m²/s'), null, 'PAR in W/m² is not global radiation: refuse, do not guess');
  t.equal(conversion('g/m³', 'kPa'), null, 'humidity deficit is not VPD');
  t.equal(conversion('ppm', '%'), null);
  t.equal(conversion('bogus', '°C'), null);
  t.equal(conversion('°C', 'bogus'), null);
});

t.test('unit table is consistent', async (t) => {
  const symbols = new Set<string>();
  for (const u of UNITS) {
    t.notOk(symbols.has(u.symbol), `${u.symbol} defined once`);
    symbols.add(u.symbol);
    t.equal(parseUnit(u.symbol)?.symbol, u.symbol, `${u.symbol} parses as itself`);
    t.equal(unitBySymbol(u.symbol), u);
  }
});
