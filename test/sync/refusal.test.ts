// A refused change tells the status and code the API answers for the same write: the sync
// domain's mapping (src/sync/refusal.ts) and the HTTP layer's (src/http/problem.ts) agree for
// every domain error, and an error that is not about the change is no refusal at all.
import t from 'tap';
import {
  Busy,
  Conflict,
  Forbidden,
  Gone,
  Invalid,
  NotFound,
  Refused,
  StorageFull,
  TooLarge,
  Unavailable,
  UnsupportedMedia,
  UpstreamFailed,
} from '../../src/errors.js';
import { problemOf } from '../../src/http/problem.js';
import { notHeld, refusalOf } from '../../src/sync/refusal.js';

t.test('refusals carry the status and code the API answers', async (t) => {
  const refusals = [
    Invalid.field('kg', 'must be >= 0'),
    new Invalid([], 'no fields', 'unknown_kind'),
    new NotFound('harvest'),
    notHeld('The crop cycle x is not held here.'),
    new Conflict('a second correction', { correction_ids: ['a'] }),
    new Gone('frames removed', 'frames_removed'),
    new TooLarge(100),
    new UnsupportedMedia('gzip only'),
    new Refused('request_aborted', 'cut'),
    new Forbidden('another organization'),
  ];
  for (const err of refusals) {
    const r = refusalOf(err)!;
    const p = problemOf(err)!;
    t.equal(r.status, p.status, `${err.constructor.name} ${err.code}: status ${p.status}`);
    t.equal(r.code, p.code, `${err.constructor.name}: code`);
    t.equal(r.detail, p.message, `${err.constructor.name}: detail`);
  }
  t.same(
    refusalOf(Invalid.field('kg', 'must be >= 0'))!.errors,
    [{ in: 'body', name: 'kg', message: 'must be >= 0' }],
    'the fields at fault',
  );
  for (const err of [
    new Unavailable('ffmpeg_missing', 'x'),
    new Busy('upstream_busy', 'x', 1),
    new UpstreamFailed('bad', 'x'),
    new StorageFull(),
    new Error('a bug'),
    'text',
  ]) {
    t.equal(refusalOf(err), null, `${(err as Error).constructor?.name ?? err}: not a refusal, the batch fails instead`);
  }
});
