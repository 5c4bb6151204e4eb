// The same crop typed into a server on SQLite and one on PostgreSQL gives the same answers, byte for
// byte once ids are numbered: every week read, the forecast as of several weeks, the backtest, the
// stored forecasts, the export, the stored weather and the climate as read back. The other tests of
// test/forecast and test/weeks check each figure on either engine; this one checks that the engines
// agree on all of them (sums, averages, days cut across a clock change, rounding), and that the
// replay a week read and a forecast share is kept on both until the change log moves on.
// PostgreSQL only: it skips in the SQLite pass of `npm test` and runs in the PostgreSQL pass (run
// alone, it starts a server of its own, or skips saying why none can be had).
import t from 'tap';
import { SettableClock } from '../../src/clock.js';
import { createTree, startServer, type TestServer, type Tree } from '../helpers/server.js';
import { apiOnPostgres, sqlitePassSkip, testDatabase } from '../helpers/postgres.js';
import { startFakeWeather } from '../helpers/open-meteo.js';
import { typeCrop } from '../helpers/crop.js';
import { climateCsv, form } from '../climate/imports/helpers.js';
import { cycleReplay } from '../../src/forecast/forecast.js';
import type { CycleContext } from '../../src/forecast/queries.js';

const START = '2026-01-05';
const ZONE = 'Europe/Amsterdam';
// Monday 30 March 2026, 10:30 in Amsterdam: the day after the clocks went forward.
const clock = new SettableClock('2026-03-30T08:30:00Z');

/**
 * Every UUID replaced by its number of first appearance, and the node of each HLC version (each
 * database has its own, src/db/hlc.ts) by a mark: the same structure then gives the same text,
 * time and counter of the versions included.
 */
function numberIds(text: string): string {
  const seen = new Map<string, number>();
  return text
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, (id) => {
      if (!seen.has(id)) seen.set(id, seen.size + 1);
      return `<id ${seen.get(id)}>`;
    })
    .replace(/("version":"\d+\.\d+)\.[0-9a-f]+"/g, '$1.<node>"');
}

async function typeAll(s: TestServer): Promise<Tree> {
  const tree = await createTree(s, { startedOn: START, timeZone: ZONE });
  const key = tree.adminKey;
  const c = tree.cyclePath;
  const ok = async (method: string, url: string, body?: unknown, raw?: FormData) => {
    const r = await s.request(method, url, { key, body, raw });
    if (r.status >= 300) throw new Error(`${method} ${url}: ${r.status} ${r.text}`);
    return r.body;
  };
  await ok('PATCH', `${tree.greenhousePath}/rows/${tree.rowId}`, { plant_count: 250 });
  await typeCrop(s, tree, START, { weeks: 12, harvestFrom: 6, climate: true });
  const early = await ok('POST', `${c}/harvests`, { harvested_on: '2026-03-23', kg: 0.1 });
  await ok('POST', `${c}/harvests`, { harvested_on: '2026-03-24', kg: 0.2 });
  await ok('POST', `${c}/harvests`, { week: '2026-W13', kg: 12.345 });
  // An updated row: PostgreSQL then holds it elsewhere on disk than its insertion order.
  await ok('PATCH', `${c}/harvests/${early.harvest_id}`, { kg: 0.7 });
  await ok('POST', `${c}/irrigation`, { at: '2026-03-24T08:00:00', volume_l: 4000, drain_l: 1000, ec_in: 3, ph_in: 5.6, ec_drain: 4 });
  await ok('POST', `${c}/irrigation`, { at: '2026-03-29T23:30:00', volume_l: 1000 });
  await ok('POST', `${c}/weeks/2026-W13`, { text: 'the clocks went forward on Sunday' });
  // A climate export across the night the clocks went forward, through the import engine (COPY on PostgreSQL).
  await ok('POST', `${c}/climate/csv`, undefined, form(climateCsv(12 * 48, { start: '2026-03-28T00:00' }), 'export.csv'));
  await ok('POST', `${c}/weather`, { past_days: 10, forecast_days: 7 });
  await ok('POST', `${c}/forecasts?week=2026-W12`);
  await ok('POST', `${c}/forecasts`);
  return tree;
}

async function answers(s: TestServer, tree: Tree): Promise<[string, string][]> {
  const c = tree.cyclePath;
  const urls = [
    ...Array.from({ length: 14 }, (_, i) => `${c}/weeks/2026-W${String(i + 2).padStart(2, '0')}`),
    `${c}/forecast`,
    `${c}/forecast?week=2026-W08`,
    `${c}/forecast?week=2026-W11`,
    `${c}/forecast?week=2026-W13`,
    `${c}/backtest`,
    `${c}/forecasts`,
    `${c}/export.csv`,
    `${c}/climate?metric=air_temperature&limit=1000`,
    `${c}/climate?metric=co2&limit=1000`,
    `${tree.greenhousePath}/contents`,
  ];
  const out: [string, string][] = [];
  for (const url of urls) {
    const r = await s.request('GET', url, { key: tree.adminKey });
    out.push([url.slice(c.length) || url, `${r.status} ${numberIds(r.text)}`]);
  }
  return out;
}

if (!sqlitePassSkip(t)) {
  // In the PostgreSQL pass startServer stores on PostgreSQL by itself; run alone, this file makes the database.
  const databaseUrl = apiOnPostgres() ? undefined : await testDatabase(t);
  if (databaseUrl !== null) {
    const fake = await startFakeWeather(t, '2026-03-30');
    const onPg = await startServer(t, { weatherUrl: fake.url, ...(databaseUrl ? { databaseUrl } : {}) }, { clock });
    const onLite = await startServer(t, { weatherUrl: fake.url, databaseUrl: '' }, { clock });

    const pgTree = await typeAll(onPg);
    const liteTree = await typeAll(onLite);

    t.test('one server on each engine', async (t) => {
      t.equal(onPg.app.services.engine.kind, 'postgres');
      t.equal(onLite.app.services.engine.kind, 'sqlite');
    });

    t.test('the same records give the same answers', async (t) => {
      const pg = await answers(onPg, pgTree);
      const lite = await answers(onLite, liteTree);
      for (let i = 0; i < lite.length; i++) {
        const [url, text] = lite[i]!;
        t.ok(text.startsWith('200 '), `${url}: ${text.slice(0, 300)}`);
        t.equal(pg[i]![1], text, url);
      }
    });

    // The replay is kept by the organization's last change-log seq (a BIGINT, which pg answers as
    // text unless told otherwise): a key that never matched would only make every read slow.
    t.test('the replay is reused until the change log moves on, on both engines', async (t) => {
      for (const [s, tree] of [
        [onPg, pgTree],
        [onLite, liteTree],
      ] as const) {
        const db = s.app.services.db;
        const kind = s.app.services.engine.kind;
        const cycle = await db.selectFrom('cycles').selectAll().where('id', '=', tree.cycleId).executeTakeFirstOrThrow();
        const greenhouse = await db.selectFrom('greenhouses').selectAll().where('id', '=', tree.greenhouseId).executeTakeFirstOrThrow();
        const ctx: CycleContext = { cycle, greenhouse, zone: greenhouse.time_zone };
        const first = await cycleReplay(db, ctx, clock.now());
        t.ok((await cycleReplay(db, ctx, clock.now())) === first, `${kind}: the same replay while nothing is written`);
        const h = await s.request('POST', `${tree.cyclePath}/harvests`, { key: tree.adminKey, body: { week: '2026-W12', kg: 1 } });
        t.equal(h.status, 201);
        const after = await cycleReplay(db, ctx, clock.now());
        t.ok(after !== first, `${kind}: a new one after a harvest`);
        t.ok((await cycleReplay(db, ctx, clock.now())) === after, `${kind}: and that one kept`);
      }
    });
  }
}
