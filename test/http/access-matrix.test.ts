import t from 'tap';
import { randomUUID } from 'node:crypto';
import { startServer, createTree, ADMIN_TOKEN } from '../helpers/server.js';

/**
 * Every route the service serves, tried with each wrong credential. Driven by
 * the app's own route table, so a new route is covered the day it is added.
 */
t.test('access matrix over every route', async (t) => {
  const s = await startServer(t, { authFailuresPerMinute: 0 });
  const a = await createTree(s);
  const b = await createTree(s);

  const member = await s.request('POST', `/api/organizations/${a.orgId}/keys`, {
    key: a.adminKey,
    body: { name: 'member', role: 'member' },
  });
  t.equal(member.status, 201);
  const revoked = await s.request('POST', `/api/organizations/${a.orgId}/keys`, {
    key: a.adminKey,
    body: { name: 'soon revoked', role: 'admin' },
  });
  const rv = await s.request('POST', `/api/organizations/${a.orgId}/keys/${revoked.body.key_id}/revoke`, { key: a.adminKey });
  t.equal(rv.status, 200);

  const fill: Record<string, string> = {
    organization_id: a.orgId,
    farm_id: a.farmId,
    greenhouse_id: a.greenhouseId,
    row_id: a.rowId,
    cycle_id: a.cycleId,
    week: '2026-W10',
    counted_on: '2026-03-01',
    frame: '0',
    name: 'image.jpg',
    file: 'swagger-ui.css',
  };
  const urlOf = (path: string) => path.replace(/\{([a-z_]+)\}/g, (_, p: string) => fill[p] ?? randomUUID());

  const routes = s.app.routes;
  t.ok(routes.length > 20, `${routes.length} routes under test`);
  let checked = 0;
  for (const route of routes) {
    const method = route.method.toUpperCase();
    const url = urlOf(route.path);
    const label = `${method} ${route.path}`;
    if (route.auth === 'none') continue;

    if (route.auth === 'admin-token') {
      const none = await s.request(method, url);
      t.equal(none.status, 401, `${label}: no token → 401`);
      t.equal(none.body.code, 'unauthenticated', `${label}: problem code`);
      const wrong = await s.request(method, url, { headers: { authorization: 'Bearer not-the-token' } });
      t.equal(wrong.status, 401, `${label}: wrong token → 401`);
      const orgKey = await s.request(method, url, { headers: { authorization: `Bearer ${a.adminKey}` } });
      t.equal(orgKey.status, 401, `${label}: an organization key is not the admin token → 401`);
      checked++;
      continue;
    }

    const none = await s.request(method, url);
    t.equal(none.status, 401, `${label}: no key → 401`);
    t.match(none.headers.get('content-type'), /application\/problem\+json/, `${label}: problem+json`);
    const unknown = await s.request(method, url, { key: 'cwk_0123456789abcdef_' + 'A'.repeat(43) });
    t.equal(unknown.status, 401, `${label}: unknown key → 401`);
    const garbage = await s.request(method, url, { headers: { authorization: 'Bearer garbage' } });
    t.equal(garbage.status, 401, `${label}: malformed bearer → 401`);
    const rev = await s.request(method, url, { key: revoked.body.api_key });
    t.equal(rev.status, 401, `${label}: revoked key → 401`);
    const admin = await s.request(method, url, { headers: { 'x-admin-token': ADMIN_TOKEN } });
    t.equal(admin.status, 401, `${label}: the admin token is not an organization key → 401`);

    if (route.path.includes('{organization_id}')) {
      const other = await s.request(method, url, { key: b.adminKey });
      t.equal(other.status, 404, `${label}: key of another organization → 404`);
      t.equal(other.body.code, 'not_found');
    }
    if (route.auth === 'admin') {
      const m = await s.request(method, url, { key: member.body.api_key });
      t.equal(m.status, 403, `${label}: member key → 403`);
      t.equal(m.body.code, 'forbidden');
    }
    checked++;
  }
  t.ok(checked > 20, `checked ${checked} authenticated routes`);
});
