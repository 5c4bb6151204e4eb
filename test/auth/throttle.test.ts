// The failed-credential throttle slows down guessing from one address without locking out the
// people behind it: a greenhouse's phones share one address behind its router, so after one
// mistyped script every valid key from there must still pass. Only failed attempts are answered
// 429, with when to retry, and each is logged (never the secret).
import t from 'tap';
import { SettableClock } from '../../src/clock.js';
import { startServer, createTree, ADMIN_TOKEN } from '../helpers/server.js';

const LIMIT = 5;

t.test('a valid key always passes; failed ones are slowed down, logged, and told when to retry', async (t) => {
  const clock = new SettableClock('2026-03-02T08:00:00Z');
  const s = await startServer(t, { authFailuresPerMinute: LIMIT }, { clock });
  const tree = await createTree(s);
  const farms = `/api/organizations/${tree.orgId}/farms`;
  const wrong = 'cwk_this-is-not-a-key-0123456789abcdefghijklmnop';
  const statuses: number[] = [];
  for (let i = 0; i < LIMIT + 3; i++) {
    statuses.push((await s.request('GET', farms, { key: wrong })).status);
    clock.advance(1_000);
  }
  t.same(statuses, [...Array(LIMIT).fill(401), 429, 429, 429], `${LIMIT} failures answered 401, then 429`);

  const refused = await s.request('GET', farms, { key: wrong });
  t.equal(refused.status, 429);
  const retry = Number(refused.headers.get('retry-after'));
  t.ok(retry > 0 && retry <= 60, `Retry-After: ${retry} s`);
  t.equal(refused.body.retry_after_seconds, retry, 'and in the problem');
  t.match(refused.body.detail, new RegExp(`again in ${retry} s`), 'the detail says when');

  // The same address, right away: every valid credential passes.
  t.equal((await s.request('GET', farms, { key: tree.adminKey })).status, 200, 'a valid key in a header');
  t.equal((await s.request('GET', farms, { headers: { authorization: `Bearer ${tree.adminKey}` } })).status, 200, 'as a bearer token');
  t.equal((await s.request('GET', '/api/admin/keys', { admin: true })).status, 200, 'the admin token');
  const signIn = await s.request('POST', '/api/session', { body: { api_key: tree.adminKey } });
  t.equal(signIn.status, 200, 'signing in with a valid key');
  const cookie = signIn.headers.get('set-cookie')!.split(';')[0]!;
  t.equal((await s.request('GET', farms, { headers: { cookie } })).status, 200, 'and the session it sets');
  t.equal((await s.request('POST', '/api/session', { body: { api_key: wrong } })).status, 429, 'a wrong key signing in is slowed down too');
  t.equal(
    (await s.request('GET', '/api/admin/keys', { headers: { authorization: 'Bearer wrong-token' } })).status,
    429,
    'and a wrong admin token',
  );

  const logged = ((s as unknown as { logLines: string[] }).logLines ?? [])
    .map((l) => JSON.parse(l))
    .filter((l) => l.msg === 'credentials refused');
  t.ok(logged.length >= LIMIT + 6, `${logged.length} failed attempts logged`);
  t.match(logged.at(-1), { level: 'warn', client: String, throttled: true, retry_after_seconds: Number });
  t.notOk(
    (s as unknown as { logLines: string[] }).logLines.some(
      (l) => l.includes(wrong) || l.includes(ADMIN_TOKEN) || l.includes(tree.adminKey),
    ),
    'no secret, right or wrong, reaches the log',
  );

  clock.advance(61_000);
  t.equal((await s.request('GET', farms, { key: wrong })).status, 401, 'a minute later a failure is a 401 again');
});
