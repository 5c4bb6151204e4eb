import t from 'tap';
import { guessColumn, compartmentOf, sameCompartment, unitInName } from '../../../src/climate/exports-reader/columns.js';
import {
  decideOrder,
  emptyEvidence,
  addEvidence,
  fullYear,
  parseTimeCell,
  serialToWall,
  splitDateCell,
  wallFromParts,
} from '../../../src/climate/exports-reader/dates.js';
import { ZoneClock, isoWithOffset } from '../../../src/climate/exports-reader/local-time.js';
import { detectDelimiter, detectTime, headerRoles } from '../../../src/climate/exports-reader/layout.js';
import { detectEncoding } from '../../../src/climate/exports-reader/source.js';
import { aggregateHourly, analyseExport } from '../../../src/climate/exports-reader/index.js';
import { fixture } from '../../fixtures/climate/paths.js';

const guess = (name: string, unitCell: string | null = null) => guessColumn({ index: 1, name, compartmentCell: null, unitCell });

t.test('dates: formats, orders, two-digit years, serials', async (t) => {
  const w = (cell: string, order: 'ymd' | 'dmy' | 'mdy') => {
    const p = splitDateCell(cell);
    return p ? wallFromParts(p, order) : null;
  };
  t.match(w('2020-09-15 12:35:00', 'ymd'), { y: 2020, mo: 9, d: 15, h: 12, mi: 35, s: 0, offset: null });
  t.match(w('2020-09-15T12:35:00Z', 'ymd'), { h: 12, offset: 0 });
  t.match(w('2020-09-15T12:35:00+02:00', 'ymd'), { offset: 120 });
  t.match(w('2020-09-15 12:35:00-0530', 'ymd'), { offset: -330 });
  t.match(w('15/09/2020 12:35', 'dmy'), { y: 2020, mo: 9, d: 15 });
  t.match(w('09.15.2020 1:05 PM', 'mdy'), { mo: 9, d: 15, h: 13, mi: 5 });
  t.match(w('12/01/2021 12:00 AM', 'mdy'), { mo: 12, d: 1, h: 0 });
  t.equal(w('31/02/2021 10:00', 'dmy'), null, 'no 31 February');
  t.equal(w('15/09/2020', 'mdy'), null, 'month 15 does not exist');
  t.match(w('15-09-20', 'dmy'), { y: 2020, mo: 9, d: 15, h: 0 });
  t.equal(fullYear(99, 2, 2026), 1999);
  t.equal(fullYear(27, 2, 2026), 2027);
  t.equal(fullYear(28, 2, 2026), 1928);
  t.same(parseTimeCell('00:10:00'), [0, 10, 0, 0]);
  t.same(parseTimeCell('7:05 pm'), [19, 5, 0, 0]);
  t.same(parseTimeCell('0.5'), [12, 0, 0, 0], 'an Excel day fraction');
  t.equal(parseTimeCell('25:00'), null);
  t.match(serialToWall(43831.5), { y: 2020, mo: 1, d: 1, h: 12, mi: 0, s: 0, ms: 0 });
  t.match(serialToWall(43831 + 1 / 288), { h: 0, mi: 5, s: 0, ms: 0 }, 'float noise rounds to the second');
  t.match(serialToWall(0, true), { y: 1904, mo: 1, d: 1 }, '1904 date system');
  const ev = emptyEvidence();
  for (const c of ['01/02/2021', '12/11/2021']) addEvidence(ev, splitDateCell(c)!);
  t.equal(decideOrder(ev), 'ambiguous');
  addEvidence(ev, splitDateCell('13/01/2021')!);
  t.equal(decideOrder(ev), 'dmy');
  addEvidence(ev, splitDateCell('01/13/2021')!);
  t.equal(decideOrder(ev), 'conflict');
});

t.test('local time: DST gaps and repeats by luxon zone rules', async (t) => {
  const ams = new ZoneClock('Europe/Amsterdam');
  const W = (y: number, mo: number, d: number, h: number, mi = 0) => ({ y, mo, d, h, mi, s: 0, ms: 0, offset: null });
  t.same(ams.resolve(W(2021, 3, 28, 2, 30)), { kind: 'missing' });
  const rep = ams.resolve(W(2020, 10, 25, 2, 30));
  t.equal(rep.kind, 'repeated');
  if (rep.kind === 'repeated') {
    t.same(rep.offset, [120, 60]);
    t.equal(new Date(rep.ms[0]).toISOString(), '2020-10-25T00:30:00.000Z');
    t.equal(new Date(rep.ms[1]).toISOString(), '2020-10-25T01:30:00.000Z');
  }
  t.match(ams.resolve(W(2020, 7, 1, 12)), { kind: 'ok', offset: 120 });
  t.match(
    ams.resolve({ ...W(2021, 3, 28, 2, 30), offset: 0 }),
    { kind: 'ok', ms: Date.UTC(2021, 2, 28, 2, 30) },
    'an explicit offset is taken as given, even in the gap',
  );
  t.same(new ZoneClock('Australia/Lord_Howe').resolve(W(2021, 4, 4, 1, 45)).kind, 'repeated', 'half-hour DST shift');
  t.equal(isoWithOffset(Date.UTC(2020, 0, 1, 12), -330), '2020-01-01T06:30:00-05:30');
  t.throws(() => new ZoneClock('Mars/Olympus'), RangeError);
});

t.test('encoding and delimiter detection', async (t) => {
  t.same(detectEncoding(Buffer.from('\ufeffa;b', 'utf8')), { encoding: 'utf-8', bom: true });
  t.same(detectEncoding(Buffer.from('a;b\n°C', 'utf8')), { encoding: 'utf-8', bom: false });
  t.same(detectEncoding(Buffer.from('a;b\n°C', 'latin1')), { encoding: 'windows-1252', bom: false });
  t.same(detectEncoding(Buffer.from('time;temp\n', 'utf16le')), { encoding: 'utf-16le', bom: false });
  t.equal(detectDelimiter('a;b;c\n1,5;2,5;3,5\n'), ';', 'decimal commas do not make commas the delimiter');
  t.equal(detectDelimiter('a,b,c\n1.5,2.5,3.5\n'), ',');
  t.equal(detectDelimiter('a\tb\tc\n1\t2\t3\n'), '\t');
  t.equal(detectDelimiter('a|b|c\n1|2|3\n'), '|');
  t.equal(detectDelimiter('just text\nmore text\n'), null);
});

t.test('header rows: roles found by content, in any order', async (t) => {
  t.same(
    headerRoles(
      [
        ['', '°C', '%'],
        ['Time', 'Temperature', 'RH'],
        ['', 'Afd 1', 'Afd 1'],
      ],
      new Set([0]),
    ),
    ['units', 'names', 'compartments'],
  );
  t.same(headerRoles([['Export of greenhouse 3'], ['Time', 'Temperature', 'RH']], new Set([0])), ['title', 'names']);
});

t.test('column vocabulary in four languages and vendor codes', async (t) => {
  const cases: [string, string | null][] = [
    ['kastemperatuur', 'air_temperature'],
    ['Lufttemperatur', 'air_temperature'],
    ['air temp', 'air_temperature'],
    ['Tair', 'air_temperature'],
    ['RV', 'relative_humidity'],
    ['Luftfugtighed', 'relative_humidity'],
    ['RH', 'relative_humidity'],
    ['Rhair', 'relative_humidity'],
    ['Luftfeuchte', 'relative_humidity'],
    ['CO2', 'co2'],
    ['CO2air', 'co2'],
    ['straling', 'global_radiation'],
    ['Solindstråling', 'global_radiation'],
    ['global radiation', 'global_radiation'],
    ['Iglob', 'global_radiation'],
    ['Globalstrahlung', 'global_radiation'],
    ['PAR', 'par'],
    ['Tot_PAR', 'par'],
    ['raamstand', 'vent_opening'],
    ['Vent. position', 'vent_opening'],
    ['VentLee', 'vent_opening'],
    ['Ventwind', 'vent_opening'],
    ['Lüftung', 'vent_opening'],
    ['buistemperatuur', 'pipe_temperature'],
    ['bovenbuis', 'pipe_temperature'],
    ['Flow temperatur', 'pipe_temperature'],
    ['Tpipe', 'pipe_temperature'],
    ['Heizrohr', 'pipe_temperature'],
    ['schermdoek', 'screen_position'],
    ['Gardin', 'screen_position'],
    ['screen', 'screen_position'],
    ['Energieschirm', 'screen_position'],
    ['Udetemperatur', 'outside_temperature'],
    ['buitentemperatuur', 'outside_temperature'],
    ['Außentemperatur', 'outside_temperature'],
    ['Tout', 'outside_temperature'],
    ['vochtdeficit', 'humidity_deficit'],
    ['VPD', 'vpd'],
    ['dauwpunt', 'dew_point'],
    ['Taupunkt', 'dew_point'],
    ['absolute humidity', 'absolute_humidity'],
    ['windsnelheid', 'wind_speed'],
    ['Windrichtung', 'wind_direction'],
    ['neerslag', 'rain'],
    ['luchtdruk', 'air_pressure'],
    ['bladtemperatuur', 'leaf_temperature'],
    ['mattemperatuur', 'substrate_temperature'],
    ['EC mat', 'substrate_ec'],
    ['VWC', 'substrate_water_content'],
    ['CO2 dosering', 'co2_dosing'],
    ['stralingssom', 'radiation_sum'],
    ['verwarmingstemp: ber', 'heating_setpoint'],
    ['Verw.temp. sp', 'heating_setpoint'],
    ['Heiztemperatur Soll', 'heating_setpoint'],
    ['varme sætpunkt', 'heating_setpoint'],
    ['t_heat_sp', 'heating_setpoint'],
    ['ventilatietemp: ber', 'ventilation_setpoint'],
    ['Lüftungstemperatur Sollwert', 'ventilation_setpoint'],
    ['CO2 krav', 'co2_setpoint'],
    ['CO2 setpoint', 'co2_setpoint'],
    ['co2_sp', 'co2_setpoint'],
    ['RV setpoint', 'humidity_setpoint'],
    ['Rain probability', null],
    ['battery', null],
    ['Absolute diff. temp. and dewpoint temp.', null],
    ['Lys intensitet', null],
    ['foo', null],
  ];
  for (const [name, metric] of cases) t.equal(guess(name).metric, metric, `${name} → ${metric}`);
  t.equal(guess('CO2 krav').setpoint, true);
  t.equal(guess('Celle 5: CO2').setpoint, false);
});

t.test('humidity deficit in g/m³ is never VPD in kPa', async (t) => {
  const hd = guess('vochtdeficit - g/m³  (afd 4) - Humidity deficit (g/m3) - averages');
  t.equal(hd.metric, 'humidity_deficit');
  t.equal(hd.unit!.symbol, 'g/m³');
  const vpdInGrams = guess('VPD', 'g/m3');
  t.equal(vpdInGrams.metric, 'vpd');
  t.match(vpdInGrams.reason, /cannot be converted to kPa/);
  const a = await analyseExport({ bytes: Buffer.from('time,VPD (g/m3)\n2020-01-01 00:00,3\n2020-01-01 01:00,4\n') }, { timeZone: 'UTC' });
  t.same(
    a.blocking.map((b) => b.code),
    ['no_mapped_columns'],
    'a VPD column in g/m³ is not read as kPa',
  );
  t.ok(a.warnings.some((w) => w.code === 'unit_not_convertible'));
});

t.test('units and compartments from names', async (t) => {
  t.equal(unitInName('kastemperatuur - °C  (afd 4) - Temperature (°C) - averages')!.symbol, '°C');
  t.equal(unitInName('PAR Sensor (13D) - PAR (\u03bcmol m\u22122 s\u22121) - averages')!.symbol, 'µmol/m²/s');
  t.equal(unitInName('Luftfugtighed RH%')!.symbol, '%');
  t.equal(unitInName('Lufttemperatur'), null);
  t.equal(unitInName('Sensor PMC (21B) - Dewpoint'), null);
  t.same(compartmentOf('kastemperatuur - °C  (afd 4) - Temperature'), { label: 'afd 4', match: '(afd 4)' });
  t.equal(compartmentOf('Celle 5: Lufttemperatur')!.label, 'Celle 5');
  t.equal(compartmentOf('Kas 1 Temperatuur (°C)')!.label, 'Kas 1');
  t.equal(compartmentOf('kastemperatuur'), null);
  t.equal(compartmentOf('Sensor kas 4 R (888)'), null);
  t.ok(sameCompartment('afd 4', 'Afd. 4'));
  t.ok(sameCompartment('afd 4', '4'));
  t.notOk(sameCompartment('afd 4', 'afd 1'));
  t.equal(guess('Celle 5: ').emptyName, true);
});

t.test('aggregateHourly: mean, sum, circular mean on UTC hours across DST', async (t) => {
  const r = (at: string, metric: string, value: number) => ({ at, metric, value });
  const hours = await aggregateHourly(
    [
      // The repeated autumn hour: 02:xx summer and 02:xx winter are two hours, not one.
      r('2020-10-25T02:00:00+02:00', 'air_temperature', 10),
      r('2020-10-25T02:30:00+02:00', 'air_temperature', 20),
      r('2020-10-25T02:00:00+01:00', 'air_temperature', 30),
      r('2020-10-25T02:30:00+01:00', 'air_temperature', 50),
      r('2020-10-25T02:00:00+01:00', 'rain', 0.5),
      r('2020-10-25T02:30:00+01:00', 'rain', 0.25),
      r('2020-10-25T02:00:00+01:00', 'wind_direction', 350),
      r('2020-10-25T02:30:00+01:00', 'wind_direction', 20),
      r('2020-10-25T02:00:00+01:00', 'not_a_metric', 1),
    ],
    { timeZone: 'Europe/Amsterdam' },
  );
  t.same(
    hours.map((h) => [h.hour, h.metric, Math.round(h.value * 1000) / 1000, h.count]),
    [
      ['2020-10-25T02:00:00+02:00', 'air_temperature', 15, 2],
      ['2020-10-25T02:00:00+01:00', 'air_temperature', 40, 2],
      ['2020-10-25T02:00:00+01:00', 'rain', 0.75, 2],
      ['2020-10-25T02:00:00+01:00', 'wind_direction', 5, 2],
    ],
  );
  const utc = await aggregateHourly([[r('2020-01-01T10:59:59Z', 'co2', 400)], [r('2020-01-01T11:00:00+01:00', 'co2', 600)]]);
  t.same(
    utc.map((h) => [h.hour, h.value]),
    [['2020-01-01T10:00:00Z', 500]],
    'batches accepted; hours on real instants',
  );
});

t.test('precedence: caller-named columns, then a confirmed mapping, then detection', async (t) => {
  const file = fixture('three-header-rows.csv');
  const opts = { timeZone: 'Europe/Amsterdam' };
  const named = await analyseExport(file, {
    ...opts,
    columns: [
      { column: 5, metric: 'air_temperature' },
      { column: 'RV | Kas 2 | %', metric: 'relative_humidity' },
    ],
  });
  t.same(named.blocking, []);
  t.same(
    named.columns.filter((c) => c.selected).map((c) => [c.index, c.metric]),
    [
      [5, 'air_temperature'],
      [6, 'relative_humidity'],
    ],
  );
  t.same(named.first_rows[0]!.values, { air_temperature: 19, relative_humidity: 75.5 });
  const withUnit = await analyseExport(file, { ...opts, columns: [{ column: 2, metric: 'air_temperature', unit: '°F' }] });
  t.equal(withUnit.columns.find((c) => c.index === 2)!.conversion, '°F → °C');
  const bad = await analyseExport(file, {
    ...opts,
    columns: [
      { column: 'nope', metric: 'air_temperature' },
      { column: 2, metric: 'temperature' },
      { column: 3, metric: 'co2', unit: '°C' },
    ],
  });
  t.same(
    bad.blocking.map((b) => b.code),
    ['unknown_column', 'unknown_metric', 'unit_not_convertible'],
  );

  // A confirmed mapping: only its columns are read, even if detection would read more.
  const detected = await analyseExport(file, opts);
  const mapping = { ...detected.mapping!, columns: detected.mapping!.columns.filter((c) => c.metric === 'co2') };
  const confirmed = await analyseExport(file, { ...opts, mapping: JSON.parse(JSON.stringify(mapping)) });
  t.same(confirmed.blocking, []);
  t.same(confirmed.first_rows[0]!.values, { co2: 650 });
  // Named columns beat the mapping.
  const both = await analyseExport(file, { ...opts, mapping, columns: [{ column: 7, metric: 'co2' }] });
  t.same(both.first_rows[0]!.values, { co2: 600 });
  // A mapping made for another header is refused.
  const other = await analyseExport(fixture('priva-nl.csv'), { ...opts, mapping });
  t.same(
    other.blocking.map((b) => b.code),
    ['mapping_mismatch'],
  );
});

t.test('period columns named in several ways', async (t) => {
  for (const [a, b] of [
    ['Datum van', 'Datum tot'],
    ['Start', 'End'],
    ['Van', 'Tot'],
    ['Period start', 'Period end'],
    ['Von', 'Bis'],
    ['Start time', 'End time'],
  ]) {
    const rows = [
      [a!, b!, 'Kastemperatuur (°C)'],
      ['2021-03-01 00:00', '2021-03-01 01:00', '20'],
      ['2021-03-01 01:00', '2021-03-01 02:00', '21'],
    ];
    t.same(detectTime(rows)?.spec, { kind: 'period', start_column: 0, end_column: 1, stamp: 'start' }, `${a} / ${b}`);
  }
  const two = [
    ['Time', 'Logged', 'Kastemperatuur (°C)'],
    ['2021-03-01 00:00', '2021-03-01 00:05', '20'],
    ['2021-03-01 01:00', '2021-03-01 01:05', '21'],
  ];
  t.same(detectTime(two)?.spec, { kind: 'single', column: 0 }, 'two timestamps without period names: the first stamps');
});

t.test('numbers: what Number() accepts beyond decimals is refused', async (t) => {
  const { numberReader } = await import('../../../src/climate/exports-reader/plan.js');
  const dot = numberReader('.');
  const comma = numberReader(',');
  t.equal(dot('1.05938e-007'), 1.05938e-7);
  t.equal(dot('0E-3'), 0);
  t.equal(dot(' 21.5 '), 21.5);
  t.equal(dot('-2.14748e+008'), -214748000);
  for (const bad of ['', '   ', 'NaN', 'Infinity', '-Infinity', '0x1A', '0b101', '0o17', 'abc', '1,5'])
    t.equal(dot(bad), null, JSON.stringify(bad));
  t.equal(comma('21,375'), 21.375);
  t.equal(comma('1.013,25'), 1013.25);
  t.equal(comma('-3,5'), -3.5);
  t.equal(comma('1,05938e-007'), 1.05938e-7);
});

t.test('dates with month names in four languages', async (t) => {
  const w = (cell: string) => {
    const p = splitDateCell(cell);
    return p ? wallFromParts(p, 'ymd') : null;
  };
  t.match(w('15-sep-2020 12:35'), { y: 2020, mo: 9, d: 15, h: 12, mi: 35 });
  t.match(w('15 Sep 2020'), { y: 2020, mo: 9, d: 15, h: 0 });
  t.match(w('Sep 15, 2020 1:05 PM'), { y: 2020, mo: 9, d: 15, h: 13, mi: 5 });
  t.match(w('3 mrt 2021 10:00'), { mo: 3, d: 3 });
  t.match(w('3. März 2021 10:00'), { mo: 3, d: 3 });
  t.match(w('3 maj 21'), { y: 2021, mo: 5, d: 3 });
  t.match(w('1 okt 2021'), { mo: 10 });
  t.match(w('1-mei-2021'), { mo: 5 });
  t.equal(splitDateCell('15 Foo 2020'), null);
  t.equal(splitDateCell('Totaal'), null);
  t.equal(splitDateCell('31 feb 2021 10:00') && wallFromParts(splitDateCell('31 feb 2021 10:00')!, 'ymd'), null, 'no 31 February');
  const a = await analyseExport(
    { bytes: Buffer.from('Datum;Tijd;Kastemperatuur (°C)\n01-mrt-2021;10:00;20,5\n02-mrt-2021;10:00;21,5\n') },
    { timeZone: 'Europe/Amsterdam' },
  );
  t.same(a.blocking, [], 'month names settle the order: no ambiguity although every day is ≤ 12');
  t.equal(a.layout.date_format, 'day, month name, year');
  t.same(
    a.first_rows.map((r) => r.at),
    ['2021-03-01T10:00:00+01:00', '2021-03-02T10:00:00+01:00'],
  );
});
