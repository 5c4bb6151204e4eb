// Every quantity a record takes has a plausible upper bound, named in the OpenAPI document, and the
// week's sums stay numbers: before, kg 1e308 was stored twice and the week read answered "kg": null
// (the sum overflowed to Infinity, which JSON writes as null).
import t from 'tap';
import { startServer, createTree } from '../helpers/server.js';
import { HARVEST_KG_MAX } from '../../src/records/harvests/schemas.js';
import { IRRIGATION_LITRES_MAX } from '../../src/records/irrigation/schemas.js';

type Schema = Record<string, any>;

t.test('the bounds are the documented ones', async (t) => {
  t.equal(HARVEST_KG_MAX, 1_000_000, 'at most 1,000,000 kg per harvest entry');
  t.equal(IRRIGATION_LITRES_MAX, 1_000_000, 'at most 1,000,000 L (1,000 m³) per irrigation entry');
});

t.test('every number a request body takes has a maximum, and its description names it', async (t) => {
  const s = await startServer(t);
  const doc = (await s.request('GET', '/openapi.json')).body;
  const resolve = (x: Schema): Schema => (x?.$ref ? resolve(doc.components.schemas[x.$ref.split('/').pop()]) : x);
  const unbounded: string[] = [];
  const undocumented: string[] = [];
  const walk = (x: Schema | undefined, where: string) => {
    if (!x || typeof x !== 'object') return;
    x = resolve(x);
    const types = ([] as string[]).concat(x.type ?? []);
    if (types.includes('number') || types.includes('integer')) {
      const max = x.maximum ?? x.exclusiveMaximum;
      if (max === undefined) unbounded.push(where);
      // A named field says its bound in words (array items are described by their array).
      else if (
        !/\[\]$/.test(where) &&
        ![String(max), Number(max).toLocaleString('en')].some((m) => String(x.description ?? '').includes(m))
      )
        undocumented.push(`${where} (maximum ${max}: "${x.description}")`);
    }
    for (const [k, v] of Object.entries(x.properties ?? {})) walk(v as Schema, `${where}.${k}`);
    if (x.items) walk(x.items, `${where}[]`);
    for (const k of ['oneOf', 'anyOf', 'allOf'] as const) for (const [i, v] of (x[k] ?? []).entries()) walk(v, `${where}/${k}${i}`);
  };
  for (const [p, ops] of Object.entries<Schema>(doc.paths)) {
    for (const [method, op] of Object.entries<Schema>(ops)) {
      for (const [type, media] of Object.entries<Schema>(op.requestBody?.content ?? {}))
        walk(media.schema, `${method.toUpperCase()} ${p} ${type}`);
    }
  }
  t.same(unbounded, [], 'no request number without a maximum');
  t.same(undocumented, [], 'each maximum is written in its description');
});

t.test('quantities above their bound are 422 naming the field, and nothing is stored', async (t) => {
  const s = await startServer(t);
  const tree = await createTree(s);
  const key = tree.adminKey;
  const H = `${tree.cyclePath}/harvests`;
  const I = `${tree.cyclePath}/irrigation`;
  const count = async (url: string) => (await s.request('GET', url, { key })).body.items.length as number;

  for (const kg of [1e308, HARVEST_KG_MAX + 0.5]) {
    const r = await s.request('POST', H, { key, body: { week: '2026-W07', kg } });
    t.equal(r.status, 422, `kg ${kg}`);
    t.match(r.body, { code: 'validation_failed', errors: [{ in: 'body', name: 'kg' }] });
  }
  t.equal(await count(H), 0, 'no harvest stored');
  const h = await s.request('POST', H, { key, body: { week: '2026-W07', kg: 10 } });
  t.equal(h.status, 201);
  const patched = await s.request('PATCH', `${H}/${h.body.harvest_id}`, { key, body: { kg: 1e308 } });
  t.equal(patched.status, 422, 'PATCH too');
  t.equal((await s.request('GET', H, { key })).body.items[0].kg, 10, 'the harvest keeps its kg');

  const file = new FormData();
  file.append('file', new Blob(['week,kg\n2026-W08,12\n2026-W08,2000000\n'], { type: 'text/csv' }), 'harvest.csv');
  const csv = await s.request('POST', `${H}/csv`, { key, raw: file });
  t.equal(csv.status, 422, 'a CSV line above the bound');
  t.match(JSON.stringify(csv.body.errors), /line 3.*kg.*1,000,000/, 'the line and the bound are named');
  t.equal(await count(H), 1, 'nothing of the file stored');

  for (const field of ['volume_l', 'drain_l']) {
    const r = await s.request('POST', I, { key, body: { at: '2026-02-11T08:00:00+01:00', [field]: 1e308 } });
    t.equal(r.status, 422, `${field} 1e308`);
    t.match(r.body, { errors: [{ in: 'body', name: field }] });
  }
  t.equal(await count(I), 0, 'no irrigation entry stored');
});

t.test('the week sums stay numbers at the bounds', async (t) => {
  const s = await startServer(t);
  const tree = await createTree(s);
  const key = tree.adminKey;
  for (let i = 0; i < 3; i++) {
    t.equal((await s.request('POST', `${tree.cyclePath}/harvests`, { key, body: { week: '2026-W07', kg: HARVEST_KG_MAX } })).status, 201);
    const at = `2026-02-1${i}T08:00:00+01:00`;
    const r = await s.request('POST', `${tree.cyclePath}/irrigation`, {
      key,
      body: { at, volume_l: IRRIGATION_LITRES_MAX, drain_l: IRRIGATION_LITRES_MAX },
    });
    t.equal(r.status, 201);
  }
  const week = await s.request('GET', `${tree.cyclePath}/weeks/2026-W07`, { key });
  t.equal(week.status, 200);
  t.equal(week.body.harvest.kg, 3 * HARVEST_KG_MAX, 'the harvest sum');
  t.equal(week.body.irrigation.volume_l, 3 * IRRIGATION_LITRES_MAX, 'the water sum');
  t.equal(week.body.irrigation.drain_l, 3 * IRRIGATION_LITRES_MAX, 'the drain sum');
});
