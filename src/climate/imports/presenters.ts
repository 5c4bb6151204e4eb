import { presentInstant } from '../../time/instants.js';
import type { ClimateFileMappingTable, ClimateImportTable } from './tables.js';

export const importSchema = {
  type: 'object',
  required: [
    'id',
    'organization_id',
    'cycle_id',
    'file_name',
    'content_hash',
    'size_bytes',
    'kind',
    'actor',
    'created_at',
    'rows_read',
    'readings_added',
    'readings_updated',
    'readings_skipped',
    'time_range',
    'metrics',
    'status',
    'failure_reason',
    'mapping',
    'warnings',
    'undone_at',
    'version',
  ],
  additionalProperties: false,
  properties: {
    id: { type: 'string', description: 'Import id (UUIDv7). Imported readings name it as their `source`.' },
    organization_id: { type: 'string' },
    cycle_id: { type: 'string' },
    file_name: { type: 'string', description: 'Name of the file as sent (or as found in the watched folder).' },
    content_hash: {
      type: 'string',
      description: 'sha256 of the file bytes, hex. The watched folder never imports the same content twice into a cycle.',
    },
    size_bytes: { type: 'integer', description: 'File size in bytes.' },
    kind: {
      enum: ['csv', 'file', 'ingest', 'watch'],
      description:
        '`csv`: climate CSV upload; `file`: climate-computer export upload (hourly values); `ingest`: a script posting the file as the body; `watch`: found in the watched folder.',
    },
    actor: { type: 'string', description: 'Who imported it: `key:<key_id>`, `admin-token`, or `watcher`.' },
    created_at: { type: 'string', description: 'When the import ran (UTC).' },
    rows_read: {
      type: 'integer',
      description: 'Rows of the file that held readings (for hourly imports too: the file rows, not the hours stored).',
    },
    readings_added: { type: 'integer', description: 'Readings that did not exist before.' },
    readings_updated: { type: 'integer', description: 'Readings that existed with another value and were changed (undo restores them).' },
    readings_skipped: {
      type: 'integer',
      description: 'Readings that existed with the same value (left alone), and repeats of the same metric and instant within the file.',
    },
    time_range: {
      type: ['object', 'null'],
      required: ['from', 'to'],
      properties: { from: { type: 'string' }, to: { type: 'string' } },
      description: 'First and last instant stored, on the greenhouse clock with offset; null when nothing was read.',
    },
    metrics: { type: 'array', items: { type: 'string' }, description: 'Metrics stored.' },
    status: {
      enum: ['done', 'failed', 'undone'],
      description: '`failed`: nothing stored, see `failure_reason`; `undone`: its readings were removed or restored.',
    },
    failure_reason: { type: ['string', 'null'], description: 'Why a failed import stored nothing.' },
    mapping: { description: 'The confirmed mapping (column choices) the import used; null when it failed before one was known.' },
    warnings: {
      type: 'array',
      items: { type: 'string' },
      description: 'Warnings of the file analysis (rows skipped and why, repeated and missing daylight-saving hours...).',
    },
    undone_at: { type: ['string', 'null'], description: 'When it was undone (UTC).' },
    version: { type: 'string' },
  },
};

export function presentImport(r: ClimateImportTable, zone: string) {
  return {
    id: r.id,
    organization_id: r.organization_id,
    cycle_id: r.cycle_id,
    file_name: r.file_name,
    content_hash: r.content_hash,
    size_bytes: r.size_bytes,
    kind: r.kind,
    actor: r.actor,
    created_at: r.created_at,
    rows_read: r.rows_read,
    readings_added: r.readings_added,
    readings_updated: r.readings_updated,
    readings_skipped: r.readings_skipped,
    time_range: r.from_utc && r.to_utc ? { from: presentInstant(r.from_utc, zone), to: presentInstant(r.to_utc, zone) } : null,
    metrics: JSON.parse(r.metrics) as string[],
    status: r.status,
    failure_reason: r.failure_reason,
    mapping: r.mapping === null ? null : (JSON.parse(r.mapping) as unknown),
    warnings: JSON.parse(r.warnings) as string[],
    undone_at: r.undone_at,
    version: r.version,
  };
}

export const savedMappingSchema = {
  type: 'object',
  required: ['greenhouse_id', 'mapping', 'source_file_name', 'created_at', 'updated_at', 'version'],
  additionalProperties: false,
  properties: {
    greenhouse_id: { type: 'string' },
    mapping: {
      type: 'object',
      description:
        "The confirmed mapping: how time is read, date order, compartment, and per column (by index and header) the metric and the unit of the file's values. It applies only to files with the same header (its `fingerprint`).",
    },
    source_file_name: { type: 'string', description: 'The file the choices were confirmed on.' },
    created_at: { type: 'string' },
    updated_at: { type: 'string' },
    version: { type: 'string' },
  },
};

export function presentSavedMapping(r: ClimateFileMappingTable) {
  return {
    greenhouse_id: r.greenhouse_id,
    mapping: JSON.parse(r.mapping) as Record<string, unknown>,
    source_file_name: r.source_file_name,
    created_at: r.created_at,
    updated_at: r.updated_at,
    version: r.version,
  };
}
