// Workbooks with several sheets: every sheet's head is read and the one whose time column and
// columns read best is chosen, named in layout.sheet with the others and why they were not;
// `sheet` picks one by name. Daily values (a daily light integral, energy used per day) read as
// daily metrics of their own, one reading per day, never folded into an hour as if hourly.
import t from 'tap';
import * as XLSX from '@e965/xlsx';
import { aggregateHourly, analyseExport, type Analysis } from '../../../src/climate/exports-reader/index.js';
import { fixture } from '../../fixtures/climate/paths.js';

const AMS = 'Europe/Amsterdam';
const byHeader = (a: Analysis, start: string) => a.columns.find((c) => c.header.startsWith(start));
const workbook = (sheets: [string, unknown[][]][]): Uint8Array => {
  const wb = XLSX.utils.book_new();
  for (const [name, rows] of sheets) XLSX.utils.book_append_sheet(wb, XLSX.utils.aoa_to_sheet(rows), name);
  return XLSX.write(wb, { type: 'buffer', bookType: 'xlsx' }) as Uint8Array;
};
const hourlyRows = (hours: number, header = ['Tijdstip', 'Kastemperatuur (°C)', 'RV (%)']): unknown[][] => [
  header,
  ...Array.from({ length: hours }, (_, i) => [`2026-03-02 ${String(i % 24).padStart(2, '0')}:00`, 18 + (i % 5), 70 + (i % 7)]),
];

t.test('a season workbook: growth records first, the daily readings on a later sheet', async (t) => {
  const a = await analyseExport(fixture('season-workbook.xlsx'), { timeZone: AMS, firstHours: 72 });
  t.same(a.blocking, []);
  t.equal(a.layout.sheet, 'Energie & licht', 'the sheet whose time column and columns read best');
  t.same(
    a.layout.other_sheets.map((s) => s.name),
    ['Groei', 'Productie'],
    'the others, in workbook order',
  );
  for (const s of a.layout.other_sheets) t.match(s.reason, /no column reads as a climate metric|fewer|no time/, `${s.name}: ${s.reason}`);
  t.match(byHeader(a, 'DLI'), { metric: 'daily_light_integral', unit: 'mol/m²/d', selected: true });
  t.match(byHeader(a, 'Lichtsom'), { metric: 'daily_radiation_sum', unit: 'J/cm²', selected: true });
  t.match(byHeader(a, 'Warmte'), { metric: 'daily_heat_energy', unit: 'MJ/m²', selected: true });
  t.match(byHeader(a, 'Elektriciteit'), { metric: 'daily_electricity', unit: 'kWh/m²', selected: true });
  t.same(a.first_rows[0], {
    at: '2026-01-05T00:00:00+01:00',
    values: { daily_light_integral: 8, daily_radiation_sum: 250, daily_heat_energy: 3.2, daily_electricity: 1.1 },
  });
  t.same(a.time_range, { from: '2026-01-05T00:00:00+01:00', to: '2026-03-05T00:00:00+01:00' });
  t.ok(
    a.warnings.some((w) => w.code === 'date_only'),
    'daily rows are said to be dates without times',
  );
  // The import's hours: one value per day and metric, at the day's start, as in the file.
  const hours = a.first_hours!;
  t.same([...new Set(hours.map((h) => h.hour))], ['2026-01-05T00:00:00+01:00', '2026-01-06T00:00:00+01:00', '2026-01-07T00:00:00+01:00']);
  t.same(
    hours.filter((h) => h.hour === '2026-01-06T00:00:00+01:00').map((h) => [h.metric, h.value, h.count]),
    [
      ['daily_electricity', 1.09, 1],
      ['daily_heat_energy', 3.17, 1],
      ['daily_light_integral', 9.5, 1],
      ['daily_radiation_sum', 262, 1],
    ],
  );
});

t.test('`sheet` picks a sheet by name; an unknown name is refused naming the sheets', async (t) => {
  const growth = await analyseExport(fixture('season-workbook.xlsx'), { timeZone: AMS, sheet: 'Groei' });
  t.equal(growth.layout.sheet, 'Groei');
  t.same(
    growth.blocking.map((b) => b.code),
    ['no_mapped_columns'],
    'read as asked, and it holds no climate readings',
  );
  const none = await analyseExport(fixture('season-workbook.xlsx'), { timeZone: AMS, sheet: 'Klimaat' });
  t.same(
    none.blocking.map((b) => b.code),
    ['unknown_sheet'],
  );
  t.match(none.blocking[0]!.message, /no sheet "Klimaat".*Groei, Productie, Energie & licht/);
  const csv = await analyseExport(fixture('priva-nl.csv'), { timeZone: AMS, sheet: 'Data' });
  t.match(csv.blocking, [{ code: 'unknown_sheet', message: /not a workbook/ }], 'a text file has no sheets');
});

t.test('a confirmed mapping finds its sheet again', async (t) => {
  const a = await analyseExport(fixture('season-workbook.xlsx'), { timeZone: AMS });
  const again = await analyseExport(fixture('season-workbook.xlsx'), { timeZone: AMS, mapping: a.mapping! });
  t.same(again.blocking, []);
  t.equal(again.layout.sheet, 'Energie & licht');
  t.same(again.first_rows[0], a.first_rows[0]);
});

t.test('hostile workbooks: the readable sheet among many, odd names, a sheet too wide, none readable', async (t) => {
  const filler = Array.from({ length: 40 }, (_, i): [string, unknown[][]] => [
    `Blad ${i} "x" é${'é'.repeat(i % 5)}'s`,
    Array.from({ length: 300 }, (_, r) => [`note ${r}`, r]),
  ]);
  const wide: unknown[][] = [
    ['Tijdstip', ...Array.from({ length: 3000 }, (_, i) => `c${i}`)],
    ['2026-03-02 00:00', ...Array(3000).fill(1)],
  ];
  const bytes = workbook([...filler, ['Te breed', wide], ['Klimaat kas 4', hourlyRows(48)]]);
  const a = await analyseExport({ bytes, fileName: 'book.xlsx' }, { timeZone: AMS });
  t.same(a.blocking, []);
  t.equal(a.layout.sheet, 'Klimaat kas 4', 'found behind 41 sheets');
  t.equal(a.layout.other_sheets.length, 41);
  t.match(
    a.layout.other_sheets.find((s) => s.name === 'Te breed'),
    { reason: /3001 columns; at most/ },
  );
  t.equal(a.stats.data_rows, 48);

  const unreadable = workbook([
    [
      'Notities',
      [
        ['Geen tijd hier', 'x'],
        ['nog steeds niet', 'y'],
      ],
    ],
    [
      'Lijst',
      [
        ['a', 'b'],
        [1, 2],
      ],
    ],
  ]);
  const b = await analyseExport({ bytes: unreadable, fileName: 'book.xlsx' }, { timeZone: AMS });
  t.same(
    b.blocking.map((x) => x.code),
    ['no_time_column'],
    'no sheet has a time column',
  );
  t.equal(b.layout.other_sheets.length, 1, 'and the other sheet is listed too');
});

t.test('a running daily light integral in hourly rows: the last of each hour, not a sum or a mean', async (t) => {
  const hours = await aggregateHourly(
    [
      { at: '2026-03-02T10:00:00+01:00', metric: 'daily_light_integral', value: 4 },
      { at: '2026-03-02T10:30:00+01:00', metric: 'daily_light_integral', value: 5 },
      { at: '2026-03-02T10:55:00+01:00', metric: 'daily_light_integral', value: 5.5 },
      { at: '2026-03-02T10:00:00+01:00', metric: 'radiation_sum', value: 10 },
      { at: '2026-03-02T10:30:00+01:00', metric: 'radiation_sum', value: 12 },
    ],
    { timeZone: AMS },
  );
  t.same(
    hours.map((h) => [h.metric, h.value]),
    [
      ['daily_light_integral', 5.5],
      ['radiation_sum', 22],
    ],
  );
});
