import type { Db } from '../db/database.js';
import type { Writer } from '../db/store.js';
import type { ApiKeyTable, OrganizationTable } from '../db/schema.js';
import type { ScopeResolvers } from '../http/scope.js';
import { generateApiKey } from '../auth/keys.js';
import { Conflict, NotFound } from '../errors.js';

declare module '../http/scope.js' {
  interface Scopes {
    key: ApiKeyTable;
  }
}

/** A key by id; under an organization's path, only that organization's (the appliance admin token reaches every one). */
export async function loadKey(db: Db, keyId: string, organizationId?: string): Promise<ApiKeyTable> {
  let q = db.selectFrom('api_keys').selectAll().where('id', '=', keyId);
  if (organizationId) q = q.where('organization_id', '=', organizationId);
  const key = await q.executeTakeFirst();
  if (!key) throw new NotFound('key');
  return key;
}

export const keyScopes: ScopeResolvers = {
  key: (db, params) => loadKey(db, params.key_id!, params.organization_id),
};

export function listKeys(db: Db, organizationId: string): Promise<ApiKeyTable[]> {
  return db.selectFrom('api_keys').selectAll().where('organization_id', '=', organizationId).orderBy('id').execute();
}

/** Every organization's keys, or one's, paged (the appliance admin token's view). */
export async function listAllKeys(db: Db, query: { organization_id?: string; limit: number; offset: number }) {
  let q = db.selectFrom('api_keys');
  if (query.organization_id) q = q.where('organization_id', '=', query.organization_id);
  const total = await q.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  const items = await q.selectAll().orderBy('id').limit(query.limit).offset(query.offset).execute();
  return { items, total: Number(total.n), limit: query.limit, offset: query.offset };
}

/** A key for an organization named in the body (the appliance admin token's route): 404 when there is none. */
export async function createKeyFor(w: Writer, organizationId: string, name: string, role: 'admin' | 'member'): Promise<CreatedKey> {
  const org = await w.trx.selectFrom('organizations').select('id').where('id', '=', organizationId).executeTakeFirst();
  if (!org) throw new NotFound('organization');
  return createKey(w, organizationId, name, role);
}

export interface CreatedKey {
  row: ApiKeyTable;
  apiKey: string;
}

export async function createKey(w: Writer, organizationId: string, name: string, role: 'admin' | 'member'): Promise<CreatedKey> {
  const secret = generateApiKey();
  const row = await w.insert<ApiKeyTable>('api_keys', {
    organization_id: organizationId,
    name,
    role,
    lookup: secret.lookup,
    secret_hash: secret.secretHash,
    display: secret.display,
    revoked_at: null,
    last_used_at: null,
  });
  return { row, apiKey: secret.apiKey };
}

export async function createOrganization(w: Writer, name: string, keyName: string): Promise<{ org: OrganizationTable; key: CreatedKey }> {
  const { newId } = await import('../db/ids.js');
  const id = newId();
  const org = await w.insert<OrganizationTable>('organizations', { id, organization_id: id, name });
  const key = await createKey(w, id, keyName, 'admin');
  return { org, key };
}

export async function renameKey(w: Writer, key: ApiKeyTable, name: string): Promise<ApiKeyTable> {
  return (await w.update<ApiKeyTable>('api_keys', key.id, { name })).after;
}

/**
 * Revokes a key. The last active admin key of an organization stays (409):
 * without it nobody could manage the organization's keys. Revoking a revoked
 * key changes nothing and answers the key as it is.
 */
export async function revokeKey(w: Writer, key: ApiKeyTable): Promise<ApiKeyTable> {
  if (key.revoked_at) return key;
  if (key.role === 'admin') {
    const others = await w.trx
      .selectFrom('api_keys')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('organization_id', '=', key.organization_id)
      .where('role', '=', 'admin')
      .where('revoked_at', 'is', null)
      .where('id', '!=', key.id)
      .executeTakeFirstOrThrow();
    if (Number(others.n) === 0) {
      throw new Conflict('This is the last active admin key of the organization; create another admin key before revoking it.', {
        key_id: key.id,
      });
    }
  }
  return (await w.update<ApiKeyTable>('api_keys', key.id, { revoked_at: w.now })).after;
}
