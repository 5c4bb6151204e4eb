import t from 'tap';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { readHourly } from '../../../src/climate/exports-reader/index.js';
import { readHourlyOnThread, stopReaderThread } from '../../../src/climate/imports/reader-thread.js';
import { startServer, createTree, dbRows } from '../../helpers/server.js';
import { climateCsv, form } from './helpers.js';

/**
 * The reader thread hands finished hours over while it reads; what it hands over must be
 * exactly what reading the whole file first makes, and a file out of time order must fall
 * back to that, never store a part of an hour.
 */
const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-reader-thread-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const ZONE = 'Europe/Amsterdam';

// 300 hours of five-minute rows: more than one batch of hours (200) is handed over while reading.
const ordered = climateCsv(3600, { start: '2026-03-02T00:00' });
const lines = ordered.trimEnd().split('\n');
const newestFirst = [lines[0], ...lines.slice(1).reverse()].join('\n') + '\n';
// The same rows with one early row moved to the end: its hour was handed over long before.
const late = [lines[0], ...lines.slice(1, 30), ...lines.slice(31), lines[30]].join('\n') + '\n';
const file = (name: string, text: string) => {
  const p = path.join(dir, name);
  writeFileSync(p, text);
  return p;
};

async function collect(p: string) {
  const r = readHourlyOnThread({ path: p }, { timeZone: ZONE });
  const out: string[] = [];
  let batches = 0;
  for await (const b of r.batches) {
    batches++;
    for (let i = 0; i < b.length; i++) out.push(`${b.ms[i]} ${b.metric[i]} ${b.value[i]}`);
  }
  return { out, batches, outcome: r };
}

async function whole(p: string) {
  const hours = await readHourly({ path: p }, { timeZone: ZONE }).read();
  const out: string[] = [];
  for (const b of hours.columns(5000)) for (let i = 0; i < b.length; i++) out.push(`${b.ms[i]} ${b.metric[i]} ${b.value[i]}`);
  return out;
}

t.test('hours handed over while reading are the hours of the whole file, in its order', async (t) => {
  for (const [name, text] of [
    ['ordered.csv', ordered],
    ['newest-first.csv', newestFirst],
  ] as const) {
    const p = file(name, text);
    const got = await collect(p);
    t.ok(got.batches > 1, `${name}: handed over in ${got.batches} batches`);
    const expected = await whole(p);
    t.equal(got.out.length, 900, `${name}: 300 hours × 3 metrics`);
    t.same([...got.out].sort(), [...expected].sort(), `${name}: the same values`);
    t.equal(got.outcome.stats?.data_rows, 3600);
    t.ok(got.outcome.mapping, 'the mapping is known once it ended');
  }
});

t.test('a row for an hour already handed over: NotInTimeOrder, and the import reads the file whole', async (t) => {
  const p = file('late.csv', late);
  await t.rejects(collect(p), { name: 'NotInTimeOrder' });
  const s = await startServer(t);
  const tree = await createTree(s);
  const r = await s.request('POST', `${tree.cyclePath}/climate/file`, { key: tree.adminKey, raw: form(late, 'late.csv') });
  t.equal(r.status, 200, r.text);
  t.match(r.body, { kind: 'file', status: 'done', readings_added: 900, rows_read: 3600 });
  const stored = (
    await dbRows<{ metric: string; at_utc: string; value: number }>(
      s,
      'SELECT metric, at_utc, value FROM climate_readings WHERE cycle_id = ? ORDER BY at_utc, metric',
      tree.cycleId,
    )
  ).map((x) => `${Date.parse(x.at_utc)} ${x.metric} ${x.value}`);
  t.same(stored.sort(), (await whole(p)).sort(), 'every hour whole, the late row in its own hour');
});

t.test('a thread that stops mid-read fails that read; the next read starts a new thread', async (t) => {
  // A year of five-minute rows (44 batches of hours): the thread is surely still reading when it is
  // stopped after the first batch. With 300 hours it could finish first, and the read then rightly succeeded.
  // Batches it sent before it stopped may already be queued here; the stop must fail the read
  // at once all the same (with two cores kept busy, 3 runs in 12 got a queued batch instead).
  const long = file('long.csv', climateCsv(105_120, { start: '2026-01-01T00:00' }));
  const r = readHourlyOnThread({ path: long }, { timeZone: ZONE });
  const it = r.batches[Symbol.asyncIterator]();
  await it.next();
  await stopReaderThread();
  await t.rejects(it.next(), /climate reader thread stopped/);
  const again = await collect(file('ordered2.csv', ordered));
  t.equal(again.out.length, 900);
});
