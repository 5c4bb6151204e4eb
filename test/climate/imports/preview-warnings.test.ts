// What the preview says about a file before anything is stored: a file whose readings lie outside
// the crop cycle's dates is named as such, and a warning's column number is the `index` of that
// column in the same answer.
import t from 'tap';
import { startServer, createTree } from '../../helpers/server.js';
import { climateCsv, form } from './helpers.js';

t.test("a file outside the cycle's dates: the previews warn, the import records it", async (t) => {
  const s = await startServer(t);
  const tree = await createTree(s, { startedOn: '2026-01-05' });
  const key = tree.adminKey;
  const C = `${tree.cyclePath}/climate`;
  const post = (route: string, csv: string) => s.request('POST', `${C}/${route}`, { key, raw: form(csv, 'export.csv') });
  const outside = (body: any) => body.warnings.find((w: any) => w.code === 'outside_cycle_dates');

  const old = climateCsv(48, { start: '2014-03-01T00:00' });
  for (const route of ['csv/preview', 'file/preview']) {
    const r = await post(route, old);
    t.equal(r.status, 200, route);
    t.match(outside(r.body), { message: /2014-03-01 to 2014-03-01.*before the crop cycle started on 2026-01-05/ }, `${route}: warned`);
  }
  const straddling = climateCsv(48, { start: '2026-01-04T22:00' });
  t.match(outside((await post('csv/preview', straddling)).body), {
    message: /begin on 2026-01-04, before the crop cycle started on 2026-01-05/,
  });
  const inside = climateCsv(48, { start: '2026-03-02T00:00' });
  t.notOk(outside((await post('csv/preview', inside)).body), 'a file inside the cycle: no such warning');

  // A cycle that has ended: readings after its last day.
  const patched = await s.request('PATCH', tree.cyclePath, { key, body: { ended_on: '2026-02-28' } });
  t.equal(patched.status, 200);
  t.match(outside((await post('csv/preview', inside)).body), { message: /after the crop cycle ended on 2026-02-28/ });
  const stillInside = climateCsv(48, { start: '2026-02-01T00:00' });
  t.notOk(outside((await post('csv/preview', stillInside)).body));

  // Importing it anyway is allowed (the cycle's dates may be the wrong ones), and the import says so.
  const imported = await post('csv', old);
  t.equal(imported.status, 200);
  t.match(imported.body.warnings, [/before the crop cycle started on 2026-01-05/], 'the import answers it');
  const history = await s.request('GET', `${C}/imports`, { key });
  t.match(
    history.body.items.find((i: any) => i.id === imported.body.id)?.warnings,
    [/before the crop cycle started on 2026-01-05/],
    'and records it',
  );
});

t.test("a warning's column number is the column's index in the same answer", async (t) => {
  const s = await startServer(t);
  const tree = await createTree(s);
  const key = tree.adminKey;
  const rows = ['time,Air temperature (°C),Relative humidity (%),,CO2 (ppm),Kastemperatuur (°C)'];
  for (let i = 0; i < 24; i++) {
    const at = `2026-03-02 ${String(i).padStart(2, '0')}:00`;
    // Out-of-range temperatures, text in the CO₂ column, an unnamed column, a second temperature.
    rows.push(`${at},${i % 4 === 0 ? 999 : 20 + (i % 3)},${70 + (i % 5)},x,${i % 3 === 0 ? 'n/a' : 400 + i},${19 + (i % 2)}`);
  }
  const r = await s.request('POST', `${tree.cyclePath}/climate/csv/preview`, { key, raw: form(rows.join('\n') + '\n', 'export.csv') });
  t.equal(r.status, 200);
  const withColumn = r.body.warnings.filter((w: any) => typeof w.column === 'number');
  t.ok(withColumn.length >= 3, `${withColumn.length} warnings name a column: ${withColumn.map((w: any) => w.code).join(', ')}`);
  for (const w of withColumn) {
    const col = r.body.columns.find((c: any) => c.index === w.column);
    t.ok(col, `${w.code}: column ${w.column} is in columns[]`);
    t.match(w.message, new RegExp(`\\bcolumn ${w.column}\\b`), `${w.code}: "${w.message}" counts as columns[].index does`);
  }
  // Every column a message names by number is named by its index, with the header the answer gives it.
  for (const w of r.body.warnings)
    for (const m of String(w.message).matchAll(/\bcolumn (\d+) \(/g)) {
      const col = r.body.columns.find((c: any) => c.index === Number(m[1]));
      t.ok(col, `"${w.message}": column ${m[1]} exists`);
      if (col?.header && !/^column \d+ \([a-z_0-9]+\):/.test(String(w.message).slice(m.index)))
        t.ok(String(w.message).slice(m.index).startsWith(`column ${col.index} (${col.header})`), `column ${m[1]} is ${col.header}`);
    }
  const duplicate = r.body.warnings.find((w: any) => w.code === 'duplicate_metric');
  t.match(duplicate?.message, /is read, not column 1 \(Air temperature \(°C\)\)/, 'the column not read is named the same way');
});
