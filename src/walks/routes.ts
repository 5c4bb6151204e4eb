import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import type { Context } from 'koa';
import type { Db } from '../db/database.js';
import type { Actor } from '../db/store.js';
import type { Principal } from '../auth/principal.js';
import type { Services } from '../services.js';
import { defineRoute, JsonText, type JsonSchema, type ObjectSchema, type RouteCall, type RouteSpec } from '../http/route.js';
import { idSchema, listOf, pageOf, pagingQuery, pathParams, weekSchema } from '../http/schemas.js';
import { CYCLE, CYCLE_PARAMS } from '../registry/paths.js';
import { type CyclePath } from '../registry/scope.js';
import { parseWeek, WEEK_FORMS } from '../time/weeks.js';
import { Invalid } from '../errors.js';
import { clipsOf, frameFile, listCycleWalks, moveWalkToWeek, removeWalk, walkZone, type RescoreFields } from './jobs/commands.js';
import { queueRescore } from './jobs/rescore.js';
import { DEFAULT_CONF, DEFAULT_FAST_SAMPLE_SECONDS, DEFAULT_OPTIONS, LIMITS, MODE_TEXT, SCORING_MODES } from './jobs/options.js';
import { presentWalk, presentWalkSummary, walkSchema, walkSummarySchema } from './jobs/presenters.js';
import { runnerOf } from './jobs/runner.js';
import { FRAME_NAMES } from './jobs/storage.js';
import { submitWalk, type ScoringFields, type SubmitInput, type Submitter } from './jobs/submit.js';
import type { WalkTable } from './jobs/tables.js';
import { exampleFile, loadExamples } from './examples/catalogue.js';

const TAG = 'Scoring';

const modeDescription = `What scores the walk. ${SCORING_MODES.map((m) => `\`${m}\`: ${MODE_TEXT[m]}`).join('; ')}. Default auto.`;

const optionFields: Record<string, JsonSchema> = {
  mode: { enum: [...SCORING_MODES], default: 'auto', description: modeDescription },
  conf: {
    type: 'number',
    minimum: LIMITS.conf.min,
    maximum: LIMITS.conf.max,
    description: `Detection threshold, ${LIMITS.conf.min} to ${LIMITS.conf.max}: in a photo, detections scoring below it are not counted; in a video, only detections from it up start a fruit's track (the track then keeps following it in frames where it scores at least conf ÷ 3). Default by what is uploaded: ${DEFAULT_CONF.photo} for photos, ${DEFAULT_CONF.video} when any upload is a video clip (a fruit in a video is seen several times, so a stricter start keeps a stray second circle from becoming a fruit).`,
  },
  sample_seconds: {
    type: 'number',
    minimum: LIMITS.sample_seconds.min,
    maximum: LIMITS.sample_seconds.max,
    'x-unit': 's',
    description: `Seconds between sampled frames of a video, ${LIMITS.sample_seconds.min} to ${LIMITS.sample_seconds.max}. Not given: adaptive, every ${DEFAULT_OPTIONS.sample_seconds} s, and every ${DEFAULT_FAST_SAMPLE_SECONDS} s while the camera crosses more than a sixth of the frame per ${DEFAULT_OPTIONS.sample_seconds} s (a fast walker: each fruit is then still seen six times or more). Given: exactly every sample_seconds.`,
  },
  max_frames: {
    type: 'integer',
    minimum: LIMITS.max_frames.min,
    maximum: LIMITS.max_frames.max,
    description: `Most frames sampled from each clip at sample_seconds, ${LIMITS.max_frames.min} to ${LIMITS.max_frames.max}: a clip is read for at most max_frames × sample_seconds; adaptive sampling may score up to twice as many frames in that stretch. Default ${DEFAULT_OPTIONS.max_frames}.`,
  },
  mm_per_pixel: {
    type: 'number',
    exclusiveMinimum: 0,
    maximum: 1000,
    'x-unit': 'mm/px',
    description:
      "Millimetres per pixel of the clip as filmed, at the fruit's distance (e.g. 1.5), greater than 0, at most 1000. With it every fruit gets diameter_mm; without it diameters are null.",
  },
};

const optionsSchema: ObjectSchema = { type: 'object', additionalProperties: false, properties: optionFields };
const cycleFieldsSchema: ObjectSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['week'],
  properties: {
    ...optionFields,
    week: { ...weekSchema, description: `The week the walk is saved to: ${WEEK_FORMS}. Answered as a label.` },
  },
};

const idempotencyHeaders: ObjectSchema = {
  type: 'object',
  properties: {
    'idempotency-key': {
      type: 'string',
      minLength: 1,
      maxLength: LIMITS.idempotencyKey,
      description: `Up to ${LIMITS.idempotencyKey} characters, chosen by the client (e.g. a UUID per recording). A retry with the same key and the same upload (same bytes and fields) answers the walk made the first time, with the same job_id; the same key with a different upload is a 409. Keys are per organization.`,
    },
  },
};

const uploadLimit = (ctx: Context) => ctx.services.config.videoUploadLimit;
const uploadErrors = `A file that is not a photo (JPEG, PNG, WebP, HEIC) or video (MP4, MOV, MKV, WebM, AVI) by its content gets 415; one above the size cap (VIDEO_UPLOAD_LIMIT, default 2 GiB) gets 413 while it streams. A clip that looks right but does not decode ends as a failed walk with the reason in \`error\`. A photo's embedded colour profile (Display P3, as iPhones store photos; Adobe RGB) is applied: the picture is converted to sRGB before ripeness is read.`;

const walkIdParams: ObjectSchema = { type: 'object', required: ['id'], properties: { id: idSchema('The job id (job_id).') } };

const walkResponse = (status: number, what: string) => ({
  [status]: {
    description: `${what} The walk (job) as stored now: poll GET /api/observations/{job_id} until status is done or failed.`,
    schema: walkSchema,
    headers: { Location: { description: 'Where to poll the walk: /api/observations/{job_id}.', schema: { type: 'string' } } },
  },
});

/** A walk as answered: with its clips, its keep settings and its greenhouse's zone. */
async function present(services: Services, db: Db, walk: WalkTable) {
  const { walkClipKeepDays: clips, walkFrameKeepDays: frames } = services.config;
  return presentWalk(walk, await clipsOf(db, walk.id), { clips, frames }, await walkZone(db, walk));
}

/** An accepted walk: HTTP's way of saying where to poll (RFC 9110, 201 and 202), beside the job_id in the body. */
function presentAccepted(call: RouteCall, walk: WalkTable) {
  call.reply.headers.Location = `/api/observations/${walk.id}`;
  return present(call.services, call.db, walk);
}

/** The upload's owner: the key's organization (a walk belongs to it) and the key, for the change log. */
function submitterOf(principal: Principal | undefined, actor: Actor): Submitter {
  if (principal?.kind !== 'key') throw new Error('scoring routes need an organization key');
  return { organizationId: principal.organizationId, keyId: principal.keyId, actor };
}

function weekOf(fields: ScoringFields): string {
  const week = parseWeek(fields.week ?? '');
  if (!week) throw Invalid.field('week', `must be ${WEEK_FORMS}`, 'body');
  return week.label;
}

const accept = (call: RouteCall, input: SubmitInput) =>
  submitWalk(call.services, submitterOf(call.principal, call.actor), runnerOf(call.services), input);

export const scoringRoutes: RouteSpec[] = [
  defineRoute<unknown, unknown, ScoringFields>({
    method: 'post',
    path: '/api/observations',
    operationId: 'create_observation',
    summary: 'Upload a photo or clip to be scored (answers at once with the job)',
    description: `Multipart upload of one photo or video clip (field \`file\`) with optional scoring options. Answers 202 Accepted at once with the queued job; scoring runs in the background, one walk at a time by default. The walk belongs to the key's organization and to no crop cycle (use {cycle}/videos to save a walk to a crop cycle and week). ${uploadErrors}`,
    tags: [TAG],
    auth: 'key',
    headers: idempotencyHeaders,
    multipart: {
      fields: optionsSchema,
      files: [{ name: 'file', maxCount: 1, required: true, description: 'The photo or clip.' }],
      limitBytes: uploadLimit,
    },
    responses: walkResponse(202, 'Accepted and queued (or, with a repeated Idempotency-Key, the walk made the first time).'),
    errors: [409, 413, 415, 503],
    handler: async (call) => {
      const { body, files, headers } = call;
      const walk = await accept(call, {
        operation: 'observation',
        source: 'observation',
        scope: null,
        fields: body,
        files,
        labels: ['file'],
        idempotencyKey: headers['idempotency-key'] as string | undefined,
      });
      return presentAccepted(call, walk);
    },
  }),
  defineRoute<{ id: string }, unknown, unknown, 'walk'>({
    method: 'get',
    path: '/api/observations/{id}',
    operationId: 'get_observation',
    summary: 'A walk (scoring job): status, progress, per-clip progress and, when done, the result',
    description:
      "Status is queued, running, done or failed; progress goes from 0 to 1. When done, `result` holds every scored frame (with image and overlay URLs and quality), each fruit counted once (track id, ripeness, votes, best box, diameter), stems and plants, the walk's quality warnings and the counts by ripeness. A walk of another organization is a 404.",
    tags: [TAG],
    auth: 'key',
    scope: 'walk',
    params: walkIdParams,
    responses: {
      200: {
        description: 'The walk.',
        schema: walkSchema,
        headers: {
          ETag: {
            description:
              "Changes whenever the answer does (progress included); send it back as If-None-Match for a 304 without the body: a done walk's result runs to a megabyte for a long row.",
            schema: { type: 'string' },
          },
        },
      },
    },
    errors: [404],
    handler: async ({ services, db, scope }) => {
      // The answer's own hash: the version alone misses progress ticks and the keep settings.
      const text = JSON.stringify(await present(services, db, scope));
      return new JsonText(text, `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"`);
    },
  }),
  defineRoute<{ id: string }, unknown, { week: string }, 'walk', true>({
    method: 'patch',
    path: '/api/observations/{id}',
    operationId: 'move_observation',
    summary: 'Move a crop-cycle walk to another week',
    description: `For a walk saved to the wrong week: \`week\` (${WEEK_FORMS}) is the only field; the walk keeps its counts, result and files, and the change log has the move. A walk that is in no crop cycle (POST /api/observations, an example) has no week: 422. Any key of the organization; a walk of another organization is a 404.`,
    tags: [TAG],
    auth: 'key',
    scope: 'walk',
    write: true,
    params: walkIdParams,
    body: {
      type: 'object',
      required: ['week'],
      additionalProperties: false,
      properties: { week: { ...weekSchema, description: `The week the walk belongs to: ${WEEK_FORMS}. Answered as a label.` } },
    },
    responses: { 200: { description: 'The walk, in its new week.', schema: walkSchema } },
    errors: [404],
    handler: async ({ services, w, scope, body }) => present(services, w.trx, await moveWalkToWeek(w, scope, body.week)),
  }),
  defineRoute<{ id: string }, unknown, RescoreFields, 'walk'>({
    method: 'post',
    path: '/api/observations/{id}/rescore',
    operationId: 'rescore_observation',
    summary: 'Score a finished walk again from its kept clips, with other options',
    description:
      'For a walk whose clip was cut short (warning clip_cut_short: send a larger max_frames), or to score it with a model installed since (mode model), a threshold or sampling of its own, or mm_per_pixel. ' +
      "The optional JSON body takes the scoring options of an upload; those left out keep the walk's (a given sample_seconds is exact, as at upload). " +
      'Answers 202 with the walk queued again under the same job_id: its result and counts are cleared until it is done, its clips are not uploaded again, its week and crop cycle stay. ' +
      "A walk still queued or being scored is a 409 (code conflict, with its job_id and walk_status, queued or running), and so is one whose clips were removed (past WALK_CLIP_KEEP_DAYS, or for room under DISK_RESERVE; code clips_removed), and one with staff corrections (code conflict, with their correction_ids: a new scoring numbers the fruit anew, so undo them first); mode photo or video against what the walk holds, or mode model with no usable model, is a 422; another organization's walk is a 404.",
    tags: [TAG],
    auth: 'key',
    scope: 'walk',
    params: walkIdParams,
    body: optionsSchema,
    responses: walkResponse(202, 'Queued again.'),
    errors: [404, 409],
    // Not `write`: scoring again removes the old frames under the media lock around its own transaction.
    handler: async (call) => presentAccepted(call, await queueRescore(call.services, call.actor, call.scope, call.body ?? {})),
  }),
  defineRoute<{ id: string }, unknown, unknown, 'walk', true>({
    method: 'delete',
    path: '/api/observations/{id}',
    operationId: 'delete_observation',
    summary: 'Delete a walk with its clips, frames and result',
    description:
      "For a walk uploaded by mistake (the wrong row, week or file), or to free the disk: the walk leaves its crop cycle's walks and weeks, " +
      'its clips and frames are removed from the disk, and a walk being scored is stopped first. Any key of the organization may delete; ' +
      'a walk of another organization is a 404. The Idempotency-Key it was made with makes a new walk afterwards.',
    tags: [TAG],
    auth: 'key',
    scope: 'walk',
    write: true,
    params: walkIdParams,
    responses: {
      200: {
        description: 'Deleted.',
        schema: {
          type: 'object',
          required: ['deleted', 'job_id'],
          additionalProperties: false,
          properties: { deleted: { type: 'boolean', const: true }, job_id: { type: 'string' } },
        },
      },
    },
    errors: [404],
    handler: async ({ services, w, scope }) => {
      await removeWalk(w, services, scope.id);
      return { deleted: true, job_id: scope.id };
    },
  }),
  defineRoute<{ id: string; frame: number; name: string }, unknown, unknown, 'walk'>({
    method: 'get',
    path: '/api/observations/{id}/frames/{frame}/{name}',
    operationId: 'get_observation_frame',
    summary: 'One scored frame of a walk as JPEG: the image, or the overlay with boxes and track ids',
    description:
      "Frames are numbered across the whole walk as in result.frames[].index. The overlay outlines fruit by ripeness (green, orange for turning, red), stems in blue and plants in purple, with the track id above each counted fruit. Only frames of a walk of the key's organization are served. Frames are kept WALK_FRAME_KEEP_DAYS after the walk is scored (default: for ever; the walk's media.frames says until when); once removed (or taken for room under DISK_RESERVE) they answer 410 frames_removed.",
    tags: [TAG],
    auth: 'key',
    scope: 'walk',
    params: {
      type: 'object',
      required: ['id', 'frame', 'name'],
      properties: {
        id: idSchema('The job id.'),
        frame: { type: 'integer', minimum: 0, maximum: 99999, description: 'Walk-wide frame number (result.frames[].index).' },
        name: { enum: [...FRAME_NAMES], description: 'image.jpg: the frame as scored; overlay.jpg: with boxes and track ids.' },
      },
    },
    responses: { 200: { description: 'The JPEG.', contentType: 'image/jpeg' } },
    errors: [404, 410],
    // A file streamed: this route sets Koa's body itself.
    handler: async ({ http: ctx, services, scope, params }) => {
      const { file, size } = await frameFile(services.config.dataDir, scope, params.frame, params.name);
      ctx.status = 200;
      ctx.type = 'image/jpeg';
      ctx.length = size;
      ctx.set('Cache-Control', 'private, max-age=3600');
      ctx.body = createReadStream(file);
      return undefined;
    },
  }),
  defineRoute<CyclePath, unknown, ScoringFields, 'cycle'>({
    method: 'post',
    path: `${CYCLE}/videos`,
    operationId: 'create_cycle_video',
    summary: 'Upload one clip or photo of a walk, saved to the crop cycle and a week, and score it',
    description: `Multipart: \`file\` (one clip or photo), \`week\` (required: ${WEEK_FORMS}) and the scoring options of POST /api/observations. Answers 201 with the queued walk (job_id), linked to this crop cycle and week. With an Idempotency-Key header a retry answers the same walk (201 again) instead of making a second one. ${uploadErrors}`,
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    params: pathParams(...CYCLE_PARAMS),
    headers: idempotencyHeaders,
    multipart: {
      fields: cycleFieldsSchema,
      files: [{ name: 'file', maxCount: 1, required: true, description: 'The clip or photo.' }],
      limitBytes: uploadLimit,
    },
    responses: walkResponse(201, 'The walk, saved to the crop cycle and week.'),
    errors: [404, 409, 413, 415, 503],
    // Not `write`: each upload is checked (ffprobe) and moved before the walk's transaction.
    handler: async (call) => {
      const { scope, body, files, headers } = call;
      const walk = await accept(call, {
        operation: 'cycle_video',
        source: 'cycle_video',
        scope: { ...scope, week: weekOf(body) },
        fields: body,
        files,
        labels: ['file'],
        idempotencyKey: headers['idempotency-key'] as string | undefined,
      });
      return presentAccepted(call, walk);
    },
  }),
  defineRoute<CyclePath, unknown, ScoringFields, 'cycle'>({
    method: 'post',
    path: `${CYCLE}/videos/batch`,
    operationId: 'create_cycle_video_batch',
    summary: `Upload up to ${LIMITS.batchClips} clips of one walk, in walking order, scored and counted as one walk`,
    description: `Multipart: repeated \`files\` fields (1 to ${LIMITS.batchClips}, in the order they were walked), \`week\` (required) and the scoring options. The clips are scored as one walk: a fruit filmed at the end of one clip and the start of the next is counted once. The job's \`clips\` shows progress per clip. More than ${LIMITS.batchClips} files, or none, is a 422. Idempotency-Key as for {cycle}/videos. ${uploadErrors}`,
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    params: pathParams(...CYCLE_PARAMS),
    headers: idempotencyHeaders,
    multipart: {
      fields: cycleFieldsSchema,
      files: [
        {
          name: 'files',
          maxCount: LIMITS.batchClips,
          required: true,
          description: `The clips, 1 to ${LIMITS.batchClips}, in walking order.`,
        },
      ],
      limitBytes: uploadLimit,
    },
    responses: walkResponse(201, 'The walk, saved to the crop cycle and week.'),
    errors: [404, 409, 413, 415, 503],
    handler: async (call) => {
      const { scope, body, files, headers } = call;
      const walk = await accept(call, {
        operation: 'cycle_batch',
        source: 'cycle_batch',
        scope: { ...scope, week: weekOf(body) },
        fields: body,
        files,
        labels: files.map((_, i) => `files[${i}]`),
        idempotencyKey: headers['idempotency-key'] as string | undefined,
      });
      return presentAccepted(call, walk);
    },
  }),
  defineRoute<CyclePath, { week?: string; limit: number; offset: number }, unknown, 'cycle'>({
    method: 'get',
    path: `${CYCLE}/walks`,
    operationId: 'list_cycle_walks',
    summary: 'Walks saved to the crop cycle, newest first (without results)',
    description: `Every walk uploaded to {cycle}/videos or {cycle}/videos/batch, with status, week and counts. Filter by \`week\` (${WEEK_FORMS}); fetch GET /api/observations/{job_id} for a walk's frames and fruit.`,
    tags: [TAG],
    auth: 'key',
    scope: 'cycle',
    params: pathParams(...CYCLE_PARAMS),
    query: pagingQuery({ week: { ...weekSchema, description: `Only walks saved to this week: ${WEEK_FORMS}.` } }),
    responses: { 200: { description: 'A page of walks.', schema: pageOf(walkSummarySchema) } },
    errors: [404],
    handler: async ({ db, scope, query }) => {
      const { rows, total } = await listCycleWalks(db, scope, query);
      return { items: rows.map((r) => presentWalkSummary(r, r.clip_count, scope.zone)), total, limit: query.limit, offset: query.offset };
    },
  }),
  defineRoute({
    method: 'get',
    path: '/api/examples',
    operationId: 'list_examples',
    summary: 'Example photos shipped with the box, to try scoring',
    description:
      'Synthetic photos of a tomato row rendered by the project, with what is in them. POST /api/examples/{key} scores one like an upload.',
    tags: [TAG],
    auth: 'key',
    responses: {
      200: {
        description: 'The examples.',
        schema: listOf({
          type: 'object',
          required: ['key', 'title', 'description', 'width', 'height', 'mm_per_pixel', 'truth', 'image_url'],
          additionalProperties: false,
          properties: {
            key: { type: 'string' },
            title: { type: 'string' },
            description: { type: 'string' },
            width: { type: 'integer', description: 'Pixels.' },
            height: { type: 'integer', description: 'Pixels.' },
            mm_per_pixel: {
              type: 'number',
              'x-unit': 'mm/px',
              description: 'Scale of the photo (known, since it is rendered); sent as mm_per_pixel when it is scored.',
            },
            truth: {
              type: 'object',
              description:
                'What the renderer put in view (fruit at least half visible) by ripeness, and stems and plants: what a perfect scorer would count.',
              required: ['green', 'turning', 'red', 'total', 'stems', 'plants'],
              properties: {
                green: { type: 'integer' },
                turning: { type: 'integer' },
                red: { type: 'integer' },
                total: { type: 'integer' },
                stems: { type: 'integer' },
                plants: { type: 'integer' },
              },
            },
            image_url: { type: 'string', description: 'The photo (JPEG).' },
          },
        }),
      },
    },
    handler: async () => ({
      items: loadExamples().map((e) => ({
        key: e.key,
        title: e.title,
        description: e.description,
        width: e.width,
        height: e.height,
        mm_per_pixel: e.mm_per_pixel,
        truth: e.truth,
        image_url: `/api/examples/${e.key}/image.jpg`,
      })),
    }),
  }),
  defineRoute<{ key: string }>({
    method: 'get',
    path: '/api/examples/{key}/image.jpg',
    operationId: 'get_example_image',
    summary: 'An example photo (JPEG)',
    tags: [TAG],
    auth: 'key',
    params: {
      type: 'object',
      required: ['key'],
      properties: { key: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,63}$', description: 'Example key from GET /api/examples.' } },
    },
    responses: { 200: { description: 'The photo.', contentType: 'image/jpeg' } },
    errors: [404],
    // A file streamed: this route sets Koa's body itself.
    handler: async ({ http: ctx, params }) => {
      const { file, size } = await exampleFile(params.key);
      ctx.status = 200;
      ctx.type = 'image/jpeg';
      ctx.length = size;
      ctx.body = createReadStream(file);
      return undefined;
    },
  }),
  defineRoute<{ key: string }, unknown, ScoringFields>({
    method: 'post',
    path: '/api/examples/{key}',
    operationId: 'score_example',
    summary: 'Score an example photo (answers at once with the job, like an upload)',
    description:
      "Queues the example photo as a walk of the key's organization, exactly as if it had been uploaded to POST /api/observations; its known mm_per_pixel is used unless the body gives one. The optional JSON body takes the same scoring options. Unknown key: 404.",
    tags: [TAG],
    auth: 'key',
    params: {
      type: 'object',
      required: ['key'],
      properties: { key: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{0,63}$', description: 'Example key from GET /api/examples.' } },
    },
    body: optionsSchema,
    responses: walkResponse(202, 'Accepted and queued.'),
    errors: [404, 503],
    handler: async (call) => {
      const { params, body } = call;
      const { example, file, size } = await exampleFile(params.key);
      const walk = await accept(call, {
        operation: 'example',
        source: 'example',
        scope: null,
        fields: { mm_per_pixel: example.mm_per_pixel, ...body },
        files: [{ fieldname: 'file', originalname: example.file, path: file, size, mimetype: 'image/jpeg' }],
        labels: ['example'],
        idempotencyKey: undefined,
        exampleKey: example.key,
        copy: true,
      });
      return presentAccepted(call, walk);
    },
  }),
];
