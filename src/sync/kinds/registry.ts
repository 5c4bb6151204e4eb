import { Conflict, Invalid } from '../../errors.js';
import { checkLevelRules, deleteLevel } from '../../registry/commands.js';
import { LEVELS, type LevelName } from '../../registry/levels.js';
import { keyName, organizationName, role } from '../../keys/routes.js';
import { rowSchema } from '../refusal.js';
import { SYNCED, rowKind, type ParentSpec } from './rows.js';
import type { SyncKind } from './kind.js';

/**
 * The registry and the keys: last writer wins field by field, on the HLC versions
 * (docs/sync.md, "Registry and settings"). A key's revocation always wins, and a key's hash
 * travels, never its secret (none is stored).
 */

export const organizationsKind: SyncKind = rowKind({
  kind: 'organizations',
  table: 'organizations',
  what: 'organization',
  columns: [...SYNCED, 'name'],
  immutable: [],
  merge: { groups: [['name']] },
  schema: rowSchema({ name: organizationName }, ['name']),
  parents: [],
  async remove() {
    throw new Invalid([], 'An organization is not deleted by sync.');
  },
});

export const apiKeysKind: SyncKind = rowKind({
  kind: 'api_keys',
  table: 'api_keys',
  what: 'key',
  // last_used_at is this box's own: it is not sent.
  columns: [...SYNCED, 'name', 'role', 'lookup', 'secret_hash', 'display', 'revoked_at'],
  immutable: ['role', 'lookup', 'secret_hash', 'display'],
  localDefaults: () => ({ last_used_at: null }),
  merge: { groups: [['name']] },
  schema: rowSchema(
    {
      name: keyName,
      role,
      lookup: { type: 'string', pattern: '^[0-9a-f]{16}$' },
      secret_hash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
      display: { type: 'string', maxLength: 100 },
      revoked_at: { type: ['string', 'null'], format: 'date-time' },
    },
    ['name', 'role', 'lookup', 'secret_hash', 'display'],
  ),
  parents: [{ column: 'organization_id', table: 'organizations', kind: 'organizations', what: 'organization' }],
  // A revoked key stays revoked whatever else arrives, and the earliest revocation is the one kept.
  extraMerge(existing, incoming) {
    const a = existing.revoked_at as string | null;
    const b = incoming.revoked_at as string | null | undefined;
    if (!b) return {};
    return { revoked_at: a && a < b ? a : b };
  },
  async check(ctx, row, existing) {
    if (existing) return;
    const other = await ctx.trx
      .selectFrom('api_keys')
      .select('id')
      .where('lookup', '=', row.lookup as string)
      .executeTakeFirst();
    if (other) throw new Conflict(`Another key already has the lookup ${String(row.lookup)}.`);
  },
  async remove() {
    throw new Invalid([], 'A key is revoked, never deleted.');
  },
});

/** Columns a rule checks together win together (docs/sync.md): a location, a cycle's dates. */
const GROUPED: Partial<Record<LevelName, string[][]>> = {
  greenhouse: [['latitude', 'longitude']],
  cycle: [['started_on', 'ended_on']],
};

const PARENTS: Record<LevelName, ParentSpec[]> = {
  farm: [{ column: 'organization_id', table: 'organizations', kind: 'organizations', what: 'organization' }],
  greenhouse: [{ column: 'farm_id', table: 'farms', kind: 'farms', what: 'farm' }],
  row: [{ column: 'greenhouse_id', table: 'greenhouses', kind: 'greenhouses', what: 'greenhouse', same: ['farm_id'] }],
  cycle: [{ column: 'row_id', table: 'rows', kind: 'rows', what: 'row', same: ['farm_id', 'greenhouse_id'] }],
};

function levelKind(name: LevelName): SyncKind {
  const level = LEVELS[name];
  const fields = Object.keys(level.fields);
  const grouped = GROUPED[name] ?? [];
  const groups = [...grouped, ...fields.filter((f) => !grouped.some((g) => g.includes(f))).map((f) => [f])];
  return rowKind({
    kind: level.table,
    table: level.table,
    what: level.label,
    columns: [...SYNCED, ...level.parentIds, ...fields],
    immutable: level.parentIds,
    merge: { groups },
    schema: rowSchema(level.fields, level.required),
    parents: PARENTS[name],
    check(_ctx, row) {
      checkLevelRules(level, row);
    },
    // A level's delete is final and takes what hangs under it here too, as DELETE ?cascade=true
    // does: what another site added under it meanwhile goes with it (docs/sync.md).
    async remove(ctx, existing) {
      await deleteLevel(ctx.w, ctx.services, level, existing.id as string, true);
    },
  });
}

export const farmsKind = levelKind('farm');
export const greenhousesKind = levelKind('greenhouse');
export const rowsKind = levelKind('row');
export const cyclesKind = levelKind('cycle');
