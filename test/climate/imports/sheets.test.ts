// A grower's season workbook over the routes: the preview finds the sheet of dated readings
// behind the growth records, a `sheet` field picks one by name, and the import stores the daily
// values as daily readings of their own metrics, one per day at the day's start.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { startServer, createTree } from '../../helpers/server.js';
import { fixture } from '../../fixtures/climate/paths.js';
import { climateState, form } from './helpers.js';

const WORKBOOK = readFileSync(fixture('season-workbook.xlsx').path);

t.test('season workbook: the sheet of daily readings, chosen or named, stored as daily readings', async (t) => {
  const s = await startServer(t);
  const tree = await createTree(s, { startedOn: '2026-01-05' });
  const key = tree.adminKey;
  const C = `${tree.cyclePath}/climate`;
  const post = (route: string, fields: Record<string, string> = {}) =>
    s.request('POST', `${C}/${route}`, { key, raw: form(WORKBOOK, 'seizoen 2026.xlsx', fields) });

  for (const route of ['file/preview', 'csv/preview']) {
    const p = await post(route);
    t.equal(p.status, 200, route);
    t.same(p.body.blocking, [], `${route}: nothing blocks`);
    t.equal(p.body.layout.sheet, 'Energie & licht', `${route}: the sheet read`);
    t.same(
      p.body.layout.other_sheets.map((o: any) => o.name),
      ['Groei', 'Productie'],
      `${route}: the others listed`,
    );
  }
  const growth = await post('file/preview', { sheet: 'Groei' });
  t.equal(growth.status, 200);
  t.equal(growth.body.layout.sheet, 'Groei', 'the sheet named');
  t.match(growth.body.blocking, [{ code: 'no_mapped_columns' }]);

  const before = await climateState(s, tree);
  const unknown = await post('file', { sheet: 'Klimaat' });
  t.equal(unknown.status, 400);
  t.match(unknown.body, {
    code: 'climate_file_blocked',
    blocking: [{ code: 'unknown_sheet', message: /Groei, Productie, Energie & licht/ }],
  });
  const long = await post('file/preview', { sheet: 'x'.repeat(300) });
  t.equal(long.status, 422, 'a sheet name longer than a workbook allows');
  t.match(long.body.errors, [{ in: 'body', name: 'sheet' }]);
  t.same(await climateState(s, tree), before, 'nothing stored');

  const preview = await post('file/preview');
  const imported = await post('file', { mapping: JSON.stringify(preview.body.mapping) });
  t.equal(imported.status, 200, imported.text.slice(0, 300));
  t.equal(imported.body.readings_added, 60 * 4, 'four daily values a day, sixty days');
  const dli = await s.request('GET', `${C}?metric=daily_light_integral&limit=100`, { key });
  t.equal(dli.body.total, 60, 'one daily light integral a day');
  const first = dli.body.items.at(-1);
  t.match(first, { at: '2026-01-05T00:00:00+01:00', value: 8, unit: 'mol/m²/d' }, "at the day's start, as in the file");
  const heat = await s.request('GET', `${C}?metric=daily_heat_energy&from=2026-01-06&to=2026-01-06T23:59`, { key });
  t.match(heat.body.items, [{ at: '2026-01-06T00:00:00+01:00', value: 3.17, unit: 'MJ/m²' }]);
  const hourly = await s.request('GET', `${C}?metric=radiation_sum`, { key });
  t.equal(hourly.body.total, 0, 'no daily sum stored as an hour of radiation');
});
