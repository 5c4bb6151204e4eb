import t from 'tap';
import { readFileSync } from 'node:fs';
import { analyseExport, ExportRefused, readReadings, type Analysis, type Reading } from '../../../src/climate/exports-reader/index.js';
import { fixture } from '../../fixtures/climate/paths.js';

const AMS = 'Europe/Amsterdam';
const selected = (a: Analysis) => Object.fromEntries(a.columns.filter((c) => c.selected).map((c) => [c.metric!, c]));
const codes = (ps: { code: string }[]) => ps.map((p) => p.code);

async function all(it: AsyncIterable<Reading[]>): Promise<Reading[]> {
  const out: Reading[] = [];
  for await (const b of it) out.push(...b);
  return out;
}

t.test('three header rows: names, compartments, units; decimal commas; compartment choice', async (t) => {
  const a = await analyseExport(fixture('three-header-rows.csv'), { timeZone: AMS });
  t.same(a.blocking, []);
  t.equal(a.layout.delimiter, ';');
  t.equal(a.layout.decimal, ',');
  t.same(a.layout.header_rows, [
    { row: 1, role: 'names' },
    { row: 2, role: 'compartments' },
    { row: 3, role: 'units' },
  ]);
  t.same(a.layout.time, { kind: 'date_time', date_column: 0, time_column: 1 });
  t.equal(a.layout.date_format, 'DD-MM-YYYY');
  t.same(a.layout.compartments, ['Kas 1', 'Kas 2']);
  t.ok(codes(a.warnings).includes('compartment_chosen'));
  const s = selected(a);
  t.equal(s.air_temperature!.index, 2);
  t.equal(s.air_temperature!.compartment, 'Kas 1');
  t.equal(s.air_temperature!.header, 'Temperatuur | Kas 1 | °C');
  t.same(a.first_rows[0], { at: '2020-09-15T12:00:00+02:00', values: { air_temperature: 21.5, relative_humidity: 80.25, co2: 650 } });

  const k2 = await analyseExport(fixture('three-header-rows.csv'), { timeZone: AMS, compartment: 'kas 2' });
  t.same(k2.blocking, []);
  t.notOk(codes(k2.warnings).includes('compartment_chosen'));
  t.same(k2.first_rows[0]!.values, { air_temperature: 19, relative_humidity: 75.5, co2: 600 });
  t.same(
    k2.columns.filter((c) => c.selected).map((c) => c.index),
    [5, 6, 7],
    'only Kas 2 columns are read',
  );
  t.equal(k2.mapping!.compartment, 'Kas 2');

  const none = await analyseExport(fixture('three-header-rows.csv'), { timeZone: AMS, compartment: 'Kas 9' });
  t.same(codes(none.blocking), ['unknown_compartment']);
  t.match(none.blocking[0]!.message, /Kas 1, Kas 2/);
});

t.test('Priva-style Dutch export: compartment in names, setpoint, totals and footer dropped', async (t) => {
  const a = await analyseExport(fixture('priva-nl.csv'), { timeZone: AMS, previewRows: 100 });
  t.same(a.blocking, []);
  const s = selected(a);
  t.same(Object.keys(s).sort(), ['air_temperature', 'co2', 'heating_setpoint', 'pipe_temperature', 'relative_humidity', 'vent_opening']);
  t.equal(s.heating_setpoint!.setpoint, true);
  t.equal(s.heating_setpoint!.header, 'Kas 1 Verw.temp. sp (°C)');
  t.equal(s.air_temperature!.compartment, 'Kas 1');
  t.equal(s.vent_opening!.header, 'Kas 1 Raamstand lijzijde (%)');
  t.equal(a.layout.trailing_rows_dropped, 3, 'Totaal row, blank line and export footer');
  t.same(a.layout.data_rows, { first: 2, last: 9 });
  t.equal(a.first_rows.length, 8);
  t.same(a.time_range, { from: '2021-03-13T00:00:00+01:00', to: '2021-03-14T18:00:00+01:00' });
  t.equal(a.first_rows[1]!.values.vent_opening, 9);
  t.equal(a.first_rows[1]!.values.pipe_temperature, 39.5);
  t.equal(a.stats.values, 48);
});

t.test('LetsGrow-style periods: stamped at the start; °F, vpm, kJ/m² converted; spring hour skipped', async (t) => {
  const a = await analyseExport(fixture('letsgrow-periods.txt'), { timeZone: AMS });
  t.same(a.blocking, []);
  t.equal(a.layout.delimiter, '\t');
  t.same(a.layout.time, { kind: 'period', start_column: 0, end_column: 1, stamp: 'start' });
  const s = selected(a);
  t.equal(s.air_temperature!.conversion, '°F → °C');
  t.equal(s.co2!.conversion, 'vpm → ppm');
  t.equal(s.radiation_sum!.conversion, 'kJ/m² → J/cm²');
  t.same(
    a.first_rows.map((r) => r.at),
    ['2021-03-28T00:00:00+01:00', '2021-03-28T01:00:00+01:00', '2021-03-28T03:00:00+02:00', '2021-03-28T04:00:00+02:00'],
  );
  t.equal(a.first_rows[0]!.values.air_temperature, 20);
  t.equal(a.first_rows[2]!.values.radiation_sum, 30);
  t.same(a.stats.dst.missing_hours, ['2021-03-28T02']);
  t.equal(a.stats.dst.missing_rows_skipped, 1);
  t.ok(codes(a.warnings).includes('dst_missing_hour'));
  t.ok(codes(a.warnings).includes('period_start_stamps'));
});

t.test('Argus-style vendor codes with Excel serial days; NaN and fill values skipped per column', async (t) => {
  const a = await analyseExport(fixture('argus-codes.csv'), { timeZone: AMS, previewRows: 12 });
  t.same(a.blocking, []);
  t.equal(a.layout.date_format, 'Excel serial day');
  const s = selected(a);
  for (const [m, h] of [
    ['air_temperature', 'Tair'],
    ['relative_humidity', 'Rhair'],
    ['co2', 'CO2air'],
    ['par', 'Tot_PAR'],
    ['pipe_temperature', 'Tpipe'],
    ['vent_opening', 'VentLee'],
    ['screen_position', 'EnScr'],
    ['heating_setpoint', 't_heat_sp'],
    ['co2_setpoint', 'co2_sp'],
  ]) {
    t.equal(s[m!]?.header, h, `${h} → ${m}`);
  }
  t.equal(a.columns.find((c) => c.header === 'Ventwind')!.metric, 'vent_opening');
  t.equal(a.columns.find((c) => c.header === 'Ventwind')!.selected, false, 'duplicate: first wins');
  t.ok(codes(a.warnings).includes('duplicate_metric'));
  t.equal(a.first_rows[0]!.at, '2020-01-01T00:00:00+01:00');
  t.equal(a.first_rows[11]!.at, '2020-01-01T00:55:00+01:00', 'serial fractions land on whole minutes');
  const par = a.stats.skipped_by_column.find((c) => c.metric === 'par')!;
  t.same(par.skipped, { empty: 0, not_a_number: 1, out_of_range: 0 });
  const sp = a.stats.skipped_by_column.find((c) => c.metric === 'co2_setpoint')!;
  t.same(sp.skipped, { empty: 0, not_a_number: 0, out_of_range: 1 }, '5.47e+34 is skipped');
  const scr = a.stats.skipped_by_column.find((c) => c.metric === 'screen_position')!;
  t.equal(scr.skipped.empty, 1);
  t.notOk('co2_setpoint' in a.first_rows[7]!.values);
});

t.test('month-day-year with a 12-hour clock', async (t) => {
  const a = await analyseExport(fixture('mdy-us.csv'), { timeZone: 'America/Chicago' });
  t.same(a.blocking, []);
  t.equal(a.layout.date_order, 'mdy');
  t.equal(a.layout.date_format, 'MM/DD/YYYY');
  t.same(
    a.first_rows.map((r) => r.at),
    ['2020-09-15T11:05:00-05:00', '2020-09-15T12:05:00-05:00', '2020-09-15T13:05:00-05:00', '2020-09-15T14:05:00-05:00'],
  );
  t.equal(a.first_rows[0]!.values.relative_humidity, 50);
  t.ok(Math.abs(a.first_rows[0]!.values.air_temperature! - 21.1111111111) < 1e-9);
  const given = await analyseExport(fixture('mdy-us.csv'), { timeZone: 'America/Chicago', dateOrder: 'dmy' });
  t.same(codes(given.blocking), ['date_order_conflict'], 'a date_order the dates contradict is refused');
});

t.test('ambiguous day/month order blocks until date_order is given', async (t) => {
  const a = await analyseExport(fixture('ambiguous-dates.csv'), { timeZone: AMS });
  t.same(codes(a.blocking), ['ambiguous_date_order']);
  t.equal(a.mapping, null);
  t.same(a.first_rows, []);
  t.equal(a.layout.date_order, null);
  t.equal(a.layout.date_format, 'DD/MM/YYYY or MM/DD/YYYY');
  t.equal(a.layout.data_rows, null, 'not read through: nothing would be stored');
  t.equal(a.layout.trailing_rows_dropped, 0);
  const dmy = await analyseExport(fixture('ambiguous-dates.csv'), { timeZone: AMS, dateOrder: 'dmy' });
  t.same(dmy.blocking, []);
  t.equal(dmy.first_rows[0]!.at, '2021-03-01T10:00:00+01:00');
  const mdy = await analyseExport(fixture('ambiguous-dates.csv'), { timeZone: AMS, dateOrder: 'mdy' });
  t.equal(mdy.first_rows[0]!.at, '2021-01-03T10:00:00+01:00');
  t.equal(mdy.mapping!.date_order, 'mdy');
  const err = await all(readReadings(fixture('ambiguous-dates.csv'), { timeZone: AMS })).catch((e: unknown) => e);
  t.ok(err instanceof ExportRefused, 'the import refuses what the preview blocks');
  t.same(
    (err as ExportRefused).blocking.map((b) => b.code),
    ['ambiguous_date_order'],
  );
});

t.test('an ambiguous head is settled by a day > 12 later in the file', async (t) => {
  const lines = ['Date;Temperature (°C)'];
  for (let i = 0; i < 3000; i++) lines.push(`${String((i % 12) + 1).padStart(2, '0')}/01/2021 10:00;20`);
  lines.push('25/01/2021 10:00;21');
  const a = await analyseExport({ bytes: Buffer.from(lines.join('\n')), fileName: 'x.csv' }, { timeZone: AMS });
  t.same(a.blocking, []);
  t.equal(a.layout.date_order, 'dmy');
});

t.test('UTF-16 LE with BOM, German names, dotted dates', async (t) => {
  const raw = readFileSync(fixture('utf16le-bom.txt').path);
  t.same([...raw.subarray(0, 2)], [0xff, 0xfe], 'the fixture has a UTF-16 LE BOM');
  const a = await analyseExport(fixture('utf16le-bom.txt'), { timeZone: 'Europe/Berlin' });
  t.same(a.blocking, []);
  t.equal(a.layout.encoding, 'utf-16le');
  t.equal(a.layout.bom, true);
  t.equal(a.layout.date_format, 'DD.MM.YYYY');
  const s = selected(a);
  t.equal(s.pipe_temperature!.header, 'Heizrohr [°C]');
  t.equal(s.heating_setpoint!.header, 'Heiztemperatur Soll [°C]');
  t.equal(s.heating_setpoint!.setpoint, true);
  t.equal(a.first_rows[0]!.at, '2020-09-15T12:00:00+02:00');
  // Without its BOM the zero bytes still give it away.
  const noBom = await analyseExport({ bytes: raw.subarray(2) }, { timeZone: 'Europe/Berlin' });
  t.equal(noBom.layout.encoding, 'utf-16le');
  t.equal(noBom.layout.bom, false);
  t.same(noBom.first_rows, a.first_rows);
  const be = Buffer.from(raw.subarray(2));
  be.swap16();
  const big = await analyseExport({ bytes: Buffer.concat([Buffer.from([0xfe, 0xff]), be]) }, { timeZone: 'Europe/Berlin' });
  t.equal(big.layout.encoding, 'utf-16be');
  t.same(big.first_rows, a.first_rows);
});

t.test('Windows-1252: ° as byte 0xB0, Danish names, two-digit years, setpoints', async (t) => {
  const raw = readFileSync(fixture('windows-1252.csv').path);
  t.ok(raw.includes(0xb0), 'the fixture has a bare 0xB0 byte');
  const a = await analyseExport(fixture('windows-1252.csv'), { timeZone: 'Europe/Copenhagen' });
  t.same(a.blocking, []);
  t.equal(a.layout.encoding, 'windows-1252');
  t.equal(a.layout.date_format, 'DD-MM-YY');
  const s = selected(a);
  t.equal(s.air_temperature!.header, 'Lufttemperatur (°C)');
  t.equal(s.air_temperature!.unit, '°C');
  t.equal(s.outside_temperature!.header, 'Udetemperatur (°C)');
  t.equal(s.screen_position!.header, 'Gardin (%)');
  t.equal(s.heating_setpoint!.header, 'Varme sætpunkt (°C)');
  t.equal(s.co2_setpoint!.header, 'CO2 krav (ppm)');
  t.same(a.first_rows[0], {
    at: '2020-09-15T12:00:00+02:00',
    values: {
      air_temperature: 21.5,
      relative_humidity: 70,
      outside_temperature: 12.5,
      screen_position: 0,
      heating_setpoint: 20,
      co2_setpoint: 800,
    },
  });
});

t.test('30MHz-style repeated autumn hour: first occurrence summer offset, second winter', async (t) => {
  const a = await analyseExport(fixture('30mhz-autumn.csv'), { timeZone: AMS, previewRows: 20 });
  t.same(a.blocking, []);
  t.same(
    a.first_rows.map((r) => r.at),
    [
      '2020-10-25T01:30:00+02:00',
      '2020-10-25T01:45:00+02:00',
      '2020-10-25T02:00:00+02:00',
      '2020-10-25T02:15:00+02:00',
      '2020-10-25T02:30:00+02:00',
      '2020-10-25T02:45:00+02:00',
      '2020-10-25T02:00:00+01:00',
      '2020-10-25T02:15:00+01:00',
      '2020-10-25T02:30:00+01:00',
      '2020-10-25T02:45:00+01:00',
      '2020-10-25T03:00:00+01:00',
      '2020-10-25T03:15:00+01:00',
    ],
  );
  const instants = a.first_rows.map((r) => Date.parse(r.at));
  t.ok(
    instants.every((v, i) => i === 0 || v - instants[i - 1]! === 15 * 60_000),
    'every row 15 minutes after the last: no doubled instants',
  );
  t.same(a.stats.dst.repeated_hours, ['2020-10-25T02']);
  t.equal(a.stats.dst.repeated_rows, 4);
  t.equal(a.layout.trailing_rows_dropped, 2, 'blank row and "Link to dashboard"');
  t.equal(selected(a).par!.unit, 'µmol/m²/s');
  t.same(codes(a.warnings).sort(), ['dst_repeated_hour', 'values_not_numbers', 'values_out_of_range']);
});

t.test('.xlsx with text dates on the sheet with the most rows', async (t) => {
  const a = await analyseExport(fixture('text-dates.xlsx'), { timeZone: AMS });
  t.same(a.blocking, []);
  t.equal(a.layout.kind, 'xlsx');
  t.equal(a.layout.sheet, 'Data');
  t.equal(a.layout.date_format, 'DD-MM-YYYY');
  t.same(a.first_rows[0], { at: '2020-09-16T08:00:00+02:00', values: { air_temperature: 20, relative_humidity: 70, co2: 500 } });
  t.equal(a.stats.data_rows, 5);
});

t.test('.xlsx with real date cells, across the autumn change', async (t) => {
  const a = await analyseExport(fixture('real-dates.xlsx'), { timeZone: AMS });
  t.same(a.blocking, []);
  t.same(
    a.first_rows.map((r) => r.at),
    [
      '2020-10-25T01:30:00+02:00',
      '2020-10-25T02:00:00+02:00',
      '2020-10-25T02:30:00+02:00',
      '2020-10-25T02:00:00+01:00',
      '2020-10-25T02:30:00+01:00',
      '2020-10-25T03:00:00+01:00',
    ],
  );
  t.equal(selected(a).outside_temperature!.header, 'Outside temperature (°C)');
});

t.test('readReadings streams the same readings the preview shows', async (t) => {
  const a = await analyseExport(fixture('priva-nl.csv'), { timeZone: AMS, previewRows: 200 });
  const it = readReadings(fixture('priva-nl.csv'), { timeZone: AMS, batchSize: 7 });
  const batches: Reading[][] = [];
  for await (const b of it) batches.push(b);
  t.ok(batches.length > 1, 'batches');
  t.ok(batches.slice(0, -1).every((b) => b.length === 7));
  const readings = batches.flat();
  const fromPreview = a.first_rows.flatMap((r) => Object.entries(r.values).map(([metric, value]) => ({ at: r.at, metric, value })));
  t.same(readings, fromPreview);
  t.equal(it.stats!.values, 48);
});

t.test('decimal commas read the same in every block of a large file', async (t) => {
  const lines = ['Datum;Tijd;Kas 1 Temperatuur (°C);Buitentemp. (°C);Luchtdruk (hPa)'];
  for (let i = 0; i < 8000; i++) {
    const day = String(1 + Math.floor(i / 288)).padStart(2, '0');
    const min = (i % 288) * 5;
    // Thousands separators only in the first rows (the header's block has '.' in any case).
    const pressure = i < 10 ? '1.013,25' : '1013,25';
    lines.push(
      `${day}-01-2021;${String(Math.floor(min / 60)).padStart(2, '0')}:${String(min % 60).padStart(2, '0')};21,375;-3,5;${pressure}`,
    );
  }
  const bytes = Buffer.from(lines.join('\r\n'));
  t.ok(bytes.length > 4 * 64 * 1024, 'several blocks');
  const readings: Reading[] = [];
  for await (const b of readReadings({ bytes }, { timeZone: AMS })) readings.push(...b);
  const by = (m: string) => new Set(readings.filter((r) => r.metric === m).map((r) => r.value));
  t.same([...by('air_temperature')], [21.375], '21,375 is 21.375 everywhere, never 21375');
  t.same([...by('outside_temperature')], [-3.5]);
  t.same([...by('air_pressure')], [1013.25], '1.013,25 and 1013,25 are both 1013.25');
  t.equal(readings.length, 24_000);
});

t.test('a newest-first export resolves the repeated hour the other way round', async (t) => {
  const text = readFileSync(fixture('30mhz-autumn.csv').path, 'utf8').split('\n');
  const header = text[0]!;
  const data = text.slice(1).filter((l) => /^\d{4}-/.test(l));
  const bytes = Buffer.from([header, ...data.reverse()].join('\n') + '\n');
  const a = await analyseExport({ bytes }, { timeZone: AMS, previewRows: 20 });
  t.same(a.blocking, []);
  const ats = a.first_rows.map((r) => r.at);
  t.equal(ats[0], '2020-10-25T03:15:00+01:00');
  t.same(ats.slice(2, 6), [
    '2020-10-25T02:45:00+01:00',
    '2020-10-25T02:30:00+01:00',
    '2020-10-25T02:15:00+01:00',
    '2020-10-25T02:00:00+01:00',
  ]);
  t.same(ats.slice(6, 10), [
    '2020-10-25T02:45:00+02:00',
    '2020-10-25T02:30:00+02:00',
    '2020-10-25T02:15:00+02:00',
    '2020-10-25T02:00:00+02:00',
  ]);
  const ms = ats.map((x) => Date.parse(x));
  t.ok(
    ms.every((v, i) => i === 0 || ms[i - 1]! - v === 15 * 60_000),
    'strictly 15 minutes apart, newest first',
  );
});
