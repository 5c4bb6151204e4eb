import { defineRoute, type RouteSpec } from '../../http/route.js';
import { pathParams } from '../../http/schemas.js';
import { trainingQuery } from './schemas.js';
import { ORG } from '../../registry/paths.js';
import { TRAINING_CLASSES, trainingExport } from './queries.js';
import { trainingZip } from './presenters.js';

type Params = { organization_id: string };
type Query = { greenhouse_id?: string; from?: string; to?: string };

export const trainingRoutes: RouteSpec[] = [
  defineRoute<Params, Query, unknown, 'organization'>({
    method: 'get',
    path: `${ORG}/training-data`,
    operationId: 'export_training_data',
    summary: 'The frames of reviewed walks, labelled as corrected, as a YOLO dataset (zip) to train the detector on',
    description:
      'Staff corrections are labels. Every frame of every walk of the organization that has corrections (and is scored, with its frames still kept) is exported with ' +
      "the fruit boxes as corrected: the detector's boxes of counted fruit kept with their corrected ripeness, removed fruit dropped, fruit added with a box on the frame added. " +
      'Detections that never became a counted fruit are not labels; a frame where a fruit was added without a box is left out (index.json says so). ' +
      `The zip holds images/<walk>-<frame>.jpg (the frames as stored), labels/<walk>-<frame>.txt (YOLO: class cx cy w h, normalised to the image), classes.txt (${TRAINING_CLASSES.join(', ')}, in class order) ` +
      'and index.json (the filter, each walk with its greenhouse, cycle, week and the detector and model that scored it, each image with its walk, frame, clip, time and boxes, and the walks and frames left out with why). ' +
      'training/ fine-tunes the shipped model on it (training/README.md). Admin keys only.',
    tags: ['Walk corrections'],
    auth: 'admin',
    scope: 'organization',
    params: pathParams('organization_id'),
    query: trainingQuery,
    responses: {
      200: {
        description:
          'The dataset as a zip (application/zip), named in Content-Disposition. No reviewed walk in the filter gives a zip with classes.txt and index.json only.',
        contentType: 'application/zip',
        headers: {
          'Content-Disposition': { description: 'attachment; filename="cropwalk-training-<date>.zip"', schema: { type: 'string' } },
        },
      },
    },
    errors: [404],
    // A zip streamed: this route sets Koa's body itself.
    handler: async ({ http: ctx, services, db, scope, query }) => {
      const dataset = await trainingExport(db, services.config.dataDir, scope.id, query);
      const createdAt = services.clock.iso();
      ctx.status = 200;
      ctx.type = 'application/zip';
      ctx.set('Content-Disposition', `attachment; filename="cropwalk-training-${createdAt.slice(0, 10)}.zip"`);
      ctx.set('Cache-Control', 'no-store');
      ctx.body = trainingZip(dataset, { organization_id: scope.id, created_at: createdAt });
      return undefined;
    },
  }),
];
