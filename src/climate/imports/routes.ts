import path from 'node:path';
import type { Context } from 'koa';
import { defineRoute, type RouteSpec, type UploadedFile } from '../../http/route.js';
import { bodyAjv } from '../../http/ajv.js';
import { pageOf, pagingQuery, pathParams } from '../../http/schemas.js';
import { CYCLE, CYCLE_PARAMS, GREENHOUSE, GREENHOUSE_PARAMS } from '../../registry/paths.js';
import type { CyclePath, GreenhousePath } from '../../registry/scope.js';
import type { Services } from '../../services.js';
import type { Principal } from '../../auth/principal.js';
import type { ColumnChoice, ConfirmedMapping } from '../exports-reader/index.js';
import { importExport, ingestExport, previewCsv, previewFile, type ClimateDeps, type ExportChoices, type ExportFile } from './service.js';
import { undoImportOf } from './undo.js';
import { listImports } from './history.js';
import { forgetMapping, requireMappingRecord } from './mappings.js';
import { importSchema, presentImport, presentSavedMapping, savedMappingSchema } from './presenters.js';
import {
  columnChoicesSchema,
  confirmedMappingSchema,
  csvFormSchema,
  csvPreviewSchema,
  fileFormSchema,
  filePreviewSchema,
  importResultSchema,
} from './schemas.js';
import { Invalid, type FieldIssue } from '../../errors.js';

const TAG = 'Climate imports';
const validateColumns = bodyAjv.compile(columnChoicesSchema);
const validateMapping = bodyAjv.compile(confirmedMappingSchema);

interface FormFields {
  compartment?: string;
  date_order?: 'dmy' | 'mdy';
  sheet?: string;
  columns?: string;
  mapping?: string;
  remember?: boolean;
}

const fileLimit = (ctx: Context) => ctx.services.config.climateUploadLimit;
const uploadSpec = (fields: typeof csvFormSchema, description: string) => ({
  fields,
  files: [{ name: 'file', maxCount: 1, required: true, description }],
  limitBytes: fileLimit,
});

function depsOf(services: Services): ClimateDeps {
  const { db, store, clock } = services;
  return { db, store, clock };
}

function actorLabel(principal: Principal | undefined): string {
  if (!principal) return 'anonymous';
  return principal.kind === 'admin-token' ? 'admin-token' : `key:${principal.keyId}`;
}

/** A name to show, never a path: the client's name is kept for the record only. */
export function displayName(raw: string | undefined, fallback: string): string {
  const name = path.basename(String(raw ?? '').replace(/\\/g, '/'));
  // eslint-disable-next-line no-control-regex -- control characters are what is removed
  const base = name.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 255);
  return base || fallback;
}

function jsonField<T>(name: string, text: string | undefined, validate: typeof validateColumns): { value?: T; errors: FieldIssue[] } {
  if (text === undefined || text === '') return { errors: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { errors: [{ in: 'body', name, message: 'is not valid JSON text' }] };
  }
  if (!validate(parsed)) {
    return {
      errors: (validate.errors ?? [])
        .slice(0, 20)
        .map((e) => ({ in: 'body' as const, name: `${name}${e.instancePath.replace(/\//g, '.')}`, message: e.message ?? 'is invalid' })),
    };
  }
  return { value: parsed as T, errors: [] };
}

/** The form's choices, each JSON field checked against its schema (422 per field). */
function choicesOf(body: FormFields): ExportChoices {
  const columns = jsonField<ColumnChoice[]>('columns', body.columns, validateColumns);
  const mapping = jsonField<ConfirmedMapping>('mapping', body.mapping, validateMapping);
  const errors = [...columns.errors, ...mapping.errors];
  if (errors.length) throw new Invalid(errors);
  return { columns: columns.value, mapping: mapping.value, compartment: body.compartment, dateOrder: body.date_order, sheet: body.sheet };
}

function exportFile(file: UploadedFile | undefined, fallback: string): ExportFile {
  if (!file) throw new Invalid([{ in: 'body', name: 'file', message: 'is required (a file part)' }]);
  return { path: file.path, fileName: displayName(file.originalname, fallback), size: file.size };
}

const cycleParams = pathParams(...CYCLE_PARAMS);
const ERRORS_IMPORT = [400, 404, 413, 415];

export const importRoutes: RouteSpec[] = [
  defineRoute<CyclePath, unknown, FormFields, 'cycle'>({
    method: 'post',
    path: `${CYCLE}/climate/csv/preview`,
    operationId: 'preview_climate_csv',
    summary: 'Preview a climate CSV upload (writes nothing)',
    description:
      "multipart/form-data with `file` and the same optional fields as the upload. Answers what the upload would store: the detected layout, per column the metric, unit, conversion and confidence, the time zone (the greenhouse's) and time range, the first rows, warnings, blocking problems, and the `mapping` to confirm. A file with blocking problems still answers 200 here, listing them.",
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    params: cycleParams,
    multipart: uploadSpec(csvFormSchema, 'The climate CSV (any delimiter, any of the usual encodings).'),
    responses: { 200: { description: 'The analysis.', schema: csvPreviewSchema } },
    errors: [404, 413, 415],
    handler: ({ scope, body, files }) => previewCsv(scope, exportFile(files[0], 'upload.csv'), choicesOf(body)),
  }),
  defineRoute<CyclePath, unknown, FormFields, 'cycle'>({
    method: 'post',
    path: `${CYCLE}/climate/csv`,
    operationId: 'import_climate_csv',
    summary: 'Import a climate CSV (readings as read)',
    description:
      "multipart/form-data. Precedence: `columns` (you name them) wins; else a confirmed preview `mapping` (columns outside it are not imported); else the layout is detected. Each row's values are stored as readings at the row's instant, converted to canonical units; a reading that exists is updated, never doubled. 400 `climate_file_blocked` (with `blocking`) while the file has blocking problems; 413 above the upload cap (`CLIMATE_UPLOAD_LIMIT`, checked while streaming). All or nothing: one transaction. Answers the import record.",
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    params: cycleParams,
    multipart: uploadSpec(csvFormSchema, 'The climate CSV.'),
    responses: { 200: { description: 'The import record.', schema: importResultSchema } },
    errors: ERRORS_IMPORT,
    // Not `write`: the import runs its own transaction while a thread reads the file (src/climate/imports/service.ts).
    handler: async ({ services, scope, body, files, actor, principal }) => {
      const row = await importExport(depsOf(services), scope, exportFile(files[0], 'upload.csv'), {
        kind: 'csv',
        actor,
        actorLabel: actorLabel(principal),
        hourly: false,
        choices: choicesOf(body),
      });
      return { ...presentImport(row, scope.zone), remembered: row.remembered };
    },
  }),
  defineRoute<CyclePath, unknown, FormFields, 'cycle'>({
    method: 'post',
    path: `${CYCLE}/climate/file/preview`,
    operationId: 'preview_climate_file',
    summary: 'Preview a climate-computer export (CSV, text or .xlsx; writes nothing)',
    description:
      "multipart/form-data with `file` and optionally `mapping`, `columns`, `compartment`, `date_order`, `sheet`. Answers the file, the clock it is read on (`time_zone`), each column with metric and unit, setpoints, the first 24 hours as hourly values, what the cycle already stores in the file's time range, warnings, blocking problems and the `mapping` to confirm.",
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    params: cycleParams,
    multipart: uploadSpec(csvFormSchema, 'The export: CSV or other delimited text, or .xlsx.'),
    responses: { 200: { description: 'The analysis with the first hours.', schema: filePreviewSchema } },
    errors: [404, 413, 415],
    handler: ({ db, scope, body, files }) => previewFile(db, scope, exportFile(files[0], 'export'), choicesOf(body)),
  }),
  defineRoute<CyclePath, unknown, FormFields, 'cycle'>({
    method: 'post',
    path: `${CYCLE}/climate/file`,
    operationId: 'import_climate_file',
    summary: 'Import a climate-computer export as hourly values',
    description:
      "multipart/form-data. Uses the confirmed `mapping` (or `columns`, or detection when both are absent). Finer readings become hourly values (means for states such as temperature, sums for amounts such as rain or radiation sums, circular means for wind direction); hours already stored are updated, never doubled. `remember=true` saves the mapping as the greenhouse's column choices (used by ingest and the watched folder). 400 `climate_file_blocked` while the file has blocking problems; 413 above the upload cap.",
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    params: cycleParams,
    multipart: uploadSpec(fileFormSchema, 'The export: CSV or other delimited text, or .xlsx.'),
    responses: { 200: { description: 'The import record.', schema: importResultSchema } },
    errors: ERRORS_IMPORT,
    handler: async ({ services, scope, body, files, actor, principal }) => {
      const row = await importExport(depsOf(services), scope, exportFile(files[0], 'export'), {
        kind: 'file',
        actor,
        actorLabel: actorLabel(principal),
        hourly: true,
        choices: choicesOf(body),
        remember: body.remember === true,
      });
      return { ...presentImport(row, scope.zone), remembered: row.remembered };
    },
  }),
  defineRoute<CyclePath, { filename?: string }, unknown, 'cycle'>({
    method: 'post',
    path: `${CYCLE}/climate/ingest`,
    operationId: 'ingest_climate_file',
    summary: 'Import a climate-computer export posted by a script (body = the file)',
    description:
      "The request body is the file itself (CSV, text or .xlsx); its name comes from header `X-File-Name` or query `filename`. The key is taken from a header only (X-API-Key or Authorization: Bearer); a cookie or a key in the query is refused with 401. The greenhouse's saved column choices are used: 409 `no_saved_mapping` when none are saved, 422 `mapping_mismatch` when the file does not have their columns. Same import as POST {cycle}/climate/file (hourly values, updated never doubled).",
    tags: [TAG],
    auth: 'header-key',
    scope: 'cycle',
    params: cycleParams,
    query: {
      type: 'object',
      additionalProperties: false,
      properties: {
        filename: {
          type: 'string',
          minLength: 1,
          maxLength: 255,
          description: 'Name of the file, when the X-File-Name header is not sent.',
        },
      },
    },
    rawBody: {
      contentTypes: [
        'text/csv',
        'text/plain',
        'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
        'application/octet-stream',
      ],
      description: 'The export file, as is.',
      limitBytes: fileLimit,
    },
    responses: { 200: { description: 'The import record.', schema: importResultSchema } },
    errors: [400, 404, 409, 413],
    handler: async ({ http, services, scope, query, rawFile, actor, principal }) => {
      const file = exportFile(rawFile, 'ingest');
      if (!http.get('x-file-name')) file.fileName = displayName(query.filename, 'ingest');
      const row = await ingestExport(depsOf(services), scope, file, actor, actorLabel(principal));
      return { ...presentImport(row, scope.zone), remembered: false };
    },
  }),
  defineRoute<GreenhousePath, unknown, unknown, 'greenhouse'>({
    method: 'get',
    path: `${GREENHOUSE}/climate/file-mapping`,
    operationId: 'get_climate_file_mapping',
    summary: "The greenhouse's saved climate-file column choices",
    description: 'Saved by POST {cycle}/climate/file with remember=true; used by ingest and the watched folder. 404 when none are saved.',
    tags: [TAG],
    auth: 'key',
    scope: 'greenhouse',
    params: pathParams(...GREENHOUSE_PARAMS),
    responses: { 200: { description: 'The saved choices.', schema: savedMappingSchema } },
    errors: [404],
    handler: async ({ db, scope }) => presentSavedMapping(await requireMappingRecord(db, scope.id)),
  }),
  defineRoute<GreenhousePath, unknown, unknown, 'greenhouse', true>({
    method: 'delete',
    path: `${GREENHOUSE}/climate/file-mapping`,
    operationId: 'delete_climate_file_mapping',
    summary: "Forget the greenhouse's saved column choices",
    description:
      'Ingest answers 409 and the watched folder records failed imports until choices are saved again. Answers 200 with `deleted: false` when none were saved.',
    tags: [TAG],
    auth: 'key',
    scope: 'greenhouse',
    write: true,
    params: pathParams(...GREENHOUSE_PARAMS),
    responses: {
      200: {
        description: 'Whether choices were forgotten.',
        schema: {
          type: 'object',
          required: ['deleted'],
          additionalProperties: false,
          properties: { deleted: { type: 'boolean' }, mapping: savedMappingSchema },
        },
      },
    },
    errors: [404],
    handler: async ({ w, scope }) => {
      const gone = await forgetMapping(w, scope.id);
      return gone ? { deleted: true, mapping: presentSavedMapping(gone) } : { deleted: false };
    },
  }),
  defineRoute<CyclePath, { limit: number; offset: number }, unknown, 'cycle'>({
    method: 'get',
    path: `${CYCLE}/climate/imports`,
    operationId: 'list_climate_imports',
    summary: "The cycle's climate imports, newest first",
    description: "Every import: uploads, ingests and the watched folder's, done, failed (with the reason) or undone.",
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    params: cycleParams,
    query: { ...pagingQuery(), additionalProperties: false },
    responses: { 200: { description: 'A page of imports.', schema: pageOf(importSchema) } },
    errors: [404],
    handler: async ({ db, scope, query }) => {
      const { rows, total } = await listImports(db, scope.cycle.id, query);
      return { items: rows.map((r) => presentImport(r, scope.zone)), total, limit: query.limit, offset: query.offset };
    },
  }),
  defineRoute<CyclePath & { import_id: string }, unknown, { confirm?: boolean }, 'cycle', true>({
    method: 'post',
    path: `${CYCLE}/climate/imports/{import_id}/undo`,
    operationId: 'undo_climate_import',
    summary: 'Undo an import: remove the readings it added, restore the values it changed',
    description:
      '409 `conflict` with `later_imports` (their ids) and `manual_edits` when later imports or hand edits changed readings this import wrote, unless the body is {"confirm": true}: then those later values go too. 409 when it was undone already or failed. One transaction.',
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    write: true,
    params: pathParams(...CYCLE_PARAMS, 'import_id'),
    body: {
      type: 'object',
      additionalProperties: false,
      properties: {
        confirm: {
          type: 'boolean',
          default: false,
          description: 'Undo even though later imports or hand edits changed the same readings.',
        },
      },
    },
    responses: {
      200: {
        description: 'What the undo did.',
        schema: {
          type: 'object',
          required: ['import', 'removed', 'restored', 'missing', 'overridden'],
          additionalProperties: false,
          properties: {
            import: importSchema,
            removed: { type: 'integer', description: 'Readings the import had added, now removed.' },
            restored: { type: 'integer', description: 'Readings it had changed, back to their previous value and source.' },
            missing: { type: 'integer', description: 'Readings it wrote that were deleted since: nothing to undo there.' },
            overridden: {
              type: 'object',
              required: ['later_imports', 'manual_edits'],
              properties: { later_imports: { type: 'array', items: { type: 'string' } }, manual_edits: { type: 'integer' } },
              description: 'Later changes thrown away with confirm.',
            },
          },
        },
      },
    },
    errors: [404, 409],
    handler: async ({ w, scope, params, body }) => {
      const r = await undoImportOf(w, scope, params.import_id, body.confirm === true);
      return {
        import: presentImport(r.import, scope.zone),
        removed: r.removed,
        restored: r.restored,
        missing: r.missing,
        overridden: r.overridden,
      };
    },
  }),
];
