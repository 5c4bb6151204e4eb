import t from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { startServer, createTree } from '../../helpers/server.js';
import { form } from './helpers.js';
import { sharedData } from '../../helpers/shared-data.js';

/**
 * Every real export in ../shared/data/climate previews and imports through
 * the routes; values and instants are checked against the file's own cells.
 */
const shared = sharedData('climate');
const DATA = shared.path;

/** Cells of a delimited line, quotes removed (these files quote whole cells only). */
const cells = (line: string, delimiter: string) => line.split(delimiter).map((c) => c.replace(/^"|"$/g, ''));

interface SpotCheck {
  zone: string;
  delimiter: string;
  /** Header cell (start of it) of the column to check, and the metric it must read as. */
  header: string;
  metric: string;
  /** Rows (first cells joined by the delimiter, as in the file) and the instant they must be stored at. */
  rows: { row: string; at: string }[];
  /** An hour start (greenhouse clock) whose hourly value is the mean of the file's rows in it. */
  hour?: { prefix: string; at: string };
}

const CHECKS: Record<string, SpotCheck> = {
  'aarslev-celle5-2014-03.csv': {
    zone: 'Europe/Copenhagen',
    delimiter: ';',
    header: 'Celle 5: Lufttemperatur',
    metric: 'air_temperature',
    rows: [
      { row: '2014-03-01;00:00:00', at: '2014-03-01T00:00:00+01:00' },
      // The spring-forward gap: 01:50 winter time is followed by 03:00 summer time.
      { row: '2014-03-30;01:50:00', at: '2014-03-30T01:50:00+01:00' },
      { row: '2014-03-30;03:00:00', at: '2014-03-30T03:00:00+02:00' },
    ],
    hour: { prefix: '2014-03-01;00:', at: '2014-03-01T00:00:00+01:00' },
  },
  '30mhz-one-week-every-hour.csv': {
    zone: 'Europe/Amsterdam',
    delimiter: ',',
    header: 'Sensor 0013A20041A0002A NIEUW - co2 (ppm)',
    metric: 'co2',
    rows: [
      { row: '2020-09-07 01:00:00', at: '2020-09-07T01:00:00+02:00' },
      { row: '2020-09-13 23:00:00', at: '2020-09-13T23:00:00+02:00' },
    ],
    hour: { prefix: '2020-09-07 05:', at: '2020-09-07T05:00:00+02:00' },
  },
  '30mhz-one-month-every-5-minutes.csv': {
    zone: 'Europe/Amsterdam',
    delimiter: ',',
    header: 'Sensor 0013A20041A0002A NIEUW - co2 (ppm)',
    metric: 'co2',
    rows: [
      { row: '2020-08-16 12:45:00', at: '2020-08-16T12:45:00+02:00' },
      { row: '2020-09-15 12:45:00', at: '2020-09-15T12:45:00+02:00' },
    ],
    hour: { prefix: '2020-08-17 03:', at: '2020-08-17T03:00:00+02:00' },
  },
};

const files = !shared.skip
  ? readdirSync(DATA)
      .filter((f) => !f.startsWith('.'))
      .sort()
  : [];
if (shared.skip || files.length === 0) {
  t.plan(0, shared.skip || `no real climate files at ${DATA}: skipped`);
} else {
  t.test('real climate exports through the routes', async (t) => {
    const s = await startServer(t);
    for (const name of files) {
      t.test(name, async (t) => {
        const check = CHECKS[name];
        const tree = await createTree(s, { timeZone: check?.zone ?? 'Europe/Amsterdam' });
        const key = tree.adminKey;
        const C = `${tree.cyclePath}/climate`;
        const bytes = readFileSync(path.join(DATA, name));
        const upload = (route: string, fields: Record<string, string> = {}) =>
          s.request('POST', `${C}/${route}`, { key, raw: form(bytes, name, fields) });

        const preview = await upload('csv/preview');
        t.equal(preview.status, 200, preview.text.slice(0, 500));
        t.same(preview.body.blocking, [], 'no blocking problems');
        const selected = preview.body.columns.filter((c: any) => c.selected);
        t.ok(selected.length >= 5, `${selected.length} columns read`);
        for (const c of selected) t.ok(c.unit && c.canonical_unit, `${c.header}: ${c.unit} → ${c.canonical_unit}`);
        const filePreview = await upload('file/preview');
        t.equal(filePreview.status, 200);
        t.ok(filePreview.body.first_hours.length > 0, 'first hours shown');
        t.equal((await s.request('GET', `${C}?limit=1`, { key })).body.total, 0, 'previews wrote nothing');

        const csv = await upload('csv');
        t.equal(csv.status, 200, csv.text.slice(0, 500));
        t.ok(csv.body.readings_added > 1000, `${csv.body.readings_added} readings stored`);
        t.same(csv.body.time_range, preview.body.time_range, 'the stored range is the previewed one');

        if (check) {
          const col = preview.body.columns.find((c: any) => c.header.startsWith(check.header));
          t.ok(col, `column ${check.header} found`);
          t.equal(col.metric, check.metric);
          t.ok(col.selected, 'and read');
          const lines = bytes.toString('utf8').split(/\r?\n/);
          const timeCells = check.delimiter === ';' ? 2 : 1;
          for (const { row, at } of check.rows) {
            const line = lines.find((l) => cells(l, check.delimiter).slice(0, timeCells).join(check.delimiter) === row);
            t.ok(line, `row ${row} in the file`);
            const expected = Number(cells(line!, check.delimiter)[col.index]);
            const got = await s.request('GET', `${C}?metric=${check.metric}&from=${encodeURIComponent(at)}&to=${encodeURIComponent(at)}`, {
              key,
            });
            t.equal(got.body.total, 1, `one ${check.metric} reading at ${at}`);
            t.equal(got.body.items[0]?.at, at, "stored at the file's instant");
            t.ok(
              Math.abs(got.body.items[0]?.value - expected) < 1e-9,
              `${check.metric} at ${at}: ${got.body.items[0]?.value} = file ${expected}`,
            );
          }
          if (check.hour) {
            // The hourly import of the same file, in another cycle.
            const tree2 = await createTree(s, { timeZone: check.zone });
            const hourly = await s.request('POST', `${tree2.cyclePath}/climate/file`, { key: tree2.adminKey, raw: form(bytes, name) });
            t.equal(hourly.status, 200);
            const inHour = lines
              .filter((l) => cells(l, check.delimiter).slice(0, timeCells).join(check.delimiter).startsWith(check.hour!.prefix))
              .map((l) => cells(l, check.delimiter)[col.index]!)
              .filter((v) => v !== '')
              .map(Number);
            t.ok(inHour.length > 0, `${inHour.length} values in the hour`);
            const mean = inHour.reduce((a, b) => a + b, 0) / inHour.length;
            const got = await s.request(
              'GET',
              `${tree2.cyclePath}/climate?metric=${check.metric}&from=${encodeURIComponent(check.hour.at)}&to=${encodeURIComponent(check.hour.at)}`,
              { key: tree2.adminKey },
            );
            t.equal(got.body.total, 1);
            t.ok(
              Math.abs(got.body.items[0]?.value - mean) < 1e-6,
              `hourly ${check.metric} at ${check.hour.at}: ${got.body.items[0]?.value} = mean ${mean}`,
            );
            const again = await s.request('POST', `${tree2.cyclePath}/climate/file`, { key: tree2.adminKey, raw: form(bytes, name) });
            t.same(
              [again.body.readings_added, again.body.readings_updated, again.body.readings_skipped],
              [0, 0, hourly.body.readings_added],
              're-imported hours are neither doubled nor changed',
            );
          }
        }
      });
    }
  });
}
