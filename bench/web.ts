// `npm run bench web`: the staff app (issue 38).
//  1. First load: the JavaScript that the app's first page loads (entry and preloaded modules, not the
//     chunks loaded later, e.g. the chart's), compressed as the box sends it, against the 200 KB budget.
//  2. The week screen of a crop cycle with a season of data (40 weeks of harvests, irrigation, truss
//     counts, notes, hourly climate), rendered in headless Chromium until every part has answered,
//     against loading a bare page from the same box in the same browser (the baseline), median of 7.
import { readFileSync, readdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { gzipSync, brotliCompressSync } from 'node:zlib';
import { createApp } from '../src/app.js';
import { createLogger } from '../src/log.js';
import { browserMissing, CHROMIUM, CHROMIUM_ARGS } from '../test/helpers/browser.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST = path.join(root, 'web', 'dist');
const BUDGET_KB = 200;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export function firstLoadSizes() {
  const html = readFileSync(path.join(DIST, 'index.html'), 'utf8');
  const first = [...html.matchAll(/<(?:script[^>]*src|link[^>]*rel="modulepreload"[^>]*href)="\/([^"]+\.js)"/g)].map((m) => m[1]!);
  const all = readdirSync(path.join(DIST, 'assets')).filter((f) => f.endsWith('.js'));
  const size = (files: string[]) => {
    let raw = 0,
      gz = 0,
      br = 0;
    for (const f of files) {
      const body = readFileSync(path.join(DIST, f));
      raw += body.length;
      gz += gzipSync(body, { level: 9 }).length;
      br += brotliCompressSync(body).length;
    }
    return { raw_kb: raw / 1024, gzip_kb: gz / 1024, brotli_kb: br / 1024 };
  };
  return { first_load_files: first, first_load: size(first), every_chunk: size(all.map((f) => `assets/${f}`)) };
}

async function season(base: string, adminToken: string) {
  const call = async (method: string, url: string, key: string | null, body?: unknown, raw?: FormData) => {
    const headers: Record<string, string> = key ? { 'x-api-key': key } : { authorization: `Bearer ${adminToken}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const r = await fetch(base + url, { method, headers, body: raw ?? (body === undefined ? undefined : JSON.stringify(body)) });
    const text = await r.text();
    if (r.status >= 300) throw new Error(`${method} ${url}: ${r.status} ${text.slice(0, 300)}`);
    return text ? JSON.parse(text) : undefined;
  };
  const org = await call('POST', '/api/organizations', null, { name: 'Bench Growers' });
  const key = org.key.api_key as string;
  const o = `/api/organizations/${org.organization_id}`;
  const farm = await call('POST', `${o}/farms`, key, { name: 'Westland' });
  const gh = await call('POST', `${o}/farms/${farm.farm_id}/greenhouses`, key, {
    name: 'Kas 4',
    time_zone: 'Europe/Amsterdam',
    latitude: 52,
    longitude: 4.2,
  });
  const ghPath = `${o}/farms/${farm.farm_id}/greenhouses/${gh.greenhouse_id}`;
  const row = await call('POST', `${ghPath}/rows`, key, { name: 'Row 12', plant_count: 240 });
  const cycle = await call('POST', `${ghPath}/rows/${row.row_id}/cycles`, key, {
    name: 'Tomato 2025',
    started_on: '2025-01-06',
    ended_on: '2025-10-31',
    plants_per_m2: 2.5,
    stems_per_m2: 3.3,
  });
  const c = `${ghPath}/rows/${row.row_id}/cycles/${cycle.cycle_id}`;
  const WEEKS = 42;
  const label = (w: number) => `2025-W${String(w).padStart(2, '0')}`;
  // Harvests: two picks a week from week 12, as one CSV import.
  const lines = ['week,kg,note'];
  for (let w = 12; w <= WEEKS; w++) for (const p of [0, 1]) lines.push(`${label(w)},${(180 + 12 * w + 30 * p).toFixed(1)},pick ${p + 1}`);
  const form = new FormData();
  form.append('file', new Blob([lines.join('\n')]), 'harvests.csv');
  await call('POST', `${c}/harvests/csv`, key, undefined, form);
  // Irrigation: one entry a day; truss counts and a note each week; fruit mass twice.
  for (let d = 0; d < WEEKS * 7; d++) {
    const at = new Date(Date.UTC(2025, 0, 6 + d, 7, 30)).toISOString();
    await call('POST', `${c}/irrigation`, key, { at, volume_l: 800 + (d % 50), drain_l: 250 + (d % 20), ec_in: 2.8, ph_in: 5.8 });
  }
  for (let w = 2; w <= WEEKS; w++) {
    const day = new Date(Date.UTC(2025, 0, 6 + (w - 2) * 7 + 7 + 2)).toISOString().slice(0, 10);
    const rows = [];
    for (let p = 1; p <= 5; p++) for (let t = 1; t <= 6; t++) rows.push({ plant: String(p), truss: t, fruits: 4 + ((p + t + w) % 3) });
    await call('PUT', `${c}/truss-counts`, key, { counted_on: day, rows });
    await call('POST', `${c}/weeks/${label(w)}`, key, { text: `Week ${w}: leaf picking, ${w % 3 ? 'sunny' : 'dull'}.` });
  }
  await call('POST', `${c}/fruit-mass`, key, { week: '2025-W10', green_g: 90, turning_g: 95, red_g: 100 });
  await call('POST', `${c}/fruit-mass`, key, { week: '2025-W25', green_g: 100, turning_g: 105, red_g: 110 });
  // Hourly climate for the season: air temperature, humidity, CO2 and radiation.
  const metrics: [string, (h: number) => number][] = [
    ['air_temperature', (h) => 18 + 4 * Math.sin(((h % 24) / 24) * 2 * Math.PI)],
    ['relative_humidity', (h) => 75 + 10 * Math.cos(((h % 24) / 24) * 2 * Math.PI)],
    ['co2', (h) => 600 + 200 * Math.max(0, Math.sin(((h % 24) / 24) * 2 * Math.PI))],
    ['global_radiation', (h) => Math.max(0, 400 * Math.sin((((h % 24) - 6) / 12) * Math.PI))],
  ];
  const hours = WEEKS * 7 * 24;
  for (const [metric, f] of metrics) {
    for (let h0 = 0; h0 < hours; h0 += 10_000) {
      const points = [];
      for (let h = h0; h < Math.min(hours, h0 + 10_000); h++)
        points.push({ metric, value: Math.round(f(h) * 10) / 10, at: new Date(Date.UTC(2025, 0, 6) + h * 3600_000).toISOString() });
      await call('POST', `${c}/climate`, key, { points });
    }
  }
  return {
    key,
    weekPath: `/farms/${farm.farm_id}/greenhouses/${gh.greenhouse_id}/rows/${row.row_id}/cycles/${cycle.cycle_id}/week/${label(36)}`,
    records: { harvests: lines.length - 1, irrigation: WEEKS * 7, truss_counts: WEEKS - 1, climate_readings: hours * metrics.length },
  };
}

export async function runWebBench() {
  const built = spawnSync(process.execPath, [path.join(root, 'scripts', 'build-web.mjs')], { stdio: 'inherit' });
  if (built.status !== 0) throw new Error('the staff app did not build');
  const sizes = firstLoadSizes();
  console.log(
    `first load: ${sizes.first_load_files.join(', ')}: ${sizes.first_load.gzip_kb.toFixed(1)} KB gzip, ${sizes.first_load.brotli_kb.toFixed(1)} KB brotli ` +
      `(${(sizes.first_load.gzip_kb / BUDGET_KB).toFixed(3)}× the ${BUDGET_KB} KB budget); every chunk together ${sizes.every_chunk.gzip_kb.toFixed(1)} KB gzip`,
  );
  const out: Record<string, unknown> = { ...sizes, budget_kb: BUDGET_KB, first_load_gzip_vs_budget: sizes.first_load.gzip_kb / BUDGET_KB };

  const missing = browserMissing();
  if (missing) {
    console.log(`week screen: skipped, ${missing}`);
    return { ...out, week_screen: { skipped: missing } };
  }
  const dataDir = mkdtempSync(path.join(tmpdir(), 'cropwalk-bench-web-'));
  const app = await createApp({
    config: { dataDir, adminToken: 'bench-admin-token-0123456789', authFailuresPerMinute: 0, logLevel: 'silent' },
    env: {},
    logger: createLogger('silent', {}, () => undefined),
    startBackground: false,
  });
  const server = await app.listen(0, '127.0.0.1');
  const base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS });
  try {
    const started = Date.now();
    const data = await season(base, 'bench-admin-token-0123456789');
    console.log(`a season stored through the API in ${((Date.now() - started) / 1000).toFixed(1)} s: ${JSON.stringify(data.records)}`);
    const ctx = await browser.newContext({ viewport: { width: 1366, height: 768 } });
    const page = await ctx.newPage();
    await page.goto(base + '/');
    await page.getByLabel('API key').fill(data.key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.locator('h1').first().waitFor();
    const week: number[] = [];
    const blank: number[] = [];
    for (let i = 0; i < 8; i++) {
      // A fresh page each time: the app starts from nothing (its files from the browser's cache, as on a second visit).
      let t0 = performance.now();
      await page.goto(base + '/api/health');
      await page.locator('body').waitFor();
      const b = performance.now() - t0;
      t0 = performance.now();
      await page.goto(base + data.weekPath);
      await page.locator('section.week[aria-busy="false"]').waitFor({ timeout: 30_000 });
      await page.locator('.chart canvas').waitFor({ timeout: 30_000 });
      const w = performance.now() - t0;
      if (i === 0) continue; // warm-up: the first load also fills the cache and compiles
      week.push(w);
      blank.push(b);
    }
    const res = {
      week_ms: median(week),
      blank_ms: median(blank),
      ratio: median(week) / median(blank),
      runs: week.length,
      records: data.records,
    };
    console.log(
      `week screen (a season of data): ${res.week_ms.toFixed(0)} ms, a bare page from the box ${res.blank_ms.toFixed(0)} ms: ${res.ratio.toFixed(1)}× (median of ${res.runs})`,
    );
    return { ...out, week_screen: res };
  } finally {
    await browser.close();
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  console.log(JSON.stringify(await runWebBench(), null, 2));
}
