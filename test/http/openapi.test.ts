import t from 'tap';
import { Validator } from '@seriousme/openapi-schema-validator';
import { startServer } from '../helpers/server.js';
import { CYCLE, CYCLES, FARMS } from '../../src/registry/paths.js';

t.test('the OpenAPI document', async (t) => {
  const s = await startServer(t);
  const r = await s.request('GET', '/openapi.json');
  t.equal(r.status, 200);
  const doc = r.body;

  t.test('is valid OpenAPI 3.1 by a real validator', async (t) => {
    const validator = new Validator();
    const result = await validator.validate(doc);
    t.same(result.errors ?? [], [], 'no validation errors');
    t.equal(result.valid, true);
    t.equal(validator.version, '3.1');
  });

  t.test('holds every route the router serves, with its errors', async (t) => {
    const layers = [...s.app.routers.organization.stack, ...s.app.routers.other.stack];
    t.ok(layers.length > 20);
    for (const layer of layers) {
      const path = String(layer.path).replace(/:([a-z_]+)/g, '{$1}');
      for (const method of layer.methods.filter((m) => m !== 'HEAD')) {
        const op = doc.paths[path]?.[method.toLowerCase()];
        t.ok(op, `${method} ${path} is documented`);
        if (!op) continue;
        t.ok(op.summary, `${method} ${path} has a summary`);
        const statuses = Object.keys(op.responses).map(Number);
        t.ok(
          statuses.some((s) => s >= 200 && s < 300),
          `${method} ${path} documents its success`,
        );
        t.ok(statuses.includes(500), `${method} ${path} documents 500`);
      }
    }
  });

  t.test('documents the problem shape and the auth errors', async (t) => {
    t.ok(doc.components.schemas.Problem.properties.code);
    const op = doc.paths['/api/organizations/{organization_id}/keys'].post;
    for (const status of ['401', '403', '404', '422']) t.ok(op.responses[status], `create key documents ${status}`);
    t.same(Object.keys(doc.components.securitySchemes).sort(), ['AdminToken', 'AdminTokenHeader', 'ApiKey', 'Bearer', 'SessionCookie']);
    const del = doc.paths['/api/organizations/{organization_id}/farms/{farm_id}'].delete;
    t.ok(del.responses['409'], 'delete documents 409');
  });

  t.test('a JSON body is required where leaving it out is refused, optional where it is read as {}', async (t) => {
    t.equal(doc.paths['/api/organizations/{organization_id}/keys'].post.requestBody.required, true, 'a new key needs its fields');
    t.equal(doc.paths['/api/examples/{key}'].post.requestBody.required, false, 'an example is scored with its defaults');
    t.equal(doc.paths['/api/observations/{id}/rescore'].post.requestBody.required, false, "a rescore keeps the walk's options");
  });

  t.test('a created organization or registry level and an accepted walk document their Location', async (t) => {
    const accepted: [string, string][] = [
      ['/api/organizations', '201'],
      [FARMS, '201'],
      [CYCLES, '201'],
      ['/api/observations', '202'],
      ['/api/observations/{id}/rescore', '202'],
      ['/api/examples/{key}', '202'],
      [`${CYCLE}/videos`, '201'],
      [`${CYCLE}/videos/batch`, '201'],
    ];
    for (const [p, status] of accepted) t.ok(doc.paths[p]?.post.responses[status]?.headers?.Location, `${p} ${status}`);
  });

  t.test('the interactive reference is served from local files', async (t) => {
    const page = await s.request('GET', '/api/docs');
    t.equal(page.status, 200);
    t.match(page.text, /swagger-ui-bundle\.js/);
    t.notMatch(page.text, /https?:\/\//, 'no external URL (the box is often offline)');
    const bundle = await s.request('GET', '/api/docs/assets/swagger-ui-bundle.js');
    t.equal(bundle.status, 200);
    t.ok(bundle.text.length > 100_000);
    const css = await s.request('GET', '/api/docs/assets/swagger-ui.css');
    t.equal(css.status, 200);
    const escape = await s.request('GET', '/api/docs/assets/..%2F..%2Fpackage.json');
    t.ok([404, 422].includes(escape.status), 'no file outside the asset list');
    const init = await s.request('GET', '/api/docs/init.js');
    t.match(init.text, /openapi\.json/);
  });
});
