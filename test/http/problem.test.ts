import t from 'tap';
import { conflict, HttpProblem, problemOf } from '../../src/http/problem.js';
import {
  Busy,
  Conflict,
  DomainError,
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

t.test("a problem's extra fields ride along but never replace its standard members", async (t) => {
  const body = conflict('The walk is still being scored.', { job_id: 'j1', walk_status: 'running' }).toBody();
  t.match(body, {
    status: 409,
    code: 'conflict',
    title: 'Conflict',
    detail: 'The walk is still being scored.',
    job_id: 'j1',
    walk_status: 'running',
  });
  for (const name of ['type', 'title', 'status', 'detail', 'instance', 'code']) {
    t.throws(
      () => new HttpProblem(409, 'conflict', 'x', { [name]: 'queued' }),
      TypeError,
      `an extra "${name}" is refused where the problem is made`,
    );
  }
});

t.test('each kind of domain error has one answer: its status, code, detail and fields', async (t) => {
  const cases: [DomainError, number, string][] = [
    [new NotFound('harvest'), 404, 'not_found'],
    [Invalid.field('kg', 'must be ≥ 0', 'body'), 422, 'validation_failed'],
    [new Conflict('busy', { job_id: 'j' }), 409, 'conflict'],
    [new Conflict('none saved', {}, 'no_saved_mapping'), 409, 'no_saved_mapping'],
    [new Gone('removed', 'frames_removed', { job_id: 'j' }), 410, 'frames_removed'],
    [new TooLarge(1024), 413, 'payload_too_large'],
    [new UnsupportedMedia('not a photo'), 415, 'unsupported_media_type'],
    [new Refused('climate_file_blocked', 'blocked', { blocking: [] }), 400, 'climate_file_blocked'],
    [new Forbidden('not yours'), 403, 'forbidden'],
    [new Unavailable('weather_unreachable', 'no answer'), 503, 'weather_unreachable'],
    [new Busy('upstream_busy', 'full', 3), 503, 'upstream_busy'],
    [new UpstreamFailed('weather_garbage', 'not JSON'), 502, 'weather_garbage'],
    [new StorageFull(), 507, 'insufficient_storage'],
  ];
  for (const [err, status, code] of cases) {
    const body = problemOf(err)!.toBody();
    t.match(body, { status, code, detail: err.message, ...err.extra }, `${err.constructor.name} → ${status} ${code}`);
  }
  t.match(problemOf(Invalid.field('kg', 'must be ≥ 0', 'body'))!.toBody(), {
    errors: [{ in: 'body', name: 'kg', message: 'must be ≥ 0' }],
  });
  t.match(problemOf(new TooLarge(1024))!.toBody(), { limit_bytes: 1024 });
  const busy = problemOf(new Busy('upstream_busy', 'full', 3))!;
  t.same(busy.headers, { 'Retry-After': '3' }, 'a busy answer says when to come back, in the header as in the body');
  t.match(busy.toBody(), { retry_after_seconds: 3 });
  t.equal(problemOf(new Error('a bug')), null, 'anything else is not a problem of the request: the caller answers 500');
  t.equal(problemOf(Object.assign(new Error('disk'), { code: 'ENOSPC' }))!.status, 507, 'a full disk wherever it is noticed');
});

t.test('no file outside src/http/ and the route files builds an HTTP answer', async (t) => {
  const { readdirSync, readFileSync } = await import('node:fs');
  const path = await import('node:path');
  const root = new URL('../../src/', import.meta.url).pathname;
  const offenders: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.ts$/.test(e.name)) {
        const rel = path.relative(root, p);
        const allowed = rel.startsWith('http/') || rel === 'app.ts' || e.name === 'routes.ts';
        if (!allowed && /from '[./]*\/?http\/problem\.js'|from '\.\/problem\.js'/.test(readFileSync(p, 'utf8'))) offenders.push(rel);
      }
    }
  };
  walk(root);
  t.same(offenders, [], 'domain code throws the errors of src/errors.ts');
});

t.test('a PostgreSQL server that cannot be had answers 503 database_unavailable; other database errors stay 500s', async (t) => {
  const pgError = (code: string, message: string) => Object.assign(new Error(message), { code, severity: 'FATAL' });
  for (const [err, why] of [
    [pgError('57P01', 'terminating connection due to administrator command'), 'a terminated backend'],
    [pgError('57P03', 'the database system is starting up'), 'a server starting up'],
    [pgError('08006', 'connection failure'), 'a connection failure'],
    [pgError('55000', 'database "x" is not currently accepting connections'), 'a database closed to connections'],
    [new Error('Connection terminated unexpectedly'), 'the connection lost mid-statement'],
    [new Error('Client has encountered a connection error and is not queryable'), 'a client lost before'],
  ] as const) {
    const p = problemOf(err);
    t.equal(p?.status, 503, why);
    t.equal(p?.code, 'database_unavailable', why);
  }
  t.equal(problemOf(pgError('23505', 'duplicate key value violates unique constraint')), null, 'a broken rule is a bug: 500');
  t.equal(problemOf(pgError('55000', 'object is in use')), null, 'another 55000');
  t.equal(problemOf(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' })), null, 'a socket error of anything else');
  t.equal(problemOf(Object.assign(new Error('x'), { code: '57P01' })), null, 'a SQLSTATE-like code without a severity is not the driver');
});
