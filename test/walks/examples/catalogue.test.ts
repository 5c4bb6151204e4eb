// The example photos shipped in examples/, scored through the same job path
// as an upload; and what a configured model that cannot run does to modes.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { EXAMPLES_DIR, loadExamples } from '../../../src/walks/examples/catalogue.js';
import { startServer, createOrg, type TestServer } from '../../helpers/server.js';

async function poll(s: TestServer, id: string, key: string, timeoutMs = 240_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await s.request('GET', `/api/observations/${id}`, { key });
    if (r.body.status === 'done' || r.body.status === 'failed') return r.body;
    if (Date.now() > deadline) throw new Error(`walk ${id} still ${r.body.status}`);
    await new Promise((resolve) => setTimeout(resolve, 60));
  }
}

t.test('the shipped examples are small JPEGs with a description of what they show', async (t) => {
  const examples = loadExamples();
  t.ok(examples.length >= 3 && examples.length <= 4, `${examples.length} examples`);
  for (const e of examples) {
    const bytes = readFileSync(path.join(EXAMPLES_DIR, e.file));
    t.ok(bytes.length < 200 * 1024, `${e.file} is ${bytes.length} B`);
    t.same([...bytes.subarray(0, 3)], [0xff, 0xd8, 0xff], `${e.file} is a JPEG`);
    t.equal(e.truth.total, e.truth.green + e.truth.turning + e.truth.red);
  }
  t.same(
    loadExamples(
      t.testdir({
        'index.json': JSON.stringify({
          examples: [
            { ...examples[0], key: 'escape', file: '../../etc/passwd' },
            { ...examples[0], key: 'BAD KEY' },
          ],
        }),
      }),
    ),
    [],
    'an index entry pointing outside its folder, or with a bad key, is ignored',
  );
});

t.test('GET /api/examples, the photo, and POST /api/examples/{key} scores one like an upload', async (t) => {
  const s = await startServer(t);
  const { adminKey } = await createOrg(s);
  const list = await s.request('GET', '/api/examples', { key: adminKey });
  t.equal(list.status, 200);
  t.equal(list.body.items.length, loadExamples().length);
  const first = list.body.items[0];
  t.match(first, { key: 'row-mixed', image_url: '/api/examples/row-mixed/image.jpg', truth: { total: Number } });
  t.equal((await s.request('GET', '/api/examples')).status, 401, 'a key is needed');

  const photo = await fetch(s.base + first.image_url, { headers: { 'x-api-key': adminKey } });
  t.equal(photo.status, 200);
  t.equal(photo.headers.get('content-type'), 'image/jpeg');
  t.equal(Buffer.from(await photo.arrayBuffer()).length, readFileSync(path.join(EXAMPLES_DIR, 'row-mixed.jpg')).length);

  const r = await s.request('POST', '/api/examples/row-mixed', { key: adminKey });
  t.equal(r.status, 202);
  t.equal(r.headers.get('location'), `/api/observations/${r.body.job_id}`, 'Location says where to poll');
  t.match(r.body, {
    source: 'example',
    example_key: 'row-mixed',
    status: /queued|running/,
    options: { mm_per_pixel: first.mm_per_pixel },
    clips: [{ kind: 'image', name: 'row-mixed.jpg' }],
  });
  const done = await poll(s, r.body.job_id, adminKey);
  t.equal(done.status, 'done', done.error ?? '');
  t.equal(done.result.frames.length, 1);
  const truth = first.truth.total;
  t.ok(done.counts.total > 0 && done.counts.total <= truth * 2, `counted ${done.counts.total} of ${truth} fruit in view`);
  t.ok(
    done.result.fruit.every((f: any) => typeof f.diameter_mm === 'number'),
    "the example's scale gives diameters",
  );
  t.ok(readFileSync(path.join(EXAMPLES_DIR, 'row-mixed.jpg')).length > 0, 'the shipped photo is copied, not moved');

  const withOptions = await s.request('POST', '/api/examples/row-close', { key: adminKey, body: { conf: 0.6, mode: 'builtin' } });
  t.equal(withOptions.status, 202);
  t.match(withOptions.body.options, { conf: 0.6 });
  await poll(s, withOptions.body.job_id, adminKey);

  const before = await s.app.services.db
    .selectFrom('walks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  t.equal((await s.request('POST', '/api/examples/no-such-photo', { key: adminKey })).status, 404);
  t.equal((await s.request('POST', '/api/examples/..%2F..%2Fpackage.json', { key: adminKey })).status, 422);
  t.equal((await s.request('GET', '/api/examples/..%2Findex/image.jpg', { key: adminKey })).status, 422);
  t.equal((await s.request('GET', '/api/examples/nope/image.jpg', { key: adminKey })).status, 404);
  const bad = await s.request('POST', '/api/examples/row-mixed', { key: adminKey, body: { conf: 2 } });
  t.equal(bad.status, 422);
  t.match(bad.body.errors, [{ in: 'body', name: 'conf' }]);
  t.equal(
    (await s.request('POST', '/api/examples/row-mixed', { key: adminKey, body: { mode: 'model' } })).status,
    422,
    'no model configured',
  );
  const after = await s.app.services.db
    .selectFrom('walks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  t.equal(Number(after.n), Number(before.n), 'refusals store nothing');
});

t.test('a configured model that is missing: mode model is a 422, auto falls back to the built-in detector and says why', async (t) => {
  const s = await startServer(t, { detector: 'missing-model.json' });
  const { adminKey } = await createOrg(s);
  const health = await s.request('GET', '/api/health');
  t.equal(health.status, 200);
  t.match(health.body.checks.scoring, {
    ok: true,
    detector: { setting: 'missing-model.json', runs: 'builtin-colour', available: false, reason: /not in models/ },
  });

  const model = await s.request('POST', '/api/examples/row-mixed', { key: adminKey, body: { mode: 'model' } });
  t.equal(model.status, 422);
  t.match(model.body.errors, [{ name: 'mode', message: /cannot run.*not in models/ }]);

  const auto = await s.request('POST', '/api/examples/row-mixed', { key: adminKey, body: { mode: 'auto' } });
  t.equal(auto.status, 202);
  const done = await poll(s, auto.body.job_id, adminKey);
  t.equal(done.status, 'done', done.error ?? '');
  t.match(done.result.detector, { name: 'builtin-colour', kind: 'builtin', fallback_reason: /missing-model\.json is not in models/ });
});

t.test('a DETECTOR setting that is a path is not followed', async (t) => {
  const s = await startServer(t, { detector: '../package.json' });
  const { adminKey } = await createOrg(s);
  const health = await s.request('GET', '/api/health');
  t.match(health.body.checks.scoring.detector, { available: false, reason: /not a path/ });
  const model = await s.request('POST', '/api/examples/row-mixed', { key: adminKey, body: { mode: 'model' } });
  t.equal(model.status, 422);
});
