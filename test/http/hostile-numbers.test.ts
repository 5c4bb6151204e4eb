// Numbers that slip past validation, sent to every operation they apply to (found in the served
// OpenAPI document): offsets and limits out of range or not written in decimal, non-finite or
// non-decimal numbers in multipart forms. Each is a 422 naming the field, never a 500, and
// nothing is stored.
import t from 'tap';
import { setup, urlOf, changeLog, headers } from '../helpers/operations.js';
import { sqliteOf } from '../helpers/postgres.js';

t.test('offset and limit: a maximum in every schema, 422 above it, decimal integers only', async (t) => {
  const { s, tree, ops } = await setup(t);
  const paged = ops.filter((o) => o.method === 'GET' && (o.op.parameters ?? []).some((p: any) => p.in === 'query' && p.name === 'offset'));
  t.ok(paged.length >= 8, `${paged.length} paged lists: ${paged.map((o) => o.path.replace(/.*\//, '')).join(', ')}`);
  for (const o of ops)
    for (const p of o.op.parameters ?? []) {
      const types = ([] as string[]).concat(p.schema?.type ?? []);
      if (types.includes('integer') || types.includes('number'))
        t.ok(p.schema.maximum !== undefined, `${o.method} ${o.path} ${p.in} ${p.name}: a maximum (${p.schema.maximum})`);
    }
  for (const o of paged) {
    const url = urlOf(o.path, tree);
    const max = (name: string) => o.op.parameters.find((p: any) => p.name === name).schema.maximum as number;
    const cases: [string, string][] = [
      ['offset', '9223372036854775808'],
      ['offset', '1e19'],
      ['offset', '1e308'],
      ['offset', String(max('offset') + 1)],
      ['offset', '0x10'],
      ['offset', '-1'],
      ['limit', '0x10'],
      ['limit', '1e2'],
      ['limit', ' 16'],
      ['limit', String(max('limit') + 1)],
    ];
    for (const [name, value] of cases) {
      const r = await s.request('GET', `${url}?${name}=${encodeURIComponent(value)}`, { headers: headers(tree) });
      t.equal(r.status, 422, `${o.path.replace(/.*\//, '')}?${name}=${value}: 422`);
      t.match(r.body.errors, [{ in: 'query', name }], 'naming the field');
    }
    const fine = await s.request('GET', `${url}?limit=16&offset=${max('offset')}`, { headers: headers(tree) });
    t.equal(fine.status, 200, `${o.path.replace(/.*\//, '')}: limit=16 and the largest offset answer`);
  }
});

t.test('non-finite or non-decimal numbers in a multipart form: 422 naming the field, on every multipart operation', async (t) => {
  const { s, tree, ops } = await setup(t);
  const multipart = ops.filter((o) => o.op.requestBody?.content?.['multipart/form-data']);
  const numeric = multipart.flatMap((o) => {
    const props = o.op.requestBody.content['multipart/form-data'].schema.properties ?? {};
    return Object.entries<any>(props)
      .filter(([, p]) => ([] as string[]).concat(p.type ?? []).some((x) => x === 'number' || x === 'integer'))
      .map(([name]) => ({ o, name }));
  });
  t.ok(numeric.length >= 12, `${numeric.length} numeric form fields on ${new Set(numeric.map((n) => n.o.path)).size} operations`);
  const walks = () => (sqliteOf(s.app.services).prepare('SELECT count(*) AS n FROM walks').get() as { n: number }).n;
  const before = [walks(), changeLog(s)];
  for (const { o, name } of numeric) {
    for (const value of ['Infinity', '-Infinity', '1e309', 'NaN', '0x10', '']) {
      const form = new FormData();
      form.append(name, value);
      form.append('week', '2026-W07');
      const fileField = o.op.requestBody.content['multipart/form-data'].schema.properties.files ? 'files' : 'file';
      form.append(fileField, new Blob([Buffer.from('not looked at')]), 'walk.mp4');
      const r = await s.request('POST', urlOf(o.path, tree), { headers: headers(tree), raw: form });
      t.equal(r.status, 422, `${o.path.replace(/.*\//, '')} ${name}=${value}: 422`);
      t.match(r.body.errors, [{ in: 'body', name }], 'naming the field');
    }
  }
  t.same([walks(), changeLog(s)], before, 'no walk made, nothing stored');
});
