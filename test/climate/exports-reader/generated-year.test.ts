// The bench's generator, read end to end: an hourly year in Europe/Amsterdam wall-clock time.
import t from 'tap';
import path from 'node:path';
import { generateClimateYear } from '../../../scripts/gen-climate-year.js';
import { aggregateHourly, analyseExport, readReadings, type Reading } from '../../../src/climate/exports-reader/index.js';

t.test('a generated year reads with its clock changes', async (t) => {
  const file = path.join(t.testdir({}), 'year.csv');
  const rows = await generateClimateYear(file, 2021, 60);
  t.equal(rows, 8760, 'one row per real hour');
  const a = await analyseExport({ path: file }, { timeZone: 'Europe/Amsterdam' });
  t.same(a.blocking, []);
  t.equal(a.layout.decimal, ',');
  t.equal(a.layout.date_format, 'DD-MM-YYYY');
  t.same(a.time_range, { from: '2021-01-01T00:00:00+01:00', to: '2021-12-31T23:00:00+01:00' });
  t.same(a.stats.dst.repeated_hours, ['2021-10-31T02']);
  t.same(a.stats.dst.missing_hours, [], 'the generator writes no 02:00 on 28 March');
  t.equal(a.stats.data_rows, 8760);
  const selected = a.columns
    .filter((c) => c.selected)
    .map((c) => c.metric)
    .sort();
  t.equal(selected.length, 28, '30 columns, two of them second columns for a metric');
  t.ok(selected.includes('humidity_setpoint') && selected.includes('radiation_sum') && selected.includes('co2_dosing'));
  const readings: Reading[] = [];
  for await (const b of readReadings({ path: file }, { timeZone: 'Europe/Amsterdam', mapping: a.mapping! })) readings.push(...b);
  t.equal(readings.length, a.stats.values);
  const hours = await aggregateHourly(readings);
  t.equal(new Set(hours.map((h) => h.hour)).size, 8760, 'every real hour once: the repeated wall hour is two hours');
  t.ok(hours.every((h) => h.count === 1));
});
