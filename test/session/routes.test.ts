import t from 'tap';
import { startServer, createOrg } from '../helpers/server.js';

t.test('cookie sessions', async (t) => {
  const s = await startServer(t);
  const { orgId, adminKey } = await createOrg(s);

  const bad = await s.request('POST', '/api/session', { body: { api_key: 'nope' } });
  t.equal(bad.status, 401);
  t.equal(bad.headers.get('set-cookie'), null);
  const missing = await s.request('POST', '/api/session', { body: {} });
  t.equal(missing.status, 422);

  const r = await s.request('POST', '/api/session', { body: { api_key: adminKey } });
  t.equal(r.status, 200);
  const cookie = r.headers.get('set-cookie')!;
  t.match(cookie, /^service_key=/);
  t.match(cookie, /httponly/i);
  t.match(cookie, /samesite=strict/i);
  t.notMatch(cookie, /secure/i, 'not Secure over plain HTTP');
  const jar = cookie.split(';')[0]!;

  const get = await s.request('GET', '/api/session', { headers: { cookie: jar } });
  t.equal(get.status, 200);
  t.equal(get.body.via, 'cookie');
  t.equal(get.body.organization_id, orgId);

  const farms = `/api/organizations/${orgId}/farms`;
  const crossSite = await s.request('POST', farms, { headers: { cookie: jar, origin: 'https://evil.example' }, body: { name: 'x' } });
  t.equal(crossSite.status, 403, 'cross-origin write with the cookie alone');
  const noOrigin = await s.request('POST', farms, { headers: { cookie: jar }, body: { name: 'x' } });
  t.equal(noOrigin.status, 403, 'a write with the cookie and no origin at all');
  const sameOrigin = await s.request('POST', farms, { headers: { cookie: jar, origin: s.base }, body: { name: 'x' } });
  t.equal(sameOrigin.status, 201);
  const withHeaderKey = await s.request('POST', farms, {
    headers: { cookie: jar, origin: 'https://evil.example' },
    key: adminKey,
    body: { name: 'y' },
  });
  t.equal(withHeaderKey.status, 201, 'a header key is not a cookie-only request');
  const list = await s.request('GET', farms, { headers: { cookie: jar } });
  t.equal(list.body.items.length, 2, 'refused writes stored nothing');

  const out = await s.request('DELETE', '/api/session', { headers: { cookie: jar } });
  t.equal(out.status, 200);
  t.match(out.headers.get('set-cookie')!, /service_key=;/);
});

t.test('Secure cookie behind a TLS proxy', async (t) => {
  const s = await startServer(t, { trustProxy: true });
  const { adminKey } = await createOrg(s);
  const r = await s.request('POST', '/api/session', { headers: { 'x-forwarded-proto': 'https' }, body: { api_key: adminKey } });
  t.equal(r.status, 200);
  t.match(r.headers.get('set-cookie')!, /secure/i);
});
