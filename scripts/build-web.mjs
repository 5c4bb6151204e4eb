#!/usr/bin/env node
// Builds the staff app (web/) into web/dist when it is missing or older than its sources, and
// writes a gzip and a brotli copy of each text asset beside it, which the box serves to browsers
// that accept them (src/http/web-app.ts). Plain JavaScript: setup.mjs runs it before the
// TypeScript tooling is known to be there. `node scripts/build-web.mjs [--force]`.
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const WEB_DIR = path.join(root, 'web');
export const DIST_DIR = path.join(WEB_DIR, 'dist');
const STAMP = path.join(DIST_DIR, 'index.html');
const COMPRESSIBLE = /\.(js|css|html|svg|json|txt|map)$/;

function* files(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) yield* files(p);
    else yield p;
  }
}

/** The newest modification time among the app's sources (and the lock file, which pins Vite and Preact). */
function newestSource() {
  let newest = 0;
  const sources = [path.join(WEB_DIR, 'src'), path.join(WEB_DIR, 'public')];
  for (const dir of sources) if (existsSync(dir)) for (const f of files(dir)) newest = Math.max(newest, statSync(f).mtimeMs);
  for (const f of ['index.html', 'vite.config.ts']) newest = Math.max(newest, statSync(path.join(WEB_DIR, f)).mtimeMs);
  const lock = path.join(root, 'package-lock.json');
  if (existsSync(lock)) newest = Math.max(newest, statSync(lock).mtimeMs);
  return newest;
}

export function webBuildIsStale() {
  return !existsSync(STAMP) || statSync(STAMP).mtimeMs < newestSource();
}

function precompress() {
  for (const f of files(DIST_DIR)) {
    if (!COMPRESSIBLE.test(f)) continue;
    const body = readFileSync(f);
    writeFileSync(`${f}.gz`, gzipSync(body, { level: 9 }));
    writeFileSync(`${f}.br`, brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }));
  }
}

/** Builds when stale (or forced); returns whether it built. Throws when the build fails. */
export function ensureWebBuild({ force = false, say = (m) => process.stderr.write(`[web] ${m}\n`) } = {}) {
  if (!force && !webBuildIsStale()) return false;
  say('building the staff app (web/ → web/dist)');
  const vite = path.join(root, 'node_modules', 'vite', 'bin', 'vite.js');
  const r = spawnSync(process.execPath, [vite, 'build', WEB_DIR, '--logLevel', 'warn'], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) throw new Error(`vite build failed (exit ${r.status ?? r.signal})`);
  precompress();
  // The stamp is written last, so a build cut short is built again next time.
  const html = readFileSync(STAMP);
  writeFileSync(STAMP, html);
  return true;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const built = ensureWebBuild({ force: process.argv.includes('--force') });
    if (!built) process.stderr.write('[web] web/dist is up to date\n');
  } catch (err) {
    process.stderr.write(`[web] ${err.message}\n`);
    process.exit(1);
  }
}
