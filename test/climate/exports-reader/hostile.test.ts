// Hostile uploads, generated in a temporary folder: each must end in one clear blocking
// problem, read no further than needed, and produce nothing else.
import t from 'tap';
import type { Test } from 'tap';
import { createWriteStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { deflateRawSync } from 'node:zlib';
import { deflatedSpaces, zipOneEntry } from '../../helpers/zip-bomb.js';
import { analyseExport, ExportRefused, readReadings, type Analysis } from '../../../src/climate/exports-reader/index.js';

async function drain(it: AsyncIterable<unknown>): Promise<void> {
  for await (const _ of it) void _;
}
type TestT = InstanceType<typeof Test>;
const opts = { timeZone: 'Europe/Amsterdam' };

function onlyBlocking(t: TestT, a: Analysis, code: string) {
  t.same(
    a.blocking.map((b) => b.code),
    [code],
    `blocked with ${code}`,
  );
  t.ok(a.blocking[0]!.message.length > 10, 'with a message');
  t.same(a.columns, []);
  t.same(a.first_rows, []);
  t.equal(a.mapping, null);
  t.equal(a.stats.values, 0);
}

t.test('binary garbage', async (t) => {
  let x = 12345;
  const bytes = Buffer.alloc(200_000);
  for (let i = 0; i < bytes.length; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    bytes[i] = x >>> 24;
  }
  onlyBlocking(t, await analyseExport({ bytes, fileName: 'climate.csv' }, opts), 'not_a_table');
});

t.test('an empty file and a file of one word', async (t) => {
  onlyBlocking(t, await analyseExport({ bytes: Buffer.alloc(0) }, opts), 'not_a_table');
  onlyBlocking(t, await analyseExport({ bytes: Buffer.from('hello\n') }, opts), 'not_a_table');
});

t.test('a table without times', async (t) => {
  const a = await analyseExport({ bytes: Buffer.from('a;b;c\n1;2;3\n4;5;6\n') }, opts);
  t.same(
    a.blocking.map((b) => b.code),
    ['no_time_column'],
  );
});

t.test('a table whose columns mean nothing', async (t) => {
  const a = await analyseExport({ bytes: Buffer.from('time,foo,bar\n2020-01-01 00:00,1,2\n2020-01-01 01:00,3,4\n') }, opts);
  t.same(
    a.blocking.map((b) => b.code),
    ['no_mapped_columns'],
  );
  t.same(
    a.columns.map((c) => c.confidence),
    [0, 0],
    'unknown columns are listed with confidence 0',
  );
});

t.test('an old binary .xls is refused with a hint', async (t) => {
  const bytes = Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(1000)]);
  onlyBlocking(t, await analyseExport({ bytes, fileName: 'x.xls' }, opts), 'unsupported_format');
});

t.test('zip bomb posing as .xlsx: declared size over the cap', async (t) => {
  const deflated = await deflatedSpaces(300 * 1024 * 1024);
  t.ok(deflated.length < 1024 * 1024, `300 MiB deflate to ${deflated.length} bytes`);
  const bytes = zipOneEntry('xl/worksheets/sheet1.xml', deflated, 300 * 1024 * 1024);
  const before = process.memoryUsage().rss;
  const a = await analyseExport({ bytes, fileName: 'climate.xlsx' }, opts);
  onlyBlocking(t, a, 'xlsx_too_large');
  t.match(a.blocking[0]!.message, /declares 300 MiB/);
  t.ok(process.memoryUsage().rss - before < 150 * 1024 * 1024, 'nothing near 300 MiB was inflated');
});

t.test('zip bomb that lies about its size is stopped while inflating', async (t) => {
  const deflated = await deflatedSpaces(64 * 1024 * 1024);
  const bytes = zipOneEntry('xl/worksheets/sheet1.xml', deflated, 4096);
  const a = await analyseExport({ bytes, fileName: 'climate.xlsx' }, opts);
  onlyBlocking(t, a, 'xlsx_too_large');
  t.match(a.blocking[0]!.message, /inflates past the size it declares/);
});

t.test('a zip that is no workbook', async (t) => {
  const content = Buffer.from('hello');
  const a = await analyseExport({ bytes: zipOneEntry('readme.txt', deflateRawSync(content), content.length) }, opts);
  t.equal(a.blocking.length, 1);
  t.equal(a.blocking[0]!.code, 'not_a_table');
});

t.test('a 32 MiB single line is refused early, streamed from disk', async (t) => {
  const dir = t.testdir({});
  const file = path.join(dir, 'line.csv');
  const ws = createWriteStream(file);
  const block = Buffer.alloc(1 << 20, 'A');
  for (let i = 0; i < 32; i++) if (!ws.write(block)) await new Promise<void>((r) => ws.once('drain', () => r()));
  await new Promise<void>((r) => ws.end(() => r()));
  const a = await analyseExport({ path: file }, opts);
  onlyBlocking(t, a, 'line_too_long');
  t.ok(a.layout.bytes_read <= 2 * 1024 * 1024, `read ${a.layout.bytes_read} bytes of 32 MiB before refusing`);
  const err = await drain(readReadings({ path: file }, opts)).catch((e: unknown) => e);
  t.ok(err instanceof ExportRefused);
  t.same(
    (err as ExportRefused).blocking.map((b) => b.code),
    ['line_too_long'],
  );
});

t.test('a long line after good rows is refused while importing', async (t) => {
  const dir = t.testdir({});
  const file = path.join(dir, 'late.csv');
  const good = ['time;Temperature (°C)'];
  for (let i = 0; i < 5000; i++)
    good.push(`2020-01-01 ${String(Math.floor(i / 60) % 24).padStart(2, '0')}:${String(i % 60).padStart(2, '0')};20`);
  await writeFile(file, good.join('\n') + '\n' + '9'.repeat(2 * 1024 * 1024) + '\n');
  const a = await analyseExport({ path: file }, opts);
  t.same(
    a.blocking.map((b) => b.code),
    ['line_too_long'],
  );
  t.equal(a.mapping, null, 'no mapping to confirm for a file that cannot be imported');
});

t.test('a million columns', async (t) => {
  const header = Array.from({ length: 1_000_000 }, (_, i) => `c${i}`).join(',');
  const a = await analyseExport({ bytes: Buffer.from(header + '\n') }, opts);
  onlyBlocking(t, a, 'too_many_columns');
  const semi = await analyseExport({ bytes: Buffer.from('time;' + ';'.repeat(3000) + '\n') }, opts);
  onlyBlocking(t, semi, 'too_many_columns');
});

t.test('an unbalanced quote does not swallow the file', async (t) => {
  const rows = ['time,Temperature (°C)', '2020-01-01 00:00,"20'];
  for (let i = 0; i < 300_000; i++) rows.push('2020-01-01 00:00,20');
  const a = await analyseExport({ bytes: Buffer.from(rows.join('\n')) }, opts);
  t.equal(a.blocking.length, 1);
  t.equal(a.blocking[0]!.code, 'unbalanced_quotes');
});

t.test('cells built to make regular expressions backtrack are read in linear time', { timeout: 30_000 }, async (t) => {
  // Before the guards, a date-like cell followed by 20,000 spaces took a second; 900 KB took hours.
  const spaces = ' '.repeat(900_000);
  const header = `time;Temperature (°C);${'Kas' + spaces + 'x'}`;
  const rows = [header, '2020-01-01 00:00;20;1', `2020-01-01 01:00${spaces}x;21;2`, '2020-01-01 02:00;22;3'];
  const a = await analyseExport({ bytes: Buffer.from(rows.join('\n')) }, opts);
  t.same(a.blocking, []);
  t.equal(a.stats.data_rows, 2);
  t.equal(a.stats.rows_without_time, 1, 'the padded time cell is no time');
});

t.test('UTF-32 is named as an unsupported encoding', async (t) => {
  const text = 'time,Temperature (°C)\n2020-01-01 00:00,20\n';
  const body = Buffer.alloc(text.length * 4);
  [...text].forEach((ch, i) => body.writeUInt32LE(ch.codePointAt(0)!, i * 4));
  onlyBlocking(t, await analyseExport({ bytes: Buffer.concat([Buffer.from([0xff, 0xfe, 0, 0]), body]) }, opts), 'unsupported_encoding');
});

t.test('limits can be lowered by the caller', async (t) => {
  const a = await analyseExport({ bytes: Buffer.from('time,a,b,c\n2020-01-01 00:00,1,2,3\n') }, { ...opts, limits: { maxColumns: 3 } });
  onlyBlocking(t, a, 'too_many_columns');
});
