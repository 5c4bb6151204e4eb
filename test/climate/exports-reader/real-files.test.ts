// The real climate exports in ../shared/data/climate (see its README); skipped where absent.
import t from 'tap';
import path from 'node:path';
import { aggregateHourly, analyseExport, readReadings, type Analysis, type Reading } from '../../../src/climate/exports-reader/index.js';
import { sharedData } from '../../helpers/shared-data.js';

const { path: climate, skip } = sharedData('climate');
const file = (name: string) => ({ path: path.join(climate, name) });
const col = (a: Analysis, header: RegExp) => {
  const c = a.columns.find((x) => header.test(x.header));
  if (!c) throw new Error(`no column ${header}`);
  return c;
};
const codes = (ps: { code: string }[]) => ps.map((p) => p.code);

t.test('30MHz one week every hour', { skip }, async (t) => {
  const a = await analyseExport(file('30mhz-one-week-every-hour.csv'), { timeZone: 'Europe/Amsterdam' });
  t.same(a.blocking, []);
  t.equal(a.layout.delimiter, ',');
  t.same(a.layout.time, { kind: 'single', column: 0 });
  t.same(a.layout.data_rows, { first: 2, last: 169 });
  t.equal(a.layout.trailing_rows_dropped, 2, 'the empty row and "Link to dashboard"');
  t.same(a.layout.compartments.sort(), ['afd 1', 'afd 4']);
  const kt4 = col(a, /^kastemperatuur - °C {2}\(afd 4\)/);
  t.match(kt4, { metric: 'air_temperature', unit: '°C', compartment: 'afd 4', selected: true, setpoint: false });
  t.match(col(a, /^kastemperatuur - °C {2}\(afd 1\)/), { metric: 'air_temperature', compartment: 'afd 1', selected: false });
  t.match(col(a, /^vochtdeficit/), { metric: 'humidity_deficit', unit: 'g/m³', canonical_unit: 'g/m³', selected: true });
  t.match(col(a, /VPD \(kPa\)/), { metric: 'vpd', unit: 'kPa', selected: true });
  t.match(col(a, /^verwarmingstemp: ber/), { metric: 'heating_setpoint', setpoint: true, selected: true });
  t.match(col(a, /^ventilatietemp: ber/), { metric: 'ventilation_setpoint', setpoint: true, selected: true });
  t.match(col(a, /^PAR Sensor \(13D\)/), { metric: 'par', unit: 'µmol/m²/s', conversion: null, selected: true });
  t.match(col(a, /^RV kas/), { metric: 'relative_humidity', selected: true });
  t.match(col(a, /^Schermdoek 1/), { metric: 'screen_position', selected: true });
  t.match(col(a, /Pantar Tuinderij - Temperature/), { metric: 'outside_temperature', selected: true });
  t.match(col(a, /Pantar Tuinderij - Relative humidity/), { metric: 'outside_relative_humidity', selected: true });
  t.match(col(a, /Pantar Tuinderij - Wind speed/), { metric: 'wind_speed', unit: 'm/s' });
  t.match(col(a, /Pantar Tuinderij - Wind direction/), { metric: 'wind_direction' });
  t.match(col(a, /Pantar Tuinderij - Rain \(mm\)/), { metric: 'rain', unit: 'mm' });
  t.match(col(a, /Pantar Tuinderij - Rain probability/), { metric: null, confidence: 0, selected: false });
  t.match(col(a, /Pantar Tuinderij - Air pressure/), { metric: 'air_pressure', unit: 'hPa', selected: true });
  t.match(col(a, /Absolute diff\. temp/), { metric: null, selected: false });
  t.match(col(a, /ECw \(µS\/cm\)/), { metric: 'substrate_ec', unit: 'µS/cm', conversion: 'µS/cm → mS/cm' });
  t.match(col(a, /battery \(V\)/), { metric: null });
  t.ok(codes(a.warnings).includes('compartment_chosen'));
  t.equal(a.mapping!.compartment, 'afd 4');
  t.same(a.time_range, { from: '2020-09-07T00:00:00+02:00', to: '2020-09-13T23:00:00+02:00' });
  t.equal(a.first_rows[0]!.values.air_temperature, 18.2, 'afd 4 kastemperatuur at 2020-09-07 00:00');
  t.equal(a.first_rows[0]!.values.humidity_deficit, 2.65);
  t.equal(a.stats.data_rows, 168);
  t.equal(a.stats.dst.repeated_rows, 0, "this week has no clock change (the README's repeated hour is not in these files)");

  const a1 = await analyseExport(file('30mhz-one-week-every-hour.csv'), { timeZone: 'Europe/Amsterdam', compartment: 'afd 1' });
  t.match(col(a1, /^kastemperatuur - °C {2}\(afd 1\)/), { selected: true });
  t.match(col(a1, /^kastemperatuur - °C {2}\(afd 4\)/), { selected: false });
  t.equal(a1.first_rows[0]!.values.air_temperature, 18.8);
});

t.test('30MHz one month every 5 minutes: readings and hours', { skip }, async (t) => {
  const a = await analyseExport(file('30mhz-one-month-every-5-minutes.csv'), { timeZone: 'Europe/Amsterdam' });
  t.same(a.blocking, []);
  t.equal(a.layout.trailing_rows_dropped, 2);
  t.equal(a.first_rows[0]!.at, '2020-08-16T12:45:00+02:00');
  t.same(a.time_range, { from: '2020-08-16T12:45:00+02:00', to: '2020-09-15T12:45:00+02:00' });
  const pressure = a.stats.skipped_by_column.find((c) => c.metric === 'air_pressure')!;
  t.ok(pressure.skipped.out_of_range > 0, 'zero air pressure readings are skipped as impossible');
  const readings: Reading[] = [];
  for await (const b of readReadings(file('30mhz-one-month-every-5-minutes.csv'), { timeZone: 'Europe/Amsterdam', mapping: a.mapping! }))
    readings.push(...b);
  t.equal(readings.length, a.stats.values, 'the import reads what the preview counted');
  const hours = await aggregateHourly(readings, { timeZone: 'Europe/Amsterdam' });
  const h = hours.find((x) => x.metric === 'air_temperature' && x.hour === '2020-08-17T12:00:00+02:00')!;
  const inHour = readings.filter((r) => r.metric === 'air_temperature' && r.at.startsWith('2020-08-17T12:'));
  t.equal(h.count, inHour.length);
  t.ok(Math.abs(h.value - inHour.reduce((s, r) => s + r.value, 0) / inHour.length) < 1e-9);
});

t.test('aarslev celle 5: date and time columns, quoted numbers, exponents, empty names, spring change', { skip }, async (t) => {
  const a = await analyseExport(file('aarslev-celle5-2014-03.csv'), { timeZone: 'Europe/Copenhagen', previewRows: 200 });
  t.same(a.blocking, []);
  t.equal(a.layout.delimiter, ';');
  t.equal(a.layout.quoted, true);
  t.same(a.layout.time, { kind: 'date_time', date_column: 0, time_column: 1 });
  t.same(a.layout.compartments, ['Celle 5']);
  t.match(col(a, /Lufttemperatur$/), { metric: 'air_temperature', compartment: 'Celle 5', selected: true });
  t.match(col(a, /Endelig fælles varme sætpunkt/), { metric: 'heating_setpoint', setpoint: true });
  t.match(col(a, /Vent\. position 1/), { metric: 'vent_opening', selected: true });
  t.match(col(a, /Vent\. position 2/), { metric: 'vent_opening', selected: false });
  t.match(col(a, /Luftfugtighed RH%/), { metric: 'relative_humidity', unit: '%' });
  t.match(col(a, /Luftfugtighed VPD/), { metric: 'vpd', unit: 'hPa', conversion: 'hPa → kPa' });
  t.match(col(a, /: CO2$/), { metric: 'co2', setpoint: false });
  t.match(col(a, /CO2 krav/), { metric: 'co2_setpoint', setpoint: true, selected: true });
  t.match(col(a, /CO2 dosering/), { metric: 'co2_dosing' });
  t.match(col(a, /Gardin 1 position/), { metric: 'screen_position' });
  t.match(col(a, /Solindstråling/), { metric: 'global_radiation' });
  t.match(col(a, /Udetemperatur/), { metric: 'outside_temperature' });
  t.match(col(a, /Flow temperatur 1/), { metric: 'pipe_temperature', selected: true });
  t.match(col(a, /Lys intensitet/), { metric: null, confidence: 0 });
  t.equal(a.warnings.filter((w) => w.code === 'empty_column_name').length, 2, 'the two "Celle 5: " columns');
  t.equal(a.first_rows[0]!.at, '2014-03-01T00:00:00+01:00');
  t.equal(a.first_rows[0]!.values.global_radiation, 1.05938e-7, 'exponent notation');
  t.equal(a.first_rows[0]!.values.air_temperature, 20.8953);
  t.ok(Math.abs(a.first_rows[0]!.values.vpd! - 1.01026) < 1e-12, 'VPD 10.1026 hPa = 1.01026 kPa');
  const out = a.stats.skipped_by_column.find((c) => c.metric === 'outside_temperature')!;
  t.equal(out.skipped.out_of_range, 1, '-2.14748e+008 is a fill value');
  t.equal(a.stats.data_rows, 4458);
  t.equal(a.stats.dst.missing_rows_skipped, 0, 'the export itself leaves the missing hour out');

  const readings: Reading[] = [];
  for await (const b of readReadings(file('aarslev-celle5-2014-03.csv'), { timeZone: 'Europe/Copenhagen' })) readings.push(...b);
  const temps = readings.filter((r) => r.metric === 'air_temperature' && r.at.startsWith('2014-03-30T0'));
  const ats = temps.map((r) => r.at);
  t.ok(ats.includes('2014-03-30T01:50:00+01:00'));
  t.ok(ats.includes('2014-03-30T03:00:00+02:00'));
  t.notOk(
    ats.some((x) => x.startsWith('2014-03-30T02:')),
    'no reading in the hour that does not exist',
  );
  const i = ats.indexOf('2014-03-30T01:50:00+01:00');
  t.equal(Date.parse(ats[i + 1]!) - Date.parse(ats[i]!), 10 * 60_000, '01:50 CET to 03:00 CEST is 10 minutes');
  t.equal(readings.filter((r) => r.at.startsWith('2014-03-31T23:50')).length, 12);
});

t.test('a missing hour in real data read where it does not exist is skipped, not shifted', { skip }, async (t) => {
  // The aarslev wall clock read as if it were written in a zone whose spring change is that night
  // at 01:00 (Europe/London: 01:00 → 02:00): the 01:xx rows do not exist and are skipped.
  const a = await analyseExport(file('aarslev-celle5-2014-03.csv'), { timeZone: 'Europe/London' });
  t.same(a.stats.dst.missing_hours, ['2014-03-30T01']);
  t.equal(a.stats.dst.missing_rows_skipped, 6);
  t.ok(a.warnings.some((w) => w.code === 'dst_missing_hour'));
});
