// JSON bodies that slip past validation, sent to every operation that takes JSON (found in the
// served OpenAPI document): nested thousands of levels deep, or not UTF-8. Each is a clear 4xx
// problem, never a 500, and nothing is stored.
import t from 'tap';
import { setup, urlOf, changeLog, headers, isProblem } from '../helpers/operations.js';

t.test('JSON nested thousands of levels: a 4xx for every JSON body, never a 500, nothing stored', async (t) => {
  const { s, tree, ops } = await setup(t);
  const withJson = ops.filter((o) => o.op.requestBody?.content?.['application/json']);
  t.ok(withJson.length >= 20, `${withJson.length} operations take JSON`);
  const before = changeLog(s);
  const bodies = {
    'objects, 5,000 deep': '{"a":'.repeat(5000) + '1' + '}'.repeat(5000),
    'arrays, 200,000 deep': '['.repeat(200_000) + ']'.repeat(200_000),
    'a note 5,000 deep': '{"pests":' + '{"a":'.repeat(5000) + '1' + '}'.repeat(5001),
  };
  for (const o of withJson) {
    for (const [what, body] of Object.entries(bodies)) {
      const r = await s.request(o.method, urlOf(o.path, tree), { headers: { ...headers(tree), 'content-type': 'application/json' }, body });
      t.ok(
        isProblem(r) && (r.status === 422 || r.status === 413),
        `${o.method} ${o.path.replace(/.*organizations\/\{organization_id\}/, '')}, ${what}: ${r.status} ${r.body?.code}`,
      );
    }
  }
  t.equal(changeLog(s), before, 'nothing stored');
});

t.test('a JSON body that is not UTF-8: 400 invalid_encoding on every JSON operation, nothing stored', async (t) => {
  const { s, tree, ops } = await setup(t);
  const withJson = ops.filter((o) => o.op.requestBody?.content?.['application/json']);
  const before = changeLog(s);
  const bad = [
    Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff, 0xfe]), Buffer.from('"}')]),
    Buffer.concat([Buffer.from('{"note":"caf'), Buffer.from([0xc3]), Buffer.from('"}')]), // cut off mid-character
    Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from('"}')]), // a lone surrogate as UTF-8
  ];
  for (const o of withJson) {
    for (const raw of bad) {
      const r = await s.request(o.method, urlOf(o.path, tree), { headers: { ...headers(tree), 'content-type': 'application/json' }, raw });
      t.equal(r.status, 400, `${o.method} ${o.path.replace(/.*organizations\/\{organization_id\}/, '')}: 400`);
      t.equal(r.body.code, 'invalid_encoding');
    }
  }
  t.equal(changeLog(s), before, 'nothing stored');
  const farms = await s.request('GET', `/api/organizations/${tree.orgId}/farms`, { key: tree.adminKey });
  t.notOk(JSON.stringify(farms.body).includes('\ufffd'), 'no replacement characters anywhere');
  const fine = await s.request('POST', `/api/organizations/${tree.orgId}/farms`, {
    key: tree.adminKey,
    raw: Buffer.from('\ufeff{"name":"Kas één"}'),
    headers: { 'content-type': 'application/json; charset=utf-8' },
  });
  t.equal(fine.status, 201, 'valid UTF-8 (with a BOM) is read as before');
  t.equal(fine.body.name, 'Kas één');
});
