import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Context } from 'koa';

/**
 * The staff app (web/, built into web/dist by scripts/build-web.mjs) served at `/`, beside the API.
 * It answers GET and HEAD only, never under /api or for /openapi.json, so no API path can be
 * shadowed; anything it does not answer goes on to the API's dispatch (and its 404 problem).
 *
 * - `/assets/*`: Vite's content-hashed files, cached for a year as immutable.
 * - other files at the root of dist (the icon): cached for an hour.
 * - the app's own paths (APP_PATHS, the routes of web/src/routes.ts): index.html, revalidated
 *   on every load (no-cache + ETag) so a rebuilt app is picked up at once.
 * Precompressed `.br`/`.gz` copies written by the build are sent to browsers that accept them.
 */

/** The app's client-side routes: `/`, and everything under these first segments (web/src/routes.ts). */
export const APP_SECTIONS = ['sign-in', 'farms', 'walks', 'keys'] as const;
const APP_PATH = new RegExp(`^/(?:(?:${APP_SECTIONS.join('|')})(?:/[^.]*)?)?$`);

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

const IMMUTABLE = 'public, max-age=31536000, immutable';
const HOUR = 'public, max-age=3600';
const REVALIDATE = 'no-cache';

// Everything the app loads comes from the box itself: no CDN, no external fonts.
const CSP =
  "default-src 'self'; img-src 'self' data: blob:; style-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'";

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>cropwalk</title></head>
<body style="font:18px/1.5 system-ui,sans-serif;max-width:40em;margin:2em auto;padding:0 1em">
<h1>The staff app is not built yet</h1>
<p>Run <code>npm start</code> (it builds the app when it is missing) or <code>node scripts/build-web.mjs</code>, then reload this page.</p>
<p>The API answers meanwhile: see <a href="/api/docs">/api/docs</a>.</p></body></html>`;

function isApiPath(p: string): boolean {
  return p === '/api' || p.startsWith('/api/') || p === '/openapi.json';
}

/**
 * Answers the request from the built app when it is the app's to answer; returns false to let the
 * API answer it. `dir` is the build output (config WEB_DIR, default web/dist).
 */
export function webApp(dir: string): (ctx: Context) => Promise<boolean> {
  const root = path.resolve(dir);
  return async (ctx) => {
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') return false;
    const p = ctx.path;
    if (isApiPath(p)) return false;
    if (APP_PATH.test(p)) return sendFile(ctx, root, 'index.html', REVALIDATE, true);
    // A file of the build: one path segment at the root, or /assets/<name>; nothing hidden, nothing above dist.
    const m = /^\/(?:(assets)\/)?([A-Za-z0-9_-][A-Za-z0-9._-]*)$/.exec(p);
    if (!m || m[2]!.includes('..') || m[2]!.endsWith('.gz') || m[2]!.endsWith('.br')) return false;
    const rel = m[1] ? path.join('assets', m[2]!) : m[2]!;
    return sendFile(ctx, root, rel, m[1] ? IMMUTABLE : HOUR, false);
  };
}

async function sizeAndTime(file: string): Promise<{ size: number; mtimeMs: number } | undefined> {
  try {
    const s = await stat(file);
    return s.isFile() ? s : undefined;
  } catch {
    return undefined;
  }
}

async function sendFile(ctx: Context, root: string, rel: string, cacheControl: string, isPage: boolean): Promise<boolean> {
  const file = path.join(root, rel);
  const info = await sizeAndTime(file);
  if (!info) {
    if (!isPage) return false;
    ctx.status = 503;
    ctx.type = 'text/html; charset=utf-8';
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Retry-After', '60');
    ctx.body = NOT_BUILT;
    return true;
  }
  const type = TYPES[path.extname(file)] ?? 'application/octet-stream';
  // Precompressed copies: the smallest the browser accepts, when the build wrote it.
  const accepts = String(ctx.get('accept-encoding'));
  let encoding: 'br' | 'gzip' | undefined;
  let sendPath = file;
  let sendInfo = info;
  for (const [enc, ext] of [
    ['br', '.br'],
    ['gzip', '.gz'],
  ] as const) {
    if (!new RegExp(`\\b${enc}\\b`).test(accepts)) continue;
    const alt = await sizeAndTime(file + ext);
    // A copy older than its file is left over from an earlier build: not sent.
    if (alt && alt.mtimeMs >= info.mtimeMs) {
      encoding = enc;
      sendPath = file + ext;
      sendInfo = alt;
      break;
    }
  }
  const etag = `W/"${info.size.toString(16)}-${Math.floor(info.mtimeMs).toString(16)}${encoding ? `-${encoding}` : ''}"`;
  ctx.set('Cache-Control', cacheControl);
  ctx.set('ETag', etag);
  ctx.set('Last-Modified', new Date(info.mtimeMs).toUTCString());
  ctx.set('Vary', 'Accept-Encoding');
  ctx.set('X-Content-Type-Options', 'nosniff');
  if (isPage) {
    ctx.set('Content-Security-Policy', CSP);
    ctx.set('Referrer-Policy', 'same-origin');
    ctx.set('X-Frame-Options', 'DENY');
  }
  ctx.type = type;
  const match = String(ctx.get('if-none-match'));
  if (match && match.split(/\s*,\s*/).includes(etag)) {
    ctx.status = 304;
    return true;
  }
  if (encoding) ctx.set('Content-Encoding', encoding);
  ctx.status = 200;
  ctx.body = await readFile(sendPath);
  ctx.length = sendInfo.size;
  return true;
}
