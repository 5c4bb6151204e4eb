// Unquoted lines are read in place (scan.ts pushText), quoted ones cell by cell after
// papaparse: the same export written both ways must read the same, odd cells included.
import t from 'tap';
import { analyseExport, readHourly, readReadings, type Reading } from '../../../src/climate/exports-reader/index.js';

const AMS = 'Europe/Amsterdam';

/** Rows of 5-minute wall-clock times across the autumn change, values cycling through `odd`. */
function table(header: string[], odd: string[], rows: number, delimiter: string, quote: boolean): Buffer {
  const q = (c: string) => (quote ? `"${c}"` : c);
  const lines = [header.map(q).join(delimiter)];
  const start = Date.UTC(2020, 9, 24, 22, 0);
  for (let i = 0; i < rows; i++) {
    const wall = new Date(start + i * 300_000).toISOString().slice(0, 16).replace('T', ' ');
    const cells = [wall];
    for (let k = 1; k < header.length; k++) cells.push(odd[(i * 7 + k * 3) % odd.length]!);
    if (i % 501 === 3) cells.length = 2; // a short row
    lines.push(cells.map(q).join(delimiter));
    if (i % 997 === 5) lines.push('');
  }
  lines.push(q('Exported by test'));
  return Buffer.from(lines.join('\r\n') + '\r\n');
}

async function readAll(bytes: Buffer) {
  const a = await analyseExport({ bytes }, { timeZone: AMS, previewRows: 200 });
  const readings: Reading[] = [];
  const it = readReadings({ bytes }, { timeZone: AMS });
  for await (const b of it) readings.push(...b);
  const hourly = readHourly({ bytes }, { timeZone: AMS });
  const hours = (await hourly.read()).values({ timeZone: AMS });
  return {
    blocking: a.blocking,
    decimal: a.layout.decimal,
    time_range: a.time_range,
    first_rows: a.first_rows,
    stats: a.stats,
    warnings: a.warnings,
    readings,
    readerStats: it.stats,
    hours,
    hourlyWarnings: hourly.warnings,
  };
}

const ODD_COMMA = [
  '14,54',
  ' 14,5',
  '1.013,25',
  '-0',
  '-0,0',
  '+5',
  '1,',
  ',5',
  '1,5e3',
  '0x1F',
  'NaN',
  '',
  ' ',
  'Infinity',
  '-9999',
  '5,47e+34',
  '12345678901234567',
  '1234567890,12345',
  '0,000001',
  '007',
  '--1',
  '1,2,3',
  'abc',
  '-',
  '99999999999',
  '20',
  '980,123456789012',
];
const ODD_DOT = [
  '68.5',
  ' 70',
  '1e2',
  '-0',
  '.5',
  '5.',
  '0x10',
  '0b1',
  'NaN',
  '',
  '12345678901234567890',
  '3.14159265358979',
  '72',
  '-40.0',
  '1e-7',
  '0.1',
  '123456789012345.5',
];

t.test('decimal commas: unquoted text reads as the same cells quoted', async (t) => {
  const header = ['Tijd', 'Temperatuur (°C)', 'RV (%)', 'Luchtdruk (hPa)', 'Windrichting (°)', 'Neerslag (mm)', 'CO2 (ppm)'];
  const plain = await readAll(table(header, ODD_COMMA, 6000, ';', false));
  const quoted = await readAll(table(header, ODD_COMMA, 6000, ';', true));
  t.same(plain.blocking, []);
  t.equal(plain.decimal, ',');
  t.ok(plain.readings.length > 10_000, 'readings');
  t.ok(
    plain.stats.skipped.not_a_number > 0 && plain.stats.skipped.out_of_range > 0 && plain.stats.skipped.empty > 0,
    'every kind of skipped cell',
  );
  t.same(plain, quoted);
});

t.test('decimal points: unquoted text reads as the same cells quoted', async (t) => {
  const header = ['time', 'Air temperature (°F)', 'Relative humidity (%)', 'CO2 (ppm)', 'Wind direction (deg)'];
  const plain = await readAll(table(header, ODD_DOT, 6000, ',', false));
  const quoted = await readAll(table(header, ODD_DOT, 6000, ',', true));
  t.same(plain.blocking, []);
  t.equal(plain.decimal, '.');
  t.same(plain, quoted);
  const tabs = await readAll(table(header, ODD_DOT, 6000, '\t', false));
  t.same(tabs, plain, 'tab-delimited the same');
});
