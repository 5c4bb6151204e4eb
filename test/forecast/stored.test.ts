// Stored forecasts and the CSV export over HTTP: issued and kept unchanged, listed with the harvest
// since, counted in contents, gone with a cascade, in the change log; the export as a spreadsheet reads it.
import t from 'tap';
import { SettableClock } from '../../src/clock.js';
import { createOrg, createTree, dbCount, startServer } from '../helpers/server.js';
import { iso, plusDays, typeCrop } from '../helpers/crop.js';

const START = '2026-01-05';
const clock = new SettableClock(iso(plusDays(START, 7 * 14), 'Europe/Amsterdam', 8));
const s = await startServer(t, {}, { clock });
const tree = await createTree(s, { startedOn: START });
const key = tree.adminKey;
const c = tree.cyclePath;
await s.request('PATCH', c, { key, body: { area_m2: 50 } });
await typeCrop(s, tree, START, { weeks: 14, harvestFrom: 8 });

t.test('issue, list newest first, with the harvest since and the error once a week is complete', async (t) => {
  const a = await s.request('POST', `${c}/forecasts`, { key });
  t.equal(a.status, 201, a.text);
  t.equal(a.body.week, '2026-W16', 'the current week by default');
  t.match(a.body.made_by_key_id, /^[0-9a-f-]{36}$/, 'by the key that asked');
  t.equal(a.body.made_by, `key:${a.body.made_by_key_id}`);
  t.equal(a.body.weeks.length, 8);
  t.match(a.body.forecast_id, /^[0-9a-f-]{36}$/);
  const live = (await s.request('GET', `${c}/forecast`, { key })).body;
  t.same(
    a.body.weeks.map((w: any) => [w.week, w.horizon, w.kg, w.p10_kg, w.p90_kg, w.method]),
    live.weeks.map((w: any) => [w.week, w.horizon, w.kg, w.p10_kg, w.p90_kg, w.method]),
    'what GET forecast answers',
  );
  t.same(a.body.inputs.truss_counts, live.inputs.truss_counts, 'with what it rested on');
  t.same(
    a.body.weeks.map((w: any) => [w.realized_kg, w.complete, w.error_kg]),
    Array(8).fill([0, false, null]),
  );
  const b = await s.request('POST', `${c}/forecasts?week=2026-W16`, { key });
  t.equal(b.status, 201);
  t.not(b.body.forecast_id, a.body.forecast_id, 'the same week again keeps both');
  const older = await s.request('POST', `${c}/forecasts?week=2026-W12`, { key });
  t.equal(older.status, 201);

  // A week on: the first forecast week is complete, with what was picked in it.
  clock.advance(7 * 86_400_000);
  const pick = await s.request('POST', `${c}/harvests`, { key, body: { harvested_on: '2026-04-14', kg: 33.5 } });
  t.equal(pick.status, 201);
  const list = await s.request('GET', `${c}/forecasts`, { key });
  t.equal(list.status, 200);
  t.equal(list.body.total, 3);
  t.same(
    list.body.items.map((f: any) => f.forecast_id),
    [older.body.forecast_id, b.body.forecast_id, a.body.forecast_id],
    'newest first',
  );
  const first = list.body.items[2].weeks[0];
  t.equal(first.week, '2026-W16');
  t.equal(first.complete, true);
  t.equal(first.realized_kg, 33.5);
  t.equal(first.realized_kg_per_m2, 0.67);
  t.equal(first.error_kg, Math.round((first.kg - 33.5) * 1000) / 1000);
  t.equal(list.body.items[2].weeks[1].complete, false);
  t.equal(list.body.items[2].weeks[0].kg, a.body.weeks[0].kg, 'the forecast itself never changes');
  // An edited harvest shows in the realized kilos, not in the forecast.
  await s.request('PATCH', `${c}/harvests/${pick.body.harvest_id}`, { key, body: { kg: 40 } });
  const again = (await s.request('GET', `${c}/forecasts?week=2026-W16&limit=1`, { key })).body;
  t.equal(again.total, 2);
  t.equal(again.items.length, 1);
  t.equal(again.items[0].weeks[0].realized_kg, 40);
  t.equal(again.items[0].weeks[0].kg, b.body.weeks[0].kg);
  clock.advance(-7 * 86_400_000);
});

t.test('a stored forecast cannot be changed, and bad input stores nothing', async (t) => {
  const before = (await s.request('GET', `${c}/forecasts`, { key })).body.total;
  const id = (await s.request('GET', `${c}/forecasts`, { key })).body.items[0].forecast_id;
  for (const method of ['PATCH', 'PUT', 'DELETE']) {
    const r = await s.request(method, `${c}/forecasts/${id}`, { key, body: { weeks: [] } });
    t.ok([404, 405].includes(r.status), `${method}: ${r.status}`);
  }
  for (const q of ['?week=2026-W40', '?week=x', '?week=2025-W40']) {
    const r = await s.request('POST', `${c}/forecasts${q}`, { key });
    t.equal(r.status, 422, q);
  }
  const other = await createOrg(s, 'Others');
  t.equal((await s.request('POST', `${c}/forecasts`, { key: other.adminKey })).status, 404);
  t.equal((await s.request('GET', `${c}/forecasts?limit=501`, { key })).status, 422);
  t.equal((await s.request('GET', `${c}/forecasts`, { key })).body.total, before);
});

t.test('counted in contents, in the change log, and gone with a cascade', async (t) => {
  const contents = await s.request('GET', `${c}/contents`, { key });
  t.equal(contents.status, 200);
  t.equal(contents.body.counts.forecasts, 3, JSON.stringify(contents.body));
  t.equal(await dbCount(s, `select count(*) as n from change_log where entity = 'forecasts' and op = 'insert'`), 3);
  const refused = await s.request('DELETE', c, { key });
  t.equal(refused.status, 409);
  t.equal(refused.body.counts.forecasts, 3);
  const gone = await s.request('DELETE', `${c}?cascade=true`, { key });
  t.equal(gone.status, 200, gone.text);
  t.equal(await dbCount(s, 'select count(*) as n from forecasts'), 0);
  t.equal(await dbCount(s, `select count(*) as n from change_log where entity = 'forecasts' and op = 'delete'`), 3);
});

t.test('the export: a header, a row per week, neutralised formulas, semicolons with decimal commas', async (t) => {
  const x = await createTree(s, { startedOn: START });
  const k = x.adminKey;
  await s.request('PATCH', x.cyclePath, { key: k, body: { area_m2: 40, name: 'Tomaten — Hal 2' } });
  await typeCrop(s, x, START, { weeks: 14, harvestFrom: 8, climate: true });
  await s.request('POST', `${x.cyclePath}/weeks/2026-W10`, { key: k, body: { text: '=HYPERLINK("http://evil","click")' } });
  await s.request('POST', `${x.cyclePath}/weeks/2026-W11`, { key: k, body: { pests: 'whitefly, some' } });
  await s.request('POST', `${x.cyclePath}/irrigation`, { key: k, body: { at: '2026-03-10T08:00:00', volume_l: 2000, drain_l: 500 } });
  await s.request('POST', `${x.cyclePath}/forecasts?week=2026-W12`, { key: k });
  await s.request('POST', `${x.cyclePath}/forecasts?week=2026-W15`, { key: k });

  const r = await s.request('GET', `${x.cyclePath}/export.csv`, { key: k });
  t.equal(r.status, 200);
  t.match(r.headers.get('content-type'), /^text\/csv; charset=utf-8/);
  t.match(
    r.headers.get('content-disposition'),
    /^attachment; filename="cropwalk-tomaten-hal-2-[0-9a-f]{8}-2026-04-13\.csv"; filename\*=UTF-8''/,
  );
  // fetch's text() drops a byte-order mark: read the bytes.
  const bytes = Buffer.from(await (await fetch(`${s.base}${x.cyclePath}/export.csv`, { headers: { 'x-api-key': k } })).arrayBuffer());
  t.same([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf], 'UTF-8 with a byte-order mark');
  t.ok(r.text.replace(/^\uFEFF/, '').startsWith('week,walk_model_green,'), 'a header row');
  const lines = r.text
    .replace(/^\uFEFF/, '')
    .trimEnd()
    .split('\r\n');
  t.equal(lines.length, 1 + 15, 'W02 to W16: the start to the current week');
  t.match(lines[1], /^2026-W02,/);
  const header = lines[0]!.split(',');
  const row = (week: string) => {
    const line = lines.find((l) => l.startsWith(week))!;
    return Object.fromEntries(
      line
        .match(/("([^"]|"")*"|[^,]*)(,|$)/g)!
        .slice(0, header.length)
        .map((cell, i) => [header[i], cell.replace(/,$/, '')]),
    );
  };
  t.equal(row('2026-W10').note, `"'=HYPERLINK(""http://evil"",""click"")"`, 'a formula is text');
  t.equal(row('2026-W11').note, '"{""pests"":""whitefly, some""}"');
  t.equal(row('2026-W11').irrigation_water_l, '2000');
  t.equal(row('2026-W11').harvest_kg, String(20 + (9 % 3) + 15 + (9 % 2)));
  t.equal(row('2026-W11').harvest_kg_per_m2, String((20 + (9 % 3) + 15 + (9 % 2)) / 40));
  t.equal(row('2026-W11').air_temperature_mean_c, String(Math.round(((20 * 14 + 23 * 10) / 24) * 100) / 100));
  t.not(row('2026-W12').forecast_h0_kg, '', 'the forecast stored as of W12, horizon 0');
  t.not(row('2026-W15').forecast_h3_kg, '', 'and the one as of W12 at horizon 3 for W15');
  t.equal(row('2026-W13').forecast_h0_kg, '');
  for (const line of lines) for (const cell of line.split(',')) t.notOk(/^[=+@\t\r]/.test(cell), `no cell starts a formula: ${cell}`);

  const semi = await s.request('GET', `${x.cyclePath}/export.csv?delimiter=semicolon`, { key: k });
  const semiLines = semi.text
    .replace(/^\uFEFF/, '')
    .trimEnd()
    .split('\r\n');
  t.match(semiLines[0], /^week;walk_model_green;/);
  const w11 = semiLines.find((l) => l.startsWith('2026-W11'))!.split(';');
  t.equal(w11[header.indexOf('harvest_kg_per_m2')], String((20 + (9 % 3) + 15 + (9 % 2)) / 40).replace('.', ','), 'a decimal comma');
  t.equal(w11.at(-1), '"{""pests"":""whitefly, some""}"', 'quotes doubled inside a quoted cell');
  t.equal((await s.request('GET', `${x.cyclePath}/export.csv?delimiter=tab`, { key: k })).status, 422);
});
