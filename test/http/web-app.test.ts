// The staff app served at `/` beside the API (src/http/web-app.ts): files of a build, the app's own
// paths answered with index.html, the right caching, precompressed copies, and no API path shadowed.
import t from 'tap';
import { writeFileSync, utimesSync } from 'node:fs';
import path from 'node:path';
import { gzipSync, brotliCompressSync, gunzipSync, brotliDecompressSync } from 'node:zlib';
import { startServer } from '../helpers/server.js';
import { APP_SECTIONS } from '../../src/http/web-app.js';
import { ROUTES } from '../../web/src/routes.js';

const dist = t.testdir({ assets: {} });
const INDEX = '<!doctype html><html lang="en"><head><title>cropwalk</title></head><body><div id="app"></div></body></html>';
const JS = 'console.log("app");'.repeat(200);
writeFileSync(path.join(dist, 'index.html'), INDEX);
writeFileSync(path.join(dist, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
writeFileSync(path.join(dist, 'assets', 'index-abc123.js'), JS);
writeFileSync(path.join(dist, 'assets', 'index-abc123.js.gz'), gzipSync(JS));
writeFileSync(path.join(dist, 'assets', 'index-abc123.js.br'), brotliCompressSync(JS));
writeFileSync(path.join(dist, 'assets', 'style-def.css'), 'body{}');
writeFileSync(path.join(dist, '.hidden'), 'HIDDEN-CONTENT-4412');
writeFileSync(path.join(path.dirname(dist), 'outside.txt'), 'OUTSIDE-CONTENT-7731');

const s = await startServer(t, { webDir: dist });
const get = (url: string, headers: Record<string, string> = {}) => fetch(s.base + url, { headers });

t.test('the app page at / and at each of its own paths, revalidated on every load', async (t) => {
  for (const p of ['/', '/sign-in', '/farms', '/farms/0193/greenhouses/01/rows/02/cycles/03/week/2026-W07', '/walks/0193', '/keys']) {
    const r = await get(p);
    t.equal(r.status, 200, p);
    t.match(r.headers.get('content-type'), /^text\/html/, p);
    t.equal(r.headers.get('cache-control'), 'no-cache', p);
    t.ok(r.headers.get('etag'), p);
    t.match(r.headers.get('content-security-policy'), /default-src 'self'/, p);
    t.equal(await r.text(), INDEX, p);
  }
});

t.test('every route of the app (web/src/routes.ts) is one the box answers with the page', async (t) => {
  for (const route of ROUTES) {
    const example = route.pattern.replace(/:([a-z_]+)/gi, '0193a');
    const first = example.split('/')[1] ?? '';
    t.ok(first === '' || (APP_SECTIONS as readonly string[]).includes(first), `${route.pattern} is under an app section`);
    const r = await get(example);
    t.equal(r.status, 200, example);
    t.match(r.headers.get('content-type'), /^text\/html/, example);
  }
});

t.test('hashed assets are immutable for a year; precompressed copies go to browsers that take them', async (t) => {
  const plain = await get('/assets/index-abc123.js', { 'accept-encoding': 'identity' });
  t.equal(plain.status, 200);
  t.equal(plain.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  t.match(plain.headers.get('content-type'), /^text\/javascript/);
  t.equal(plain.headers.get('content-encoding'), null);
  t.equal(plain.headers.get('vary'), 'Accept-Encoding');
  t.equal(plain.headers.get('x-content-type-options'), 'nosniff');
  t.equal(await plain.text(), JS);
  // Node's fetch decodes what it asked for; read the raw bytes through the http module instead.
  const raw = async (enc: string) => {
    const http = await import('node:http');
    return new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
      http
        .get(s.base + '/assets/index-abc123.js', { headers: { 'accept-encoding': enc } }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c) => chunks.push(c));
          res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
        })
        .on('error', reject);
    });
  };
  const br = await raw('gzip, deflate, br');
  t.equal(br.headers['content-encoding'], 'br');
  t.equal(brotliDecompressSync(br.body).toString(), JS);
  t.ok(br.body.length < JS.length / 5, 'smaller on the wire');
  const gz = await raw('gzip');
  t.equal(gz.headers['content-encoding'], 'gzip');
  t.equal(gunzipSync(gz.body).toString(), JS);
  const css = await get('/assets/style-def.css', { 'accept-encoding': 'br' });
  t.equal(css.status, 200, 'a file without a compressed copy is sent as it is');
  t.equal(css.headers.get('content-encoding'), null);
});

t.test('a stale compressed copy (older than its file) is not sent', async (t) => {
  const f = path.join(dist, 'assets', 'index-abc123.js');
  const future = new Date(Date.now() + 60_000);
  utimesSync(f, future, future);
  t.teardown(() => utimesSync(f, new Date(), new Date()));
  const r = await get('/assets/index-abc123.js', { 'accept-encoding': 'br, gzip' });
  t.equal(r.headers.get('content-encoding'), null);
  t.equal(await r.text(), JS);
});

t.test('conditional requests: the same ETag answers 304 with no body', async (t) => {
  const first = await get('/');
  const etag = first.headers.get('etag')!;
  const again = await get('/', { 'if-none-match': etag });
  t.equal(again.status, 304);
  t.equal(await again.text(), '');
  const icon = await get('/favicon.svg');
  t.equal(icon.status, 200);
  t.equal(icon.headers.get('cache-control'), 'public, max-age=3600');
  t.equal(icon.headers.get('content-type'), 'image/svg+xml');
});

t.test('HEAD answers the headers of GET', async (t) => {
  const r = await fetch(s.base + '/', { method: 'HEAD' });
  t.equal(r.status, 200);
  t.equal(r.headers.get('content-length'), String(Buffer.byteLength(INDEX)));
});

t.test('the API is never shadowed: /api, /api/..., /openapi.json answer as before', async (t) => {
  const health = await get('/api/health');
  t.equal(health.status, 200);
  t.match(health.headers.get('content-type'), /json/);
  const doc = await get('/openapi.json');
  t.equal(doc.status, 200);
  t.equal(((await doc.json()) as { openapi: string }).openapi, '3.1.0');
  for (const p of ['/api', '/api/', '/api/nothing-here', '/api/farms']) {
    const r = await get(p);
    t.equal(r.status, 404, p);
    t.match(r.headers.get('content-type'), /application\/problem\+json/, p);
  }
  const post = await fetch(s.base + '/', { method: 'POST' });
  t.not(post.status, 200, 'only GET and HEAD reach the app');
});

t.test('no fallback outside the app: unknown paths, missing files, hidden files and paths out of dist are 404 problems', async (t) => {
  for (const p of [
    '/nothing',
    '/farms.txt',
    '/assets/missing-123.js',
    '/assets/index-abc123.js.gz',
    '/.hidden',
    '/assets/../../outside.txt',
    '/%2e%2e/outside.txt',
    '/assets/%2e%2e%2f%2e%2e%2foutside.txt',
    '/index.html/',
    '/farms/x.js',
  ]) {
    const r = await get(p);
    t.equal(r.status, 404, p);
    t.match(r.headers.get('content-type'), /application\/problem\+json/, p);
    t.notMatch(await r.text(), /OUTSIDE-CONTENT|HIDDEN-CONTENT/, p);
  }
});

t.test('an app that is not built: its pages say how to build it, the API answers', async (t) => {
  const bare = await startServer(t, { webDir: path.join(dist, 'missing') });
  const r = await fetch(bare.base + '/farms');
  t.equal(r.status, 503);
  t.match(await r.text(), /not built yet/);
  t.equal((await fetch(bare.base + '/api/health')).status, 200);
  t.equal((await fetch(bare.base + '/assets/index-abc123.js')).status, 404);
});
