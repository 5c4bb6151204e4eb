import t from 'tap';
import { createWriteStream, mkdtempSync, rmSync, openAsBlob, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { startServer, createTree } from '../../helpers/server.js';
import { deflatedSpaces, zipOneEntry } from '../../helpers/zip-bomb.js';
import { climateCsv, climateState, form } from './helpers.js';

/**
 * Hostile files through every upload route: each gets a clear 4xx
 * problem+json, and the climate tables are exactly as before.
 */
t.test('hostile climate files', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-hostile-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const s = await startServer(t, { climateUploadLimit: 200 * 1024 * 1024 });
  const tree = await createTree(s);
  const key = tree.adminKey;
  const C = `${tree.cyclePath}/climate`;
  // A saved mapping, so that ingest reaches the file too.
  t.equal((await s.request('POST', `${C}/file`, { key, raw: form(climateCsv(12), 'ok.csv', { remember: 'true' }) })).status, 200);
  const baseline = await climateState(s, tree);

  const throughEveryRoute = async (
    t: any,
    label: string,
    make: () => Promise<Blob> | Blob,
    expect: { status: number; codes?: string[] },
  ) => {
    for (const route of ['csv/preview', 'csv', 'file/preview', 'file', 'ingest']) {
      const blob = await make();
      const r =
        route === 'ingest'
          ? await s.request('POST', `${C}/ingest`, {
              raw: blob,
              headers: { 'content-type': 'application/octet-stream', 'x-api-key': key, 'x-file-name': label },
            })
          : await s.request('POST', `${C}/${route}`, { key, raw: form(blob, label) });
      if (route.endsWith('preview')) {
        // A preview answers 200 and lists the blocking problems.
        t.equal(r.status, 200, `${route}: ${r.text.slice(0, 300)}`);
        if (expect.codes)
          t.ok(
            r.body.blocking.some((b: any) => expect.codes!.includes(b.code)),
            `${route}: blocking ${JSON.stringify(r.body.blocking)}`,
          );
        t.equal(r.body.mapping, null, `${route}: no mapping to confirm`);
      } else {
        const status = route === 'ingest' && expect.status === 400 ? [400, 422] : [expect.status];
        t.ok(status.includes(r.status), `${route}: ${r.status} ${r.text.slice(0, 300)}`);
        t.match(r.headers.get('content-type'), /application\/problem\+json/, `${route}: problem+json`);
        if (r.status === 400 && expect.codes)
          t.ok(
            r.body.blocking.some((b: any) => expect.codes!.includes(b.code)),
            `${route}: ${JSON.stringify(r.body.blocking)}`,
          );
      }
      t.same(await climateState(s, tree), baseline, `${route}: nothing stored`);
    }
  };

  t.test('binary garbage', (t) =>
    throughEveryRoute(t, 'garbage.csv', () => new Blob([randomBytes(256 * 1024)]), {
      status: 400,
      codes: ['not_a_table', 'unsupported_encoding'],
    }),
  );

  t.test('a zip bomb posing as .xlsx', async (t) => {
    const bomb = zipOneEntry('xl/worksheets/sheet1.xml', await deflatedSpaces(300 * 1024 * 1024), 300 * 1024 * 1024);
    t.ok(bomb.length < 1024 * 1024, `${bomb.length} bytes that declare 300 MiB`);
    const liar = zipOneEntry('xl/worksheets/sheet1.xml', await deflatedSpaces(64 * 1024 * 1024), 4096);
    const rssBefore = process.memoryUsage().rss;
    await throughEveryRoute(t, 'climate.xlsx', () => new Blob([bomb]), { status: 400, codes: ['xlsx_too_large'] });
    await throughEveryRoute(t, 'climate.xlsx', () => new Blob([liar]), { status: 400, codes: ['xlsx_too_large', 'not_a_table'] });
    const grown = process.memoryUsage().rss - rssBefore;
    t.ok(grown < 400 * 1024 * 1024, `nothing near the declared size was inflated (RSS grew ${(grown / 2 ** 20).toFixed(0)} MiB)`);
  });

  t.test('a 32 MiB single line: a clear 400 under the cap', async (t) => {
    const file = path.join(dir, 'line.csv');
    const ws = createWriteStream(file);
    const block = Buffer.alloc(1 << 20, 'A');
    for (let i = 0; i < 32; i++) if (!ws.write(block)) await new Promise<void>((r) => ws.once('drain', () => r()));
    await new Promise<void>((r) => ws.end(() => r()));
    await throughEveryRoute(t, 'line.csv', () => openAsBlob(file), { status: 400, codes: ['line_too_long'] });
  });

  t.test('a million columns', async (t) => {
    const file = path.join(dir, 'wide.csv');
    writeFileSync(
      file,
      'time,' + Array.from({ length: 1_000_000 }, (_, i) => `c${i}`).join(',') + '\n2026-01-01 00:00,' + '1,'.repeat(999_999) + '1\n',
    );
    await throughEveryRoute(t, 'wide.csv', () => openAsBlob(file), { status: 400, codes: ['too_many_columns'] });
  });

  t.test('a file name that tries to leave its folder is only a label', async (t) => {
    const r = await s.request('POST', `${C}/csv/preview`, { key, raw: form(climateCsv(3), '../../../../etc/cron.d/x.csv') });
    t.equal(r.status, 200);
    t.equal(r.body.file_name, 'x.csv');
  });
});

t.test('a 32 MiB single line above the cap: 413 while streaming', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-hostile-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const s = await startServer(t, { climateUploadLimit: 10 * 1024 * 1024 });
  const tree = await createTree(s);
  const file = path.join(dir, 'line.csv');
  const ws = createWriteStream(file);
  const block = Buffer.alloc(1 << 20, 'A');
  for (let i = 0; i < 32; i++) if (!ws.write(block)) await new Promise<void>((r) => ws.once('drain', () => r()));
  await new Promise<void>((r) => ws.end(() => r()));
  const before = await climateState(s, tree);
  for (const route of ['csv', 'file']) {
    const r = await s.request('POST', `${tree.cyclePath}/climate/${route}`, {
      key: tree.adminKey,
      raw: form(await openAsBlob(file), 'line.csv'),
    });
    t.equal(r.status, 413, route);
    t.equal(r.body.limit_bytes, 10 * 1024 * 1024);
  }
  t.same(await climateState(s, tree), before);
});
