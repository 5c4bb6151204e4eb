import { defineRoute, type RouteSpec } from '../../http/route.js';
import { ORG } from '../../registry/paths.js';
import type { Db } from '../../db/database.js';
import { walkZone } from '../jobs/commands.js';
import {
  addCorrection,
  changeCorrection,
  undoCorrection,
  walkCorrections,
  MAX_CORRECTIONS_PER_WALK,
  type CorrectionInput,
  type CorrectionPatch,
  type CorrectionWritten,
} from './commands.js';
import { presentCorrection, presentWalkCorrections, walkCounts } from './presenters.js';
import {
  correctionAnswerSchema,
  correctionPathParams,
  createCorrectionBody,
  patchCorrectionBody,
  undoneSchema,
  walkCorrectionsSchema,
  walkPathParams,
} from './schemas.js';

const TAG = 'Walk corrections';
const WALK = `${ORG}/walks/{walk_id}`;

type WalkParams = { organization_id: string; walk_id: string };
type CorrectionParams = WalkParams & { correction_id: string };

/** A created or changed correction, with what it did to the walk's counts. */
const presentWritten = async (db: Db, { correction, walk }: CorrectionWritten) => ({
  ...presentCorrection(correction, await walkZone(db, walk)),
  ...walkCounts(walk),
});

const refusedWhileScoring =
  'A walk still queued or being scored, or one that failed, is a 409 (code conflict, with job_id and walk_status): it has no fruit to correct yet.';

export const correctionRoutes: RouteSpec[] = [
  defineRoute<WalkParams, unknown, unknown, 'walk'>({
    method: 'get',
    path: `${WALK}/corrections`,
    operationId: 'list_walk_corrections',
    summary: "A walk's corrections, its fruit after them, the weeks it is saved to, and its model and corrected counts",
    description:
      "walk_id is the walk's job_id. Any key of the organization; another organization's walk is a 404. A walk not yet done answers its status with no fruit and null counts.",
    tags: [TAG],
    auth: 'key',
    scope: 'walk',
    params: walkPathParams,
    responses: { 200: { description: "The walk's corrections and what they make of it.", schema: walkCorrectionsSchema } },
    errors: [404],
    handler: async ({ db, scope }) => {
      const { rows, corrected, zone } = await walkCorrections(db, scope);
      return presentWalkCorrections(scope, rows, corrected, zone);
    },
  }),
  defineRoute<WalkParams, unknown, CorrectionInput, 'walk', true>({
    method: 'post',
    path: `${WALK}/corrections`,
    operationId: 'create_walk_correction',
    summary: "Correct a walk: a fruit's ripeness, a fruit removed or added, or counts made by hand",
    description:
      "The walk's counts (the model counts) stay as scored; corrected_counts follow every correction, on the walk and in {cycle}/walks too. " +
      `A fruit takes one correction, a ripeness or a removal, and a walk one counts correction: a second naming the same track_id, whatever its kind, is a 409 (code conflict) whose correction_ids and detail name the first, the one to change (PATCH) or undo (DELETE). ${refusedWhileScoring} ` +
      `At most ${MAX_CORRECTIONS_PER_WALK} corrections per walk (409 beyond). A walk that has corrections is not scored again (POST /api/observations/{id}/rescore answers 409 with their ids): the fruit would be numbered anew. The change log has every correction.`,
    tags: [TAG],
    auth: 'key',
    scope: 'walk',
    write: true,
    params: walkPathParams,
    body: createCorrectionBody,
    responses: { 201: { description: "The correction, with the walk's model and corrected counts.", schema: correctionAnswerSchema } },
    errors: [404, 409],
    handler: async ({ w, scope, body }) => presentWritten(w.trx, await addCorrection(w, scope, body)),
  }),
  defineRoute<CorrectionParams, unknown, CorrectionPatch, 'walk', true>({
    method: 'patch',
    path: `${WALK}/corrections/{correction_id}`,
    operationId: 'update_walk_correction',
    summary: "Change a correction's ripeness, box, counts or note",
    description: `Kind and fruit do not change: kind, track_id or frame_id in the body is a 422 (undo the correction and make another). A field the kind does not take (box on a ripeness correction, say) is a 422. ${refusedWhileScoring} A correction of another walk is a 404.`,
    tags: [TAG],
    auth: 'key',
    scope: 'walk',
    write: true,
    params: correctionPathParams,
    body: patchCorrectionBody,
    responses: {
      200: { description: "The changed correction, with the walk's model and corrected counts.", schema: correctionAnswerSchema },
    },
    errors: [404, 409],
    handler: async ({ w, scope, params, body }) => presentWritten(w.trx, await changeCorrection(w, scope, params.correction_id, body)),
  }),
  defineRoute<CorrectionParams, unknown, unknown, 'walk', true>({
    method: 'delete',
    path: `${WALK}/corrections/{correction_id}`,
    operationId: 'delete_walk_correction',
    summary: 'Undo a correction',
    description: `The fruit or counts are as they were without it. ${refusedWhileScoring} A correction of another walk is a 404.`,
    tags: [TAG],
    auth: 'key',
    scope: 'walk',
    write: true,
    params: correctionPathParams,
    responses: { 200: { description: "Undone, with the walk's model and corrected counts.", schema: undoneSchema } },
    errors: [404, 409],
    handler: async ({ w, scope, params }) => ({
      deleted: true as const,
      correction_id: params.correction_id,
      ...walkCounts(await undoCorrection(w, scope, params.correction_id)),
    }),
  }),
];
