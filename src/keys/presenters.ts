import type { ApiKeyTable } from '../db/schema.js';

export const keySchema = {
  type: 'object',
  required: ['key_id', 'organization_id', 'name', 'role', 'display', 'active', 'revoked_at', 'created_at', 'updated_at', 'version'],
  properties: {
    key_id: { type: 'string' },
    organization_id: { type: 'string' },
    name: { type: 'string' },
    role: { enum: ['admin', 'member'] },
    display: { type: 'string', description: 'The key with its secret elided, to tell keys apart: prefix and last four characters.' },
    active: { type: 'boolean' },
    revoked_at: { type: ['string', 'null'] },
    created_at: { type: 'string' },
    updated_at: { type: 'string' },
    version: { type: 'string' },
  },
  additionalProperties: false,
};

export const createdKeySchema = {
  type: 'object',
  required: [...keySchema.required, 'api_key'],
  properties: { ...keySchema.properties, api_key: { type: 'string', description: 'The secret. Shown in this answer only; store it now.' } },
  additionalProperties: false,
};

export function presentKey(k: ApiKeyTable) {
  return {
    key_id: k.id,
    organization_id: k.organization_id,
    name: k.name,
    role: k.role,
    display: k.display,
    active: !k.revoked_at,
    revoked_at: k.revoked_at,
    created_at: k.created_at,
    updated_at: k.updated_at,
    version: k.version,
  };
}
