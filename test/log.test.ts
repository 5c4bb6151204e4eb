import t from 'tap';
import { createLogger } from '../src/log.js';

function capture(level: Parameters<typeof createLogger>[0] = 'info', base: Record<string, unknown> = {}) {
  const lines: string[] = [];
  return { lines, log: createLogger(level, base, (l) => lines.push(l)) };
}

t.test('one JSON object per line: time, level and message first, then the fields', async (t) => {
  const { lines, log } = capture();
  log.info('request', { request_id: 'r-1', method: 'GET', path: '/api/"quoted"\nline', status: 200, ms: 0.4, key_id: undefined });
  log.warn('bare');
  t.equal(lines.length, 2);
  const a = JSON.parse(lines[0]!);
  t.same(Object.keys(a), ['time', 'level', 'msg', 'request_id', 'method', 'path', 'status', 'ms']);
  t.match(a, { level: 'info', msg: 'request', path: '/api/"quoted"\nline', status: 200, ms: 0.4 });
  t.ok(Math.abs(Date.parse(a.time) - Date.now()) < 5_000, 'time is now, ISO 8601');
  t.match(a.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  t.same(JSON.parse(lines[1]!), { time: JSON.parse(lines[1]!).time, level: 'warn', msg: 'bare' });
});

t.test('below the threshold nothing is written', async (t) => {
  const { lines, log } = capture('warn');
  log.debug('d');
  log.info('i');
  log.error('e');
  t.same(
    lines.map((l) => JSON.parse(l).msg),
    ['e'],
  );
  const silent = capture('silent');
  silent.log.error('e');
  t.equal(silent.lines.length, 0);
});

t.test('secrets never reach a line, at any depth', async (t) => {
  const { lines, log } = capture('info', { service: 'cropwalk', token: 'base-secret' });
  log
    .child({ authorization: 'Bearer child-secret' })
    .info('x', { headers: { 'x-api-key': 'cwk_abc', cookie: 'service_key=s' }, api_key: 'top', error: new Error('boom') });
  const line = lines[0]!;
  for (const secret of ['base-secret', 'child-secret', 'cwk_abc', 'service_key=s', 'top'])
    t.notOk(line.includes(secret), `${secret} is not written`);
  const parsed = JSON.parse(line);
  t.equal(parsed.service, 'cropwalk', 'base fields are kept');
  t.equal(parsed.headers['x-api-key'], '[redacted]');
  t.equal(parsed.error.message, 'boom', 'an error is written with its message');
  t.match(parsed.error.stack, /boom/);
});

t.test('fields named like the leading keys still give valid JSON, the field winning as before', async (t) => {
  const { lines, log } = capture();
  log.info('m', { msg: 'field', level: 'custom', time: 'then' });
  const parsed = JSON.parse(lines[0]!);
  t.same(parsed, { time: 'then', level: 'custom', msg: 'field' });
  t.equal(lines[0]!.match(/"msg"/g)!.length, 1, 'no key written twice');
});

t.test('the request line: the same JSON as the generic path, the path escaped, key_id only when known', async (t) => {
  const { lines, log } = capture();
  const path = '/api/"x"\\y\n\u2028\u0001é';
  log.request({ request_id: 'r-2', method: 'GET', path, status: 404, ms: 1.5 });
  log.request({ request_id: 'r-3', method: 'DELETE', path: '/a', status: 200, ms: 0, key_id: 'k-1' });
  const generic = capture();
  generic.log.info('request', { request_id: 'r-2', method: 'GET', path, status: 404, ms: 1.5 });
  const a = JSON.parse(lines[0]!);
  const g = JSON.parse(generic.lines[0]!);
  t.same({ ...a, time: 0 }, { ...g, time: 0 }, 'same keys, order and values as log.info would write');
  t.same(Object.keys(a), Object.keys(g));
  t.equal(a.path, path);
  t.same(JSON.parse(lines[1]!), {
    time: JSON.parse(lines[1]!).time,
    level: 'info',
    msg: 'request',
    request_id: 'r-3',
    method: 'DELETE',
    path: '/a',
    status: 200,
    ms: 0,
    key_id: 'k-1',
  });

  const quiet = capture('warn');
  quiet.log.request({ request_id: 'r', method: 'GET', path: '/', status: 200, ms: 0 });
  t.equal(quiet.lines.length, 0, 'below info, nothing');

  const based = capture('info', { service: 'cropwalk' });
  based.log.request({ request_id: 'r', method: 'GET', path: '/', status: 200, ms: 0 });
  t.match(JSON.parse(based.lines[0]!), { service: 'cropwalk', msg: 'request', request_id: 'r' }, 'base fields kept');
});
