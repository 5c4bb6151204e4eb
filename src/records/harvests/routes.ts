import { defineRoute, type RouteSpec } from '../../http/route.js';
import { MAX_LIMIT, pageOf, pagingQuery, pathParams, weekSchema } from '../../http/schemas.js';
import { CYCLE, CYCLE_PARAMS } from '../../registry/paths.js';
import type { CyclePath } from '../../registry/scope.js';
import { createHarvestBody, harvestImportSchema, harvestSchema, patchHarvestBody } from './schemas.js';
import {
  createHarvest,
  deleteHarvest,
  importHarvestFile,
  listHarvests,
  updateHarvest,
  type HarvestInput,
  type HarvestPatch,
} from './commands.js';
import { MAX_HARVEST_LINES, MAX_LISTED_ERRORS } from './csv.js';
import { presentHarvest } from './presenters.js';

const TAG = 'Harvests';
const itemParams = pathParams(...CYCLE_PARAMS, 'harvest_id');
const deletedHarvestSchema = {
  type: 'object',
  required: ['deleted', 'harvest_id'],
  additionalProperties: false,
  properties: { deleted: { const: true }, harvest_id: { type: 'string', description: 'The removed harvest.' } },
};

type ItemParams = CyclePath & { harvest_id: string };

/** A season is a few hundred harvests at most, so one default page usually holds all of them. */
const HARVEST_PAGE = MAX_LIMIT;
const paging = pagingQuery();
const harvestQuery = {
  ...paging,
  properties: {
    ...paging.properties,
    limit: { ...paging.properties.limit, default: HARVEST_PAGE, description: `Page size, 1 to ${MAX_LIMIT} (default ${HARVEST_PAGE}).` },
    week: {
      ...weekSchema,
      description: `Only the harvests of this week: ${(weekSchema.description as string).replace(/^ISO 8601 week: /, '')}`,
    },
  },
};

export const harvestRoutes: RouteSpec[] = [
  defineRoute<CyclePath, unknown, HarvestInput, 'cycle', true>({
    method: 'post',
    path: `${CYCLE}/harvests`,
    operationId: 'create_harvest',
    summary: 'Record a harvest',
    description:
      'One harvest of the crop cycle: kilograms picked, the ISO week it counts for (label or any date of it; answered as a label), an optional note and optional local harvest date. 422 when neither `week` nor `harvested_on` is sent, or when `harvested_on` is outside `week`.',
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    write: true,
    params: pathParams(...CYCLE_PARAMS),
    body: createHarvestBody,
    responses: { 201: { description: 'The stored harvest.', schema: harvestSchema } },
    errors: [404],
    handler: async ({ w, scope, body }) => presentHarvest(await createHarvest(w, scope, body)),
  }),
  defineRoute<CyclePath, { week?: string; limit: number; offset: number }, unknown, 'cycle'>({
    method: 'get',
    path: `${CYCLE}/harvests`,
    operationId: 'list_harvests',
    summary: 'List the harvests of a crop cycle',
    description: `Ordered by week, then by when they were recorded. Paged: \`limit\` (default ${HARVEST_PAGE}, at most ${MAX_LIMIT}; above is a 422) and \`offset\` (default 0); \`total\` counts every harvest that matches.`,
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    params: pathParams(...CYCLE_PARAMS),
    query: harvestQuery,
    responses: { 200: { description: 'Harvests by week, then creation.', schema: pageOf(harvestSchema) } },
    errors: [404],
    handler: async ({ db, scope, query }) => {
      const page = await listHarvests(db, scope, query);
      return { ...page, items: page.items.map(presentHarvest) };
    },
  }),
  defineRoute<ItemParams, unknown, HarvestPatch, 'cycle', true>({
    method: 'patch',
    path: `${CYCLE}/harvests/{harvest_id}`,
    operationId: 'update_harvest',
    summary: 'Change a harvest',
    description:
      'Fields left out keep their value; `note` or `harvested_on` sent as null is cleared. The changed harvest must keep `harvested_on` inside `week` (422 otherwise, harvest unchanged). The backtest reads harvests live and follows the edit.',
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    write: true,
    params: itemParams,
    body: patchHarvestBody,
    responses: { 200: { description: 'The changed harvest.', schema: harvestSchema } },
    errors: [404],
    handler: async ({ w, scope, params, body }) => presentHarvest(await updateHarvest(w, scope, params.harvest_id, body)),
  }),
  defineRoute<ItemParams, unknown, unknown, 'cycle', true>({
    method: 'delete',
    path: `${CYCLE}/harvests/{harvest_id}`,
    operationId: 'delete_harvest',
    summary: 'Delete a harvest',
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    write: true,
    params: itemParams,
    responses: { 200: { description: 'Deleted.', schema: deletedHarvestSchema } },
    errors: [404],
    handler: async ({ w, scope, params }) => {
      await deleteHarvest(w, scope, params.harvest_id);
      return { deleted: true, harvest_id: params.harvest_id };
    },
  }),
  defineRoute<CyclePath, unknown, unknown, 'cycle', true>({
    method: 'post',
    path: `${CYCLE}/harvests/csv`,
    operationId: 'import_harvests_csv',
    summary: 'Import harvests from a CSV file',
    description: [
      'multipart/form-data with the file in field `file`. The first line is a header naming the columns `week` and `kg`, and optionally `note`, in any order (names are case-insensitive; any other column is a 422). Each further line is one harvest: `week` as a label (2026-W07) or a date of the week, `kg` in kilograms (0 to 1,000,000), `note` at most 500 characters.',
      'Accepted as spreadsheets write it: UTF-8 with or without a BOM, LF or CRLF line ends, quoted fields (a note with commas, a doubled quote "" inside quotes), `;` as delimiter with decimal commas (12,5), tab-separated; blank lines are ignored.',
      `All or nothing: when any line is bad the answer is 422 with one \`errors\` entry per bad line (name "line N", N the line number in the file, header = line 1; at most ${MAX_LISTED_ERRORS} listed, \`bad_lines\` has the total) and nothing is stored. A file that is not UTF-8 text, has no harvest lines, or more than ${MAX_HARVEST_LINES} lines is a 422. Above the size cap (5 MiB by default, setting HARVEST_UPLOAD_LIMIT) the upload is stopped while streaming with 413.`,
    ].join('\n\n'),
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    write: true,
    params: pathParams(...CYCLE_PARAMS),
    multipart: {
      fields: { type: 'object', properties: {}, additionalProperties: false },
      files: [{ name: 'file', maxCount: 1, required: true, description: 'The CSV file (UTF-8), header week,kg[,note].' }],
      limitBytes: (ctx) => ctx.services.config.harvestUploadLimit,
    },
    responses: { 201: { description: 'Every line stored, in file order.', schema: harvestImportSchema } },
    errors: [404],
    handler: async ({ w, scope, files }) => {
      const rows = await importHarvestFile(w, scope, files[0]!.path);
      return { items: rows.map(presentHarvest), count: rows.length };
    },
  }),
];
