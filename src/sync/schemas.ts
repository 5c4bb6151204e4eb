import type { JsonSchema, ObjectSchema } from '../http/route.js';

/** Request and answer schemas of the sync routes (docs/sync.md). */

const str = (description: string): JsonSchema => ({ type: 'string', description });
const nstr = (description: string): JsonSchema => ({ type: ['string', 'null'], description });
const int = (description: string): JsonSchema => ({ type: 'integer', description });
const nint = (description: string): JsonSchema => ({ type: ['integer', 'null'], description });

const stamp = (what: string): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  required: ['at', 'count', 'error'],
  properties: {
    at: nstr(`When the last ${what} ended, ISO 8601 UTC; null before the first.`),
    count: nint(`Changes it carried.`),
    error: nstr(`Why the last try failed; null when it did not.`),
  },
});

export const statusSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'role',
    'node',
    'organization_id',
    'upstream',
    'state',
    'pending',
    'quarantined',
    'last_push',
    'last_pull',
    'lag_s',
    'failures',
    'next_attempt_at',
    'files',
    'feed_position',
    'received',
  ],
  properties: {
    role: {
      enum: ['box', 'upstream'],
      description: 'box: this instance syncs with an upstream (UPSTREAM_URL). upstream: boxes sync with it.',
    },
    node: str('This instance’s node id: its name in change ids and versions.'),
    organization_id: str('The organization (the key’s).'),
    upstream: {
      type: ['object', 'null'],
      additionalProperties: false,
      required: ['url', 'node', 'linked_at'],
      properties: {
        url: str('Upstream base URL.'),
        node: nstr('The upstream’s node id.'),
        linked_at: nstr('First contact, ISO 8601 UTC.'),
      },
      description: 'The upstream this box syncs with; null on an upstream.',
    },
    state: {
      enum: ['idle', 'syncing', 'offline', 'key_refused', 'error', 'serving', 'not_linked'],
      description:
        'idle: in sync as of the last round. syncing: a round is running. offline: the last round found no upstream; it tries again with backoff. key_refused: the upstream refused the key (revoked): syncing stopped. error: the last round failed for another reason (see last_push/last_pull). serving: an upstream. not_linked: this organization is not linked.',
    },
    pending: {
      type: 'object',
      additionalProperties: false,
      required: ['changes', 'oldest_at'],
      properties: {
        changes: int('Changes made here and not yet acknowledged by the upstream.'),
        oldest_at: nstr('When the oldest of them was made.'),
      },
    },
    quarantined: {
      type: 'object',
      additionalProperties: false,
      required: ['count', 'items'],
      description: 'Changes refused (by the upstream on push, by this instance on pull) with the reason; they do not hold up the others.',
      properties: {
        count: int('All quarantined changes.'),
        items: {
          type: 'array',
          description: 'The latest 100, newest first.',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['change_id', 'direction', 'kind', 'record_id', 'op', 'status', 'code', 'reason', 'errors', 'at'],
            properties: {
              change_id: str('The change.'),
              direction: { enum: ['push', 'pull'], description: 'push: refused upstream; pull: refused here.' },
              kind: str('Kind of record (e.g. harvests).'),
              record_id: str('The record.'),
              op: str('upsert or delete.'),
              status: int('The status the API gives the same write (409, 422, 403, 404).'),
              code: str('Its problem code.'),
              reason: str('Why.'),
              errors: { type: 'array', description: 'Fields at fault, as in a 422.', items: { type: 'object' } },
              at: str('When it was refused.'),
            },
          },
        },
      },
    },
    last_push: stamp('push'),
    last_pull: stamp('pull'),
    lag_s: {
      type: 'object',
      additionalProperties: false,
      required: ['push', 'pull'],
      properties: {
        push: nint('Age of the oldest change not yet acknowledged, seconds (0 when none).'),
        pull: nint('Seconds since the last page was pulled; null before the first.'),
      },
    },
    failures: int('Rounds failed in a row.'),
    next_attempt_at: nstr('When the next round may run after failures (backoff), ISO 8601 UTC; null when not waiting.'),
    files: {
      type: 'object',
      additionalProperties: false,
      required: ['uploads_pending', 'downloads_pending', 'bytes_sent'],
      properties: {
        uploads_pending: int('Walk file contents still to send.'),
        downloads_pending: int('Walk file contents still to fetch.'),
        bytes_sent: int('Bytes of walk files sent, all told.'),
      },
    },
    feed_position: int('How many changes of the organization this instance has numbered in its feed.'),
    received: {
      type: 'array',
      description: 'Changes received, by the node that made them.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['origin', 'changes', 'last_at'],
        properties: { origin: str('Node id.'), changes: int('Changes received from it.'), last_at: str('When the last arrived.') },
      },
    },
  },
};

export const roundSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'ok',
    'state',
    'error',
    'pushed',
    'refused',
    'pulled',
    'pull_refused',
    'files_sent',
    'files_received',
    'bytes_sent',
    'bytes_received',
    'busy_waits',
    'ms',
  ],
  properties: {
    ok: { type: 'boolean', description: 'The round reached the end.' },
    state: str('The state after it (as in GET /api/sync).'),
    error: nstr('Why it stopped, when it did.'),
    pushed: int('Changes the upstream acknowledged.'),
    refused: int('Changes it refused (quarantined).'),
    pulled: int('Changes received and applied here (or found already here).'),
    pull_refused: int('Received changes refused here (quarantined).'),
    files_sent: int('Walk file contents sent.'),
    files_received: int('Walk file contents received.'),
    bytes_sent: int('Bytes sent to the upstream, compressed as sent.'),
    bytes_received: int('Bytes received from it.'),
    busy_waits: int('Times the upstream answered a push 503 upstream_busy and the batch was sent again after its Retry-After.'),
    ms: int('How long the round took, milliseconds.'),
    phases: {
      type: 'object',
      additionalProperties: false,
      required: ['push', 'pull', 'files'],
      description: 'Milliseconds spent in each part of the round.',
      properties: { push: int('Pushing changes.'), pull: int('Pulling and applying.'), files: int('Moving walk files.') },
    },
  },
};

export const digestSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['organization_id', 'kinds'],
  properties: {
    organization_id: str('The organization.'),
    kinds: {
      type: 'object',
      description: 'Per kind of record: how many, and a sha256 over them in id order. Equal on two instances that hold the same records.',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['count', 'sha256'],
        properties: { count: int('Records.'), sha256: str('sha256, hex.') },
      },
    },
  },
};

export const linkBody: ObjectSchema = {
  type: 'object',
  required: ['upstream_url', 'organization_id'],
  additionalProperties: false,
  properties: {
    upstream_url: {
      type: 'string',
      format: 'uri',
      maxLength: 500,
      description: 'Base URL of the upstream, e.g. https://upstream.example.com.',
    },
    organization_id: {
      type: 'string',
      maxLength: 64,
      description: 'The organization on this box to link (its id stays the same upstream).',
    },
    upstream_token: {
      type: 'string',
      minLength: 1,
      maxLength: 500,
      description: 'The upstream’s appliance admin token: used once to make the organization and a key there; not stored.',
    },
    upstream_key: {
      type: 'string',
      minLength: 1,
      maxLength: 500,
      description: 'Or an admin key of the organization already made upstream (POST /api/sync/v1/organizations there).',
    },
  },
};

export const linkedSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['organization_id', 'upstream_url', 'key_id', 'round'],
  properties: {
    organization_id: str('The organization linked.'),
    upstream_url: str('The upstream.'),
    key_id: nstr('The upstream key the box syncs with.'),
    round: roundSchema,
  },
};

export const registerBody: ObjectSchema = {
  type: 'object',
  required: ['organization_id', 'name'],
  additionalProperties: false,
  properties: {
    organization_id: {
      type: 'string',
      pattern: '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-7[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$',
      description: 'The id the organization has on the box (UUIDv7).',
    },
    name: { type: 'string', minLength: 1, maxLength: 200, description: 'Its name (the box sends its own later; the later name wins).' },
    key_name: { type: 'string', minLength: 1, maxLength: 200, description: 'Name of the admin key made for the box.' },
  },
};

export const registeredSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['organization_id', 'name', 'created', 'key'],
  properties: {
    organization_id: str('The organization.'),
    name: str('Its name here.'),
    created: { type: 'boolean', description: 'false: it existed already; a new key was made for it.' },
    key: {
      type: 'object',
      additionalProperties: false,
      required: ['key_id', 'api_key', 'role', 'name'],
      properties: {
        key_id: str('Key id.'),
        api_key: str('The secret: shown in this answer only. Set it as UPSTREAM_KEY on the box.'),
        role: { const: 'admin' },
        name: str('Key name.'),
      },
    },
  },
};

export const helloSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['protocol', 'node', 'organization_id', 'organization_name', 'key_id', 'last_seq_from_you'],
  properties: {
    protocol: int('Protocol version (1).'),
    node: str('The upstream’s node id.'),
    organization_id: str('The key’s organization: the one the box syncs.'),
    organization_name: nstr('Its name here, null when only the key is known.'),
    key_id: str('The key used.'),
    last_seq_from_you: int('The highest change number received from the asking node (0: none).'),
  },
};

const change: JsonSchema = {
  type: 'object',
  required: ['id', 'origin', 'org', 'kind', 'eid', 'op', 'v', 'at'],
  description: 'One change (docs/sync.md, "Protocol").',
  properties: {
    id: str('Change id, <node>:<number>.'),
    origin: str('Node that made it.'),
    org: str('Organization.'),
    kind: str('Kind of record.'),
    eid: str('Record id.'),
    op: { enum: ['upsert', 'delete'] },
    v: str('HLC version.'),
    at: str('When made.'),
    row: { type: 'object', description: 'The record’s fields.' },
    fv: { type: 'object', description: 'Field versions (registry, settings, walks).' },
    unit: { type: 'object', description: 'What travels with the record.' },
  },
};

export const pushAnswerSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['results', 'applied'],
  properties: {
    results: {
      type: 'array',
      description: 'One per change sent, in order.',
      items: {
        type: 'object',
        required: ['id', 'outcome'],
        additionalProperties: false,
        properties: {
          id: str('The change.'),
          outcome: {
            enum: ['applied', 'superseded', 'refused'],
            description: 'applied; superseded (a later write or a delete here wins; nothing to do); refused (see status, code, detail).',
          },
          status: int('For a refusal: the status the API answers for the same write.'),
          code: str('Its problem code.'),
          detail: str('Why.'),
          errors: { type: 'array', items: { type: 'object' }, description: 'Fields at fault.' },
        },
      },
    },
    applied: int('The organization’s feed position after the batch.'),
  },
};

export const pullAnswerSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['changes', 'cursor', 'more'],
  properties: {
    changes: { type: 'array', items: change, description: 'In the order they were made here; the asking node’s own are left out.' },
    cursor: str('Opaque: send it back as `cursor` for the next page.'),
    more: { type: 'boolean', description: 'More changes wait behind this page.' },
  },
};

export const uploadSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['sha256', 'offset', 'size', 'complete'],
  properties: {
    sha256: str('The content.'),
    offset: int('Bytes held: send from this byte.'),
    size: int('Its size, bytes.'),
    complete: { type: 'boolean', description: 'Held whole and checked against its hash: nothing to send.' },
  },
};

export const uploadStatusesSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['items'],
  properties: {
    items: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['sha256', 'offset', 'size', 'complete', 'wanted'],
        properties: {
          ...(uploadSchema.properties as Record<string, JsonSchema>),
          wanted: { type: 'boolean', description: 'A walk of the organization lists this content (false: do not send it).' },
        },
      },
    },
  },
};
