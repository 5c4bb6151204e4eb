import type { Writer } from '../db/store.js';
import type { ApiKeyTable, OrganizationTable } from '../db/schema.js';
import { generateApiKey } from '../auth/keys.js';
import { conflict } from '../http/problem.js';

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
      throw conflict('This is the last active admin key of the organization; create another admin key before revoking it.', {
        key_id: key.id,
      });
    }
  }
  return (await w.update<ApiKeyTable>('api_keys', key.id, { revoked_at: w.now })).after;
}
