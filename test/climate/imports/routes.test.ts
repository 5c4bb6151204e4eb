import t from 'tap';
import { startServer, createTree, dbCount, dbRows } from '../../helpers/server.js';
import { climateCsv, climateState, form } from './helpers.js';

t.test('climate imports over HTTP', async (t) => {
  const s = await startServer(t);
  const tree = await createTree(s, { timeZone: 'Europe/Amsterdam' });
  const key = tree.adminKey;
  const C = `${tree.cyclePath}/climate`;
  const post = (path: string, fd: FormData) => s.request('POST', `${C}/${path}`, { key, raw: fd });
  const readings = async (metric: string) => (await s.request('GET', `${C}?metric=${metric}&limit=1000`, { key })).body;

  t.test('csv preview writes nothing and answers the analysis', async (t) => {
    const before = await climateState(s, tree);
    const r = await post('csv/preview', form(climateCsv(24), 'export.csv'));
    t.equal(r.status, 200, r.text);
    t.equal(r.body.time_zone, 'Europe/Amsterdam');
    t.same(
      r.body.columns.map((c: any) => [c.metric, c.unit, c.conversion, c.selected]),
      [
        ['air_temperature', '°F', '°F → °C', true],
        ['relative_humidity', '%', null, true],
        ['co2', 'ppm', null, true],
      ],
    );
    t.same(r.body.time_range, { from: '2026-03-02T00:00:00+01:00', to: '2026-03-02T01:55:00+01:00' });
    t.equal(r.body.first_rows[0].values.air_temperature, 20);
    t.same(r.body.blocking, []);
    t.equal(r.body.mapping.columns.length, 3);
    t.same(await climateState(s, tree), before);
  });

  t.test('csv upload by detection stores every reading at its instant, in canonical units', async (t) => {
    const r = await post('csv', form(climateCsv(24), 'export.csv'));
    t.equal(r.status, 200, r.text);
    t.match(r.body, {
      kind: 'csv',
      status: 'done',
      file_name: 'export.csv',
      rows_read: 24,
      readings_added: 72,
      readings_updated: 0,
      readings_skipped: 0,
      actor: /^key:/,
    });
    t.same(r.body.metrics, ['air_temperature', 'co2', 'relative_humidity']);
    t.same(r.body.time_range, { from: '2026-03-02T00:00:00+01:00', to: '2026-03-02T01:55:00+01:00' });
    const temps = await readings('air_temperature');
    t.equal(temps.total, 24);
    const last = temps.items[0];
    t.equal(last.at, '2026-03-02T01:55:00+01:00');
    t.ok(Math.abs(last.value - ((68 + 11 - 32) * 5) / 9) < 1e-9, '79 °F in °C');
    t.equal(last.source, r.body.id);
  });

  t.test('the same content again: nothing new, recorded as skipped', async (t) => {
    const r = await post('csv', form(climateCsv(24), 'export.csv'));
    t.equal(r.status, 200);
    t.same([r.body.readings_added, r.body.readings_updated, r.body.readings_skipped], [0, 0, 72]);
    t.equal((await readings('co2')).total, 24, 'never doubled');
    const list = await s.request('GET', `${C}/imports`, { key });
    t.equal(list.body.total, 2);
    t.equal(list.body.items[0].id, r.body.id, 'newest first');
    t.equal(list.body.items[0].content_hash, list.body.items[1].content_hash);
  });

  t.test('precedence: columns win over mapping; a mapping imports only its columns', async (t) => {
    const tr = await createTree(s);
    const url = `${tr.cyclePath}/climate`;
    const csv = climateCsv(12);
    const preview = await s.request('POST', `${url}/csv/preview`, { key: tr.adminKey, raw: form(csv, 'a.csv') });
    const mapping = { ...preview.body.mapping, columns: preview.body.mapping.columns.filter((c: any) => c.metric === 'co2') };
    const viaMapping = await s.request('POST', `${url}/csv`, {
      key: tr.adminKey,
      raw: form(csv, 'a.csv', { mapping: JSON.stringify(mapping) }),
    });
    t.equal(viaMapping.status, 200, viaMapping.text);
    t.same(viaMapping.body.metrics, ['co2'], 'columns outside the mapping are not imported');
    t.same(
      viaMapping.body.mapping.columns.map((c: any) => c.metric),
      ['co2'],
    );
    const columns = [
      { column: 'Relative humidity (%)', metric: 'relative_humidity' },
      { column: 1, metric: 'air_temperature', unit: '°F' },
    ];
    const ok = await s.request('POST', `${url}/csv`, {
      key: tr.adminKey,
      raw: form(csv, 'a.csv', { mapping: JSON.stringify(mapping), columns: JSON.stringify(columns) }),
    });
    t.equal(ok.status, 200, ok.text);
    t.same(ok.body.metrics, ['air_temperature', 'relative_humidity'], 'columns win over the mapping');
    t.same(
      ok.body.mapping.columns.map((c: any) => c.metric),
      ['air_temperature', 'relative_humidity'],
    );
  });

  t.test('bad form fields answer 422 and store nothing', async (t) => {
    const before = await climateState(s, tree);
    const cases: [Record<string, string>, string][] = [
      [{ columns: 'not json' }, 'columns'],
      [{ columns: JSON.stringify([{ column: 1, metric: 'nonsense' }]) }, 'columns.0.metric'],
      [{ columns: JSON.stringify([]) }, 'columns'],
      [{ mapping: JSON.stringify({ version: 2 }) }, 'mapping'],
      [{ date_order: 'ymd' }, 'date_order'],
      [{ colour: 'red' }, 'colour'],
    ];
    for (const [fields, name] of cases) {
      const r = await post('csv', form(climateCsv(3), 'x.csv', fields));
      t.equal(r.status, 422, JSON.stringify(fields));
      t.ok(
        r.body.errors.some((e: any) => e.name === name || e.name.startsWith(name)),
        `${name}: ${JSON.stringify(r.body.errors)}`,
      );
    }
    const noFile = await s.request('POST', `${C}/csv`, {
      key,
      raw: (() => {
        const f = new FormData();
        f.append('compartment', 'x');
        return f;
      })(),
    });
    t.equal(noFile.status, 422);
    const json = await s.request('POST', `${C}/csv`, { key, body: { file: 'x' } });
    t.equal(json.status, 415);
    t.same(await climateState(s, tree), before);
  });

  t.test('a file with blocking problems: 400 climate_file_blocked, nothing stored', async (t) => {
    const before = await climateState(s, tree);
    for (const path of ['csv', 'file']) {
      const r = await post(path, form('just,some,words\nno,times,here\n', 'bad.csv'));
      t.equal(r.status, 400, r.text);
      t.equal(r.body.code, 'climate_file_blocked');
      t.ok(r.body.blocking.length > 0);
      t.match(r.headers.get('content-type'), /problem\+json/);
    }
    const mismatch = await post(
      'csv',
      form(climateCsv(3, { header: 'time,Temperature (°C),RH (%),CO2 (ppm)' }), 'other.csv', {
        mapping: JSON.stringify((await post('csv/preview', form(climateCsv(3), 'x.csv'))).body.mapping),
      }),
    );
    t.equal(mismatch.status, 400);
    t.equal(mismatch.body.blocking[0].code, 'mapping_mismatch');
    t.same(await climateState(s, tree), before);
  });

  t.test('a problem half way through the file rolls the whole import back', async (t) => {
    const before = await climateState(s, tree);
    const good = climateCsv(2000, { start: '2026-05-01T00:00' });
    const preview = await post('csv/preview', form(climateCsv(3), 'x.csv'));
    const late = good + '9'.repeat(2 * 1024 * 1024) + '\n';
    const r = await post('csv', form(late, 'late.csv', { mapping: JSON.stringify(preview.body.mapping) }));
    t.equal(r.status, 400, r.text);
    t.equal(r.body.blocking[0].code, 'line_too_long');
    t.same(await climateState(s, tree), before, 'the 2,000 good rows read before it were not kept');
  });

  t.test('climate-computer file: hourly values, re-imported hours updated not doubled, remember', async (t) => {
    const tr = await createTree(s, { timeZone: 'Europe/Amsterdam' });
    const url = `${tr.cyclePath}/climate`;
    const gh = `${tr.greenhousePath}/climate/file-mapping`;
    t.equal((await s.request('GET', gh, { key: tr.adminKey })).status, 404);
    const csv = climateCsv(36, { temperature: (i) => 50 + i });
    const preview = await s.request('POST', `${url}/file/preview`, { key: tr.adminKey, raw: form(csv, 'kas.csv') });
    t.equal(preview.status, 200, preview.text);
    t.same(
      preview.body.first_hours.map((h: any) => h.hour),
      ['2026-03-02T00:00:00+01:00', '2026-03-02T01:00:00+01:00', '2026-03-02T02:00:00+01:00'],
    );
    // Hour 0 holds 50..61 °F: mean 55.5 °F.
    t.ok(Math.abs(preview.body.first_hours[0].values.air_temperature - ((55.5 - 32) * 5) / 9) < 1e-9);
    t.same(preview.body.already_stored, []);
    const r = await s.request('POST', `${url}/file`, {
      key: tr.adminKey,
      raw: form(csv, 'kas.csv', { remember: 'true', mapping: JSON.stringify(preview.body.mapping) }),
    });
    t.equal(r.status, 200, r.text);
    t.match(r.body, { kind: 'file', readings_added: 9, remembered: true, rows_read: 36 });
    const co2 = (await s.request('GET', `${url}?metric=co2`, { key: tr.adminKey })).body;
    t.same(
      co2.items.map((i: any) => [i.at, i.value]),
      [
        ['2026-03-02T02:00:00+01:00', 429.5],
        ['2026-03-02T01:00:00+01:00', 417.5],
        ['2026-03-02T00:00:00+01:00', 405.5],
      ],
    );
    const saved = await s.request('GET', gh, { key: tr.adminKey });
    t.equal(saved.status, 200);
    t.same(saved.body.mapping, preview.body.mapping);
    t.equal(saved.body.source_file_name, 'kas.csv');
    // The next export overlaps: its first hours are stored again, with new values.
    const next = climateCsv(36, { start: '2026-03-02T01:00', temperature: () => 80 });
    const again = await s.request('POST', `${url}/file/preview`, { key: tr.adminKey, raw: form(next, 'kas2.csv') });
    t.same(again.body.already_stored, [
      { metric: 'air_temperature', readings: 2 },
      { metric: 'co2', readings: 2 },
      { metric: 'relative_humidity', readings: 2 },
    ]);
    const r2 = await s.request('POST', `${url}/file`, { key: tr.adminKey, raw: form(next, 'kas2.csv') });
    t.match(r2.body, { readings_added: 3, readings_updated: 6, readings_skipped: 0, remembered: false });
    t.equal((await s.request('GET', `${url}?metric=air_temperature`, { key: tr.adminKey })).body.total, 4, 'four hours, never doubled');
    const del = await s.request('DELETE', gh, { key: tr.adminKey });
    t.same([del.status, del.body.deleted], [200, true]);
    t.equal((await s.request('GET', gh, { key: tr.adminKey })).status, 404);
    const del2 = await s.request('DELETE', gh, { key: tr.adminKey });
    t.same([del2.status, del2.body.deleted], [200, false]);
  });

  t.test('ingest: body is the file, header key only, saved choices', async (t) => {
    const tr = await createTree(s, { timeZone: 'Europe/Amsterdam' });
    const url = `${tr.cyclePath}/climate`;
    const csv = climateCsv(24);
    const ingest = (body: string, headers: Record<string, string> = {}, query = '') =>
      s.request('POST', `${url}/ingest${query}`, {
        raw: body,
        headers: { 'content-type': 'text/csv', 'x-api-key': tr.adminKey, ...headers },
      });
    const none = await ingest(csv);
    t.equal(none.status, 409);
    t.equal(none.body.code, 'no_saved_mapping');
    await s.request('POST', `${url}/file`, { key: tr.adminKey, raw: form(csv, 'first.csv', { remember: 'true' }) });
    const r = await ingest(climateCsv(36), { 'x-file-name': '../../etc/passwd' });
    t.equal(r.status, 200, r.text);
    t.match(r.body, { kind: 'ingest', file_name: 'passwd', readings_added: 3, readings_skipped: 6 });
    const q = await ingest(climateCsv(48), {}, '?filename=night.csv');
    t.equal(q.body.file_name, 'night.csv');
    const before = await climateState(s, { ...tr });
    const other = await ingest(climateCsv(24, { header: 'time,Temperature (°C),RH (%),CO2 (ppm)' }));
    t.equal(other.status, 422);
    t.equal(other.body.code, 'mapping_mismatch');
    t.ok(other.body.errors.length > 0);
    const inQuery = await s.request('POST', `${url}/ingest?api_key=${tr.adminKey}`, { raw: csv, headers: { 'content-type': 'text/csv' } });
    t.equal(inQuery.status, 401);
    const cookie = await s.request('POST', `${url}/ingest`, {
      raw: csv,
      headers: { 'content-type': 'text/csv', cookie: `service_key=${tr.adminKey}`, origin: s.base },
    });
    t.equal(cookie.status, 401);
    t.same(await climateState(s, { ...tr }), before, 'refused ingests stored nothing');
  });

  t.test('undo over HTTP: conflicts name later imports; confirm; twice is 409', async (t) => {
    const tr = await createTree(s, { timeZone: 'Europe/Amsterdam' });
    const url = `${tr.cyclePath}/climate`;
    const first = await s.request('POST', `${url}/csv`, { key: tr.adminKey, raw: form(climateCsv(12), 'a.csv') });
    const second = await s.request('POST', `${url}/csv`, {
      key: tr.adminKey,
      raw: form(climateCsv(12, { temperature: () => 90 }), 'b.csv'),
    });
    t.equal(second.body.readings_updated, 12);
    const refused = await s.request('POST', `${url}/imports/${first.body.id}/undo`, { key: tr.adminKey });
    t.equal(refused.status, 409);
    t.equal(refused.body.code, 'conflict');
    t.same(refused.body.later_imports, [second.body.id]);
    const notConfirmed = await s.request('POST', `${url}/imports/${first.body.id}/undo`, { key: tr.adminKey, body: { confirm: false } });
    t.equal(notConfirmed.status, 409);
    const badBody = await s.request('POST', `${url}/imports/${first.body.id}/undo`, { key: tr.adminKey, body: { confirm: 'yes' } });
    t.equal(badBody.status, 422);
    const r = await s.request('POST', `${url}/imports/${first.body.id}/undo`, { key: tr.adminKey, body: { confirm: true } });
    t.equal(r.status, 200, r.text);
    t.same([r.body.removed, r.body.restored, r.body.import.status], [36, 0, 'undone']);
    t.same(r.body.overridden.later_imports, [second.body.id]);
    t.equal((await s.request('GET', `${url}?limit=1`, { key: tr.adminKey })).body.total, 0);
    const twice = await s.request('POST', `${url}/imports/${first.body.id}/undo`, { key: tr.adminKey, body: { confirm: true } });
    t.equal(twice.status, 409);
    const unknown = await s.request('POST', `${url}/imports/${tree.cycleId}/undo`, { key: tr.adminKey });
    t.equal(unknown.status, 404);
    const list = await s.request('GET', `${url}/imports`, { key: tr.adminKey });
    t.same(
      list.body.items.map((i: any) => i.status),
      ['done', 'undone'],
    );
    t.equal((await s.request('GET', `${url}/imports?limit=501`, { key: tr.adminKey })).status, 422);
  });

  t.test(
    'a cascading delete removes readings, imports, their undo records and the saved mapping, and leaves the other cycles alone',
    async (t) => {
      const tr = await createTree(s);
      const bystander = await createTree(s);
      for (const x of [tr, bystander])
        await s.request('POST', `${x.cyclePath}/climate/file`, {
          key: x.adminKey,
          raw: form(climateCsv(24), 'a.csv', { remember: 'true' }),
        });
      const contents = await s.request('GET', `${tr.greenhousePath}/contents`, { key: tr.adminKey });
      t.match(contents.body.counts, { climate_readings: 6, climate_imports: 1, climate_file_mappings: 1 });
      const undoRows = () => dbCount(s, 'SELECT count(*) AS n FROM climate_import_undo');
      const undoBefore = await undoRows();
      const undoOfCycle = await dbCount(
        s,
        'SELECT count(*) AS n FROM climate_import_undo u JOIN climate_imports i ON i.seq = u.import_seq WHERE i.cycle_id = ?',
        tr.cycleId,
      );
      t.equal(undoOfCycle, 3, 'one undo record per metric');
      const logBefore = await dbCount(s, 'SELECT count(*) AS n FROM change_log');
      const d = await s.request('DELETE', `${tr.greenhousePath}?cascade=true`, { key: tr.adminKey });
      t.equal(d.status, 200, d.text);
      const n = (table: string, col: string, id: string) => dbCount(s, `SELECT count(*) AS n FROM ${table} WHERE ${col} = ?`, id);
      t.same(
        [
          await n('climate_readings', 'cycle_id', tr.cycleId),
          await n('climate_imports', 'cycle_id', tr.cycleId),
          await n('climate_cycle_keys', 'cycle_id', tr.cycleId),
          await n('climate_file_mappings', 'greenhouse_id', tr.greenhouseId),
        ],
        [0, 0, 0, 0],
      );
      t.equal(await undoRows(), undoBefore - undoOfCycle, "the cycle's undo records went, the other cycles' stay");
      t.equal(await n('climate_readings', 'cycle_id', bystander.cycleId), 6, 'the other cycle keeps its readings');
      const tomb = await dbRows<{ before: string }>(
        s,
        "SELECT before FROM change_log WHERE entity = 'climate_readings' AND op = 'delete' AND entity_id = ?",
        tr.cycleId,
      );
      t.same(
        tomb.map((x) => JSON.parse(x.before)),
        [{ cycle_id: tr.cycleId, readings: 6 }],
        "one change-log entry for the cycle's readings",
      );
      t.ok((await dbCount(s, 'SELECT count(*) AS n FROM change_log')) > logBefore);
    },
  );
});

t.test('uploads above the cap answer 413 while streaming; nothing stored', async (t) => {
  const s = await startServer(t, { climateUploadLimit: 4096 });
  const tree = await createTree(s);
  const big = climateCsv(400);
  t.ok(big.length > 4096);
  for (const path of ['csv', 'csv/preview', 'file', 'file/preview']) {
    const r = await s.request('POST', `${tree.cyclePath}/climate/${path}`, { key: tree.adminKey, raw: form(big, 'big.csv') });
    t.equal(r.status, 413, path);
    t.equal(r.body.code, 'payload_too_large');
  }
  const raw = await s.request('POST', `${tree.cyclePath}/climate/ingest`, {
    raw: big,
    headers: { 'content-type': 'text/csv', 'x-api-key': tree.adminKey },
  });
  t.equal(raw.status, 413);
  const small = await s.request('POST', `${tree.cyclePath}/climate/csv`, { key: tree.adminKey, raw: form(climateCsv(10), 'small.csv') });
  t.equal(small.status, 200, 'under the cap is fine');
  t.same((await climateState(s, tree)).readings.length, 30);
  t.equal((await climateState(s, tree)).imports.length, 1);
});
