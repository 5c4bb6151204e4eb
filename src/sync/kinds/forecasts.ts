import { weekLabelSchema } from '../../http/schemas.js';
import { requireWeek } from '../../time/weeks.js';
import { fieldInvalid, rowSchema } from '../refusal.js';
import { SYNCED, rowKind } from './rows.js';
import type { SyncKind } from './kind.js';

/**
 * Stored forecasts (docs/sync.md): issued once and never changed. One made on a box travels as it
 * was issued; a changed copy of one is refused (409), whatever its version; it goes only with its
 * crop cycle.
 */
const CYCLE_PARENTS = ['farm_id', 'greenhouse_id', 'row_id', 'cycle_id'] as const;

function json(text: unknown, name: string, shape: 'array' | 'object'): void {
  let v: unknown;
  try {
    v = JSON.parse(String(text));
  } catch {
    throw fieldInvalid(name, 'must be JSON');
  }
  if (shape === 'array' ? !Array.isArray(v) : v === null || typeof v !== 'object' || Array.isArray(v))
    throw fieldInvalid(name, `must be a JSON ${shape}`);
}

export const forecastsKind: SyncKind = rowKind({
  kind: 'forecasts',
  // Its check reads nothing stored: a batch applies it from reads gathered once (src/sync/batch.ts).
  batched: true,
  table: 'forecasts',
  what: 'stored forecast',
  columns: [...SYNCED, ...CYCLE_PARENTS, 'week', 'made_by', 'made_by_key_id', 'weeks', 'inputs', 'model'],
  immutable: [...CYCLE_PARENTS, 'week', 'made_by', 'made_by_key_id', 'weeks', 'inputs', 'model'],
  insertOnly: true,
  merge: 'record',
  schema: rowSchema(
    {
      ...Object.fromEntries(CYCLE_PARENTS.map((c) => [c, { type: 'string' }])),
      week: weekLabelSchema,
      made_by: { type: 'string', maxLength: 300 },
      made_by_key_id: { type: ['string', 'null'] },
      weeks: { type: 'string' },
      inputs: { type: 'string' },
      model: { type: 'string', maxLength: 200 },
    },
    ['week', 'made_by', 'weeks', 'inputs', 'model'],
  ),
  parents: [{ column: 'cycle_id', table: 'cycles', kind: 'cycles', what: 'crop cycle', same: ['farm_id', 'greenhouse_id', 'row_id'] }],
  check(_ctx, row) {
    const week = requireWeek(String(row.week), 'week');
    if (week.label !== row.week) throw fieldInvalid('week', 'must be a week label');
    json(row.weeks, 'weeks', 'array');
    json(row.inputs, 'inputs', 'object');
  },
});

/**
 * Outdoor weather does not travel: it comes from the weather service, which every instance asks
 * itself for its own greenhouses (its refreshes and hours are its own, like its schedules).
 */
function local(kind: string): SyncKind {
  return {
    kind,
    digest: [],
    async serialize() {
      return null;
    },
    async apply() {
      return 'superseded';
    },
  };
}

export const weatherKinds: SyncKind[] = [local('weather_refreshes'), local('weather_hours')];
