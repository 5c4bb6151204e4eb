/**
 * Harvest CSV import cost, in three parts: parsing the file, storing the lines
 * through the Writer (one transaction, a change-log row per harvest), and
 * presenting the answer. The baseline measured in the same run is a bare
 * better-sqlite3 prepared insert of the same rows in one transaction, with no
 * change log: the ratio says what the write path costs on this machine.
 *
 * A CPU profile of the store step (30,000 lines) put about half of it in
 * better-sqlite3 `prepare`: Kysely prepares each statement afresh, two per
 * harvest (the row and its change-log entry).
 *
 *   node --import tsx bench/records-harvest-import.ts [lines]
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { openDatabase } from '../src/db/database.js';
import { Store, SYSTEM_ACTOR } from '../src/db/store.js';
import { newId } from '../src/db/ids.js';
import { parseHarvestCsv } from '../src/records/harvests/csv.js';
import { importHarvests } from '../src/records/harvests/commands.js';
import { presentHarvest } from '../src/records/harvests/presenters.js';
import type { CycleScope } from '../src/registry/scope.js';

const lines = Number(process.argv[2] ?? 100_000);
const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-bench-'));
const opened = await openDatabase(dir);
const store = new Store(opened.db, opened.hlc, undefined, opened.engine);
const sqlite = opened.engine.kind === 'sqlite' ? opened.engine.sqlite! : (undefined as never);

const stamp = { created_at: new Date().toISOString(), updated_at: new Date().toISOString(), version: 'v' };
const ids = { organization_id: newId(), farm_id: newId(), greenhouse_id: newId(), row_id: newId(), cycle_id: newId() };
// Registry rows straight into SQLite: the bench measures records, not the registry.
sqlite.pragma('foreign_keys = OFF');
const { cycle_id: _c, ...parents } = ids;
const cycle = {
  id: ids.cycle_id,
  ...parents,
  name: 'bench',
  crop: null,
  variety: null,
  started_on: '2026-01-05',
  ended_on: null,
  plants_per_m2: 2.5,
  stems_per_m2: null,
  notes: null,
  ...stamp,
};
await opened.db
  .insertInto('cycles')
  .values(cycle as any)
  .execute();
const scope = { cycle, greenhouse: { time_zone: 'Europe/Amsterdam' }, zone: 'Europe/Amsterdam' } as unknown as CycleScope;

const csv =
  'week,kg,note\n' +
  Array.from({ length: lines }, (_, i) => `2026-W${String((i % 52) + 1).padStart(2, '0')},${(i % 97) / 4},n${i}`).join('\n');

const time = async <T>(fn: () => Promise<T> | T): Promise<[T, number]> => {
  const t0 = performance.now();
  const r = await fn();
  return [r, performance.now() - t0];
};

const [parsed, parseMs] = await time(() => parseHarvestCsv(Buffer.from(csv)));
const [rows, storeMs] = await time(() => store.write(SYSTEM_ACTOR, (w) => importHarvests(w, scope, parsed)));
const [, presentMs] = await time(() => JSON.stringify({ items: rows.map(presentHarvest), count: rows.length }));

const insert = sqlite.prepare(
  'insert into harvests (id, organization_id, created_at, updated_at, version, farm_id, greenhouse_id, row_id, cycle_id, week, kg, note, harvested_on) values (?,?,?,?,?,?,?,?,?,?,?,?,null)',
);
const [, baselineMs] = await time(() =>
  sqlite.transaction(() => {
    for (const l of parsed)
      insert.run(
        newId(),
        ids.organization_id,
        stamp.created_at,
        stamp.updated_at,
        'v',
        ids.farm_id,
        ids.greenhouse_id,
        ids.row_id,
        ids.cycle_id,
        l.week.label,
        l.kg,
        l.note,
      );
  })(),
);

const fmt = (ms: number) => `${ms.toFixed(0)} ms`;
console.log(`harvest CSV import, ${lines} lines`);
console.log(`  baseline (bare prepared insert, one transaction): ${fmt(baselineMs)}`);
console.log(`  parse:   ${fmt(parseMs)}  (${(parseMs / baselineMs).toFixed(2)}× baseline)`);
console.log(`  store:   ${fmt(storeMs)}  (${(storeMs / baselineMs).toFixed(2)}× baseline; Writer with change log)`);
console.log(`  present: ${fmt(presentMs)}  (${(presentMs / baselineMs).toFixed(2)}× baseline)`);
await opened.close();
rmSync(dir, { recursive: true, force: true });
