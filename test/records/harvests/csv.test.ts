import t from 'tap';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { startServer, createTree, type TestServer } from '../../helpers/server.js';
import { parseHarvestCsv, MAX_HARVEST_LINES } from '../../../src/records/harvests/csv.js';

const upload = (s: TestServer, url: string, key: string, content: string | Uint8Array, name = 'harvest.csv') => {
  const form = new FormData();
  form.append('file', new Blob([content], { type: 'text/csv' }), name);
  return s.request('POST', url, { key, raw: form });
};

t.test('parseHarvestCsv: the forms spreadsheets write', async (t) => {
  const simple = parseHarvestCsv('week,kg\n2026-W07,12.5\n2026-02-16,3\n');
  t.same(
    simple.map((l) => [l.line, l.week.label, l.kg, l.note]),
    [
      [2, '2026-W07', 12.5, null],
      [3, '2026-W08', 3, null],
    ],
  );

  const bomCrlf = parseHarvestCsv('\uFEFFWeek,KG,Note\r\n2026-W07,1,a\r\n2026-W08,2,\r\n\r\n\r\n');
  t.same(
    bomCrlf.map((l) => [l.week.label, l.kg, l.note]),
    [
      ['2026-W07', 1, 'a'],
      ['2026-W08', 2, null],
    ],
    'BOM, CRLF, case-insensitive header, blank trailing lines',
  );

  const quoted = parseHarvestCsv(
    'note,kg,week\n"Picked late, row 3 ""north""",4,2026-W07\n"two\nlines",5,2026-W07\n2026-W09,x,2026-W07\n'.replace(
      '2026-W09,x,2026-W07\n',
      '',
    ),
  );
  t.same(
    quoted.map((l) => [l.line, l.note, l.kg]),
    [
      [2, 'Picked late, row 3 "north"', 4],
      [3, 'two\nlines', 5],
    ],
    'quotes, commas, doubled quotes, any column order',
  );

  const semicolon = parseHarvestCsv('week;kg;note\n2026-W07;12,5;"a; b"\n2026-W08;7;x\n');
  t.same(
    semicolon.map((l) => [l.kg, l.note]),
    [
      [12.5, 'a; b'],
      [7, 'x'],
    ],
    '; with decimal commas',
  );

  const tabs = parseHarvestCsv('week\tkg\n2026-W07\t1.25\n');
  t.equal(tabs[0]!.kg, 1.25, 'tab separated');

  const bytes = parseHarvestCsv(new TextEncoder().encode('\uFEFFweek,kg\r\n2026-W07,2\r\n'));
  t.equal(bytes[0]!.kg, 2, 'bytes with a BOM');
});

t.test('parseHarvestCsv: refusals name each bad line', async (t) => {
  const err = (f: () => unknown) => {
    try {
      f();
    } catch (e: any) {
      return e;
    }
    t.fail('expected a refusal');
    return {};
  };
  const e = err(() =>
    parseHarvestCsv(
      'week,kg,note\n2026-W07,1,ok\n2026-W07,-3,neg\n2026-W99,2,bad week\n2026-W07,1\n2026-W07,"1,5",comma decimal with comma delimiter\n',
    ),
  );
  t.equal(e.code, 'validation_failed');
  t.equal(e.extra.bad_lines, 4);
  t.same(
    e.issues.map((x: any) => x.name),
    ['line 3', 'line 4', 'line 5', 'line 6'],
  );
  t.match(e.issues[0], { in: 'body', name: 'line 3', message: /^kg: must be a number ≥ 0/ });
  t.match(e.issues[1].message, /^week: must be/);
  t.match(e.issues[2].message, /has 2 fields where the header has 3/);

  const lines = err(() => parseHarvestCsv('week,kg,note\n"a\nb",1,x\n2026-W07,oops,y\n'));
  t.same(
    lines.issues.map((x: any) => x.name),
    ['line 2', 'line 4'],
    'physical line numbers past a multi-line quoted field',
  );

  const cr = err(() => parseHarvestCsv('week,kg\r2026-W07,1\r2026-W07,bad\r'));
  t.same(
    cr.issues.map((x: any) => x.name),
    ['line 3'],
    'lone CR line ends',
  );
  const crlf = err(() => parseHarvestCsv('week,kg\r\n2026-W07,1\r\n\r\n2026-W07,bad\r\n'));
  t.same(
    crlf.issues.map((x: any) => x.name),
    ['line 4'],
    'CRLF counted once, blank lines counted',
  );

  const long = err(() => parseHarvestCsv(`week,kg,note\n2026-W07,1,${'n'.repeat(501)}\n`));
  t.match(long.issues[0].message, /note: at most 500 characters/);

  t.match(
    err(() => parseHarvestCsv('week,kg,price\n2026-W07,1,3\n')),
    { code: 'validation_failed', issues: [{ name: 'column 3', message: /"price" is not a harvest column/ }] },
  );
  t.match(
    err(() => parseHarvestCsv('week,note\n2026-W07,x\n')),
    { code: 'validation_failed', issues: [{ name: 'column kg' }] },
  );
  t.match(
    err(() => parseHarvestCsv('week,kg,KG\n2026-W07,1,2\n')),
    { code: 'validation_failed', issues: [{ name: 'column 3', message: /twice/ }] },
  );
  t.match(
    err(() => parseHarvestCsv('week,kg\r\n\r\n')),
    { code: 'validation_failed', message: /no harvest lines/ },
  );
  t.match(
    err(() => parseHarvestCsv('')),
    { code: 'validation_failed', issues: [{ name: 'file', message: /empty/ }] },
  );
  t.match(
    err(() => parseHarvestCsv(new Uint8Array([0xff, 0xfe, 0x00, 0x41]))),
    { code: 'validation_failed', issues: [{ name: 'file' }] },
  );
  t.match(
    err(() => parseHarvestCsv(new Uint8Array([0x77, 0x65, 0x65, 0x6b, 0xc3, 0x28]))),
    { code: 'validation_failed', issues: [{ name: 'file', message: /UTF-8/ }] },
    'invalid UTF-8',
  );

  const many = 'week,kg\n' + '2026-W07,x\n'.repeat(1500);
  const capped = err(() => parseHarvestCsv(many));
  t.equal(capped.issues.length, 1000, 'listed errors are capped');
  t.equal(capped.extra.bad_lines, 1500, 'the total is given');

  const tooMany = 'week,kg\n' + '2026-W07,1\n'.repeat(MAX_HARVEST_LINES + 1);
  t.match(
    err(() => parseHarvestCsv(tooMany)),
    { code: 'validation_failed', issues: [{ name: 'file', message: /more than 100000/ }] },
  );
});

t.test('CSV upload over HTTP', async (t) => {
  const s = await startServer(t, { harvestUploadLimit: 5 * 1024 * 1024 });
  const tree = await createTree(s);
  const key = tree.adminKey;
  const url = `${tree.cyclePath}/harvests/csv`;
  const stored = async () => (await s.request('GET', `${tree.cyclePath}/harvests`, { key })).body.items as any[];

  const ok = await upload(s, url, key, '\uFEFFweek;kg;note\r\n2026-W07;12,5;"row 3; north, ""late"""\r\n2026-02-16;8;\r\n\r\n');
  t.equal(ok.status, 201, ok.text);
  t.equal(ok.body.count, 2);
  t.same(
    ok.body.items.map((h: any) => [h.week, h.kg, h.note]),
    [
      ['2026-W07', 12.5, 'row 3; north, "late"'],
      ['2026-W08', 8, null],
    ],
  );
  t.equal((await stored()).length, 2);

  t.test('all or nothing: bad line 3 of 5', async (t) => {
    const before = await stored();
    const r = await upload(s, url, key, 'week,kg\n2026-W10,1\n2026-W10,abc\n2026-W10,3\n2026-W10,4\n2026-W10,5\n');
    t.equal(r.status, 422);
    t.match(r.headers.get('content-type'), /problem\+json/);
    t.same(r.body.errors, [{ in: 'body', name: 'line 3', message: 'kg: must be a number ≥ 0 (12.5)' }]);
    t.same(await stored(), before, 'nothing stored');
  });

  t.test('hostile files', async (t) => {
    const before = await stored();
    const garbage = await upload(s, url, key, randomBytes(64 * 1024));
    t.equal(garbage.status, 422, 'binary garbage');
    t.equal(garbage.body.code, 'validation_failed');

    const headerOnly = await upload(s, url, key, 'week,kg,note\n');
    t.equal(headerOnly.status, 422);
    t.match(headerOnly.body.detail, /no harvest lines/);

    const unknownColumn = await upload(s, url, key, 'week,kg,grade\n2026-W07,1,A\n');
    t.equal(unknownColumn.status, 422);

    const big = await upload(s, url, key, 'week,kg\n' + '2026-W07,1.000000\n'.repeat(Math.ceil((6 * 1024 * 1024) / 18)));
    t.equal(big.status, 413, '6 MiB is over the 5 MiB cap');
    t.equal(big.body.code, 'payload_too_large');

    const two = new FormData();
    two.append('file', new Blob(['week,kg\n2026-W07,1\n']), 'a.csv');
    two.append('file', new Blob(['week,kg\n2026-W07,1\n']), 'b.csv');
    t.equal((await s.request('POST', url, { key, raw: two })).status, 422, 'two files in the field');
    const otherField = new FormData();
    otherField.append('data', new Blob(['week,kg\n2026-W07,1\n']), 'a.csv');
    t.equal((await s.request('POST', url, { key, raw: otherField })).status, 422, 'a file under another field name');
    const traversal = new FormData();
    traversal.append('file', new Blob(['week,kg\n2026-W07,1\n']), '../../../../etc/cron.d/x.csv');
    const stored1 = await s.request('POST', url, { key, raw: traversal });
    t.equal(stored1.status, 201, 'the client file name is never used as a path');
    await s.request('DELETE', `${tree.cyclePath}/harvests/${stored1.body.items[0].harvest_id}`, { key });
    const noFile = await s.request('POST', url, { key, raw: new FormData() });
    t.equal(noFile.status, 422, 'no file part');
    const json = await s.request('POST', url, { key, body: { week: '2026-W07', kg: 1 } });
    t.equal(json.status, 415, 'not multipart');

    t.same(await stored(), before, 'nothing stored by any of them');
    t.same(readdirSync(path.join(s.dataDir, 'uploads', 'incoming')), [], 'no upload left on disk, 413 included');
  });

  t.test('the cap is configurable', async (t) => {
    const small = await startServer(t, { harvestUploadLimit: 1024 });
    const tr = await createTree(small);
    const r = await upload(small, `${tr.cyclePath}/harvests/csv`, tr.adminKey, 'week,kg\n' + '2026-W07,1\n'.repeat(200));
    t.equal(r.status, 413);
    t.equal(r.body.limit_bytes, 1024);
  });

  t.test('100,000 lines in one transaction', async (t) => {
    const before = (await stored()).length;
    const started = Date.now();
    const r = await upload(
      s,
      url,
      key,
      'week,kg,note\n' +
        Array.from({ length: 100_000 }, (_, i) => `2026-W${String((i % 52) + 1).padStart(2, '0')},${(i % 97) / 4},n${i}`).join('\n'),
    );
    t.equal(r.status, 201, r.status === 201 ? '' : r.text.slice(0, 500));
    t.equal(r.body.count, 100_000);
    t.comment(`100,000 lines stored in ${Date.now() - started} ms`);
    const n = await s.app.services.db
      .selectFrom('harvests')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('cycle_id', '=', tree.cycleId)
      .executeTakeFirstOrThrow();
    t.equal(Number(n.n), before + 100_000);
    const logged = await s.app.services.db
      .selectFrom('change_log')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('entity', '=', 'harvests')
      .where('op', '=', 'insert')
      .executeTakeFirstOrThrow();
    t.ok(Number(logged.n) >= 100_000, 'each line in the change log');
  });
});
