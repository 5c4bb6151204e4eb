/**
 * Walk scoring through the running service, against baselines measured in the
 * same run:
 *
 *  - a rendered 60 s 1080p30 walk (scripts/render-walk.ts; cached in bench/out/walks),
 *  - baseline: ffmpeg decoding that clip alone as an upload with default options reads it
 *    (adaptive sampling reads every 0.25 s and scores every 0.5 s at a walking pace),
 *  - the service: upload → queued → scored in the worker → done, timed end to end,
 *    with frames per second and the process's peak RSS (main thread + worker; ffmpeg
 *    children are separate processes and not counted),
 *  - the API's p99 latency of GET /api/health on loopback while the walk scores,
 *    against the p99 of the same requests when the box is idle.
 *
 * Ratios printed: score time / decode time, score time / clip length (below 1 is
 * faster than real time), p99 while scoring / p99 idle.
 *
 *   node --import tsx bench/scoring-service.ts [--seconds 60] [--json] [--model path/to/manifest.json] [--threads N]
 *
 * --model: the service configured with that model manifest (DETECTOR and MODELS_DIR) instead of
 * the built-in detector; bench/scoring-model.ts builds YOLOv8-sized ones under bench/out/models.
 * --threads: SCORING_THREADS for the run (default: the service's, one per core); `--threads 0`
 * is the walk detected on the scoring process's own thread alone, the baseline of the threads.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { createApp } from '../src/app.js';
import { DEFAULTS } from '../src/config.js';
import { createLogger } from '../src/log.js';
import { decodeFrames } from '../src/vision/media/decode.js';
import { optionsFrom, walkOptionsFrom } from '../src/walks/jobs/options.js';
import { decodePlan } from '../src/vision/walk.js';
import { renderWalk, type RenderedWalk } from '../scripts/render/walk.js';
import type { WalkTruth } from '../scripts/render/truth.js';

// A video upload with no options (what the service is asked for below), read as its walk reads it.
const DECODE = decodePlan(walkOptionsFrom(optionsFrom({}, { video: true })));

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const OUT = path.join(ROOT, 'bench', 'out', 'walks');
const ADMIN = 'bench-admin-token-0123456789abcdef';

export interface ScoringServiceFigures {
  clip: { seconds: number; width: number; height: number; fps: number; bytes: number };
  decode: { ms: number; frames: number };
  service: {
    ms: number;
    uploadMs: number;
    queuedMs: number;
    frames: number;
    framesPerSecond: number;
    status: string;
    counts: unknown;
    truthFruit: number;
    detector: string | null;
    threads: number;
  };
  ratios: { scoreOverDecode: number; scoreOverClip: number; p99DuringOverIdle: number };
  peakRssMb: number;
  api: { idle: LatencyStats; duringScoring: LatencyStats };
  goals: { fasterThanRealTime: boolean; p99Under50ms: boolean };
}

interface LatencyStats {
  requests: number;
  p50: number;
  p99: number;
  max: number;
}

/** Same render and cache name as bench/scoring-walk.ts, so the two benches share one clip. */
async function cachedWalk(seconds: number): Promise<RenderedWalk> {
  const name = `speed-${seconds}s-1080p`;
  const truthFile = path.join(OUT, `${name}.json`);
  const file = path.join(OUT, `${name}.mp4`);
  if (existsSync(truthFile) && existsSync(file)) {
    return { files: [file], truthFile, truth: JSON.parse(await readFile(truthFile, 'utf8')) as WalkTruth };
  }
  return renderWalk({ out: OUT, seconds, fps: 30, width: 1920, height: 1080, speed: 0.3, seed: 21, name });
}

function stats(samples: number[]): LatencyStats {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => (s.length ? s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)]! : NaN);
  const r = (x: number) => Math.round(x * 100) / 100;
  return { requests: s.length, p50: r(at(0.5)), p99: r(at(0.99)), max: r(s.at(-1) ?? NaN) };
}

/** Sequential GETs on loopback, bounded by count and time; a short pause keeps it a latency probe, not a load test. */
async function probe(
  url: string,
  options: { maxRequests: number; maxMs: number; pauseMs: number; until?: () => boolean },
): Promise<number[]> {
  const out: number[] = [];
  const deadline = Date.now() + options.maxMs;
  while (out.length < options.maxRequests && Date.now() < deadline && !(options.until?.() ?? false)) {
    const t0 = performance.now();
    const r = await fetch(url);
    await r.arrayBuffer();
    out.push(performance.now() - t0);
    if (r.status !== 200) throw new Error(`GET ${url}: ${r.status}`);
    await new Promise((resolve) => setTimeout(resolve, options.pauseMs));
  }
  return out;
}

export async function runScoringServiceBench(
  options: { seconds?: number; quiet?: boolean; model?: string; threads?: number } = {},
): Promise<ScoringServiceFigures> {
  const seconds = options.seconds ?? 60;
  const walk = await cachedWalk(seconds);
  const clip = walk.files[0]!;
  const bytes = readFileSync(clip);

  // Baseline: ffmpeg decoding the same clip as the walk reads it, nothing else.
  let t0 = performance.now();
  let decoded = 0;
  for await (const f of decodeFrames(clip, DECODE)) {
    void f;
    decoded++;
  }
  const decodeMs = performance.now() - t0;

  const dataDir = mkdtempSync(path.join(tmpdir(), 'cropwalk-bench-'));
  const detector = options.model ? { detector: path.basename(options.model), modelsDir: path.dirname(path.resolve(options.model)) } : {};
  const threads = options.threads !== undefined ? { scoringThreads: options.threads } : {};
  const app = await createApp({
    config: { dataDir, adminToken: ADMIN, logLevel: 'warn', ...detector, ...threads },
    env: {},
    logger: createLogger('warn'),
  });
  try {
    const server = await app.listen(0, '127.0.0.1');
    const address = server.address();
    const base = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const org = (await (
      await fetch(`${base}/api/organizations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'bench' }),
      })
    ).json()) as { key: { api_key: string } };
    const key = org.key.api_key;
    const health = `${base}/api/health`;

    await probe(health, { maxRequests: 50, maxMs: 5_000, pauseMs: 5 });
    const idle = await probe(health, { maxRequests: 400, maxMs: 20_000, pauseMs: 20 });

    let peakRss = process.memoryUsage().rss;
    const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);

    t0 = performance.now();
    const form = new FormData();
    form.append('file', new Blob([bytes]), 'walk.mp4');
    const accepted = await fetch(`${base}/api/observations`, { method: 'POST', headers: { 'x-api-key': key }, body: form });
    const uploadMs = performance.now() - t0;
    const job = (await accepted.json()) as { job_id: string; status: string };
    if (accepted.status !== 202) throw new Error(`upload: ${accepted.status} ${JSON.stringify(job)}`);

    interface WalkAnswer {
      status: string;
      error: string | null;
      counts: unknown;
      detector: string | null;
      started_at: string | null;
      created_at: string;
      result: { frames: unknown[] } | null;
    }
    let ended = false;
    const poller = (async (): Promise<WalkAnswer> => {
      for (;;) {
        const w = (await (await fetch(`${base}/api/observations/${job.job_id}`, { headers: { 'x-api-key': key } })).json()) as WalkAnswer;
        if (w.status === 'done' || w.status === 'failed') {
          ended = true;
          return w;
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    })();
    const during = await probe(health, { maxRequests: 20_000, maxMs: 30 * 60_000, pauseMs: 20, until: () => ended });
    const f = await poller;
    const serviceMs = performance.now() - t0;
    clearInterval(rssTimer);
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
    const frames = f.result?.frames.length ?? 0;

    const idleStats = stats(idle);
    const duringStats = stats(during);
    const r = (x: number) => Math.round(x * 1000) / 1000;
    const figures: ScoringServiceFigures = {
      clip: { seconds, width: 1920, height: 1080, fps: 30, bytes: bytes.length },
      decode: { ms: Math.round(decodeMs), frames: decoded },
      service: {
        ms: Math.round(serviceMs),
        uploadMs: Math.round(uploadMs),
        queuedMs: f.started_at ? Date.parse(f.started_at) - Date.parse(f.created_at) : 0,
        frames,
        framesPerSecond: r(frames / (serviceMs / 1000)),
        status: f.error ? `${f.status}: ${f.error}` : f.status,
        counts: f.counts,
        truthFruit: walk.truth.fruit.length,
        detector: f.detector,
        threads: options.threads ?? DEFAULTS.scoringThreads,
      },
      ratios: {
        scoreOverDecode: r(serviceMs / decodeMs),
        scoreOverClip: r(serviceMs / (seconds * 1000)),
        p99DuringOverIdle: r(duringStats.p99 / idleStats.p99),
      },
      peakRssMb: Math.round(peakRss / 1024 / 1024),
      api: { idle: idleStats, duringScoring: duringStats },
      goals: { fasterThanRealTime: serviceMs < seconds * 1000, p99Under50ms: duringStats.p99 < 50 },
    };
    if (!options.quiet) print(figures);
    return figures;
  } finally {
    await app.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function print(x: ScoringServiceFigures): void {
  console.log(
    `clip: ${x.clip.seconds} s ${x.clip.width}x${x.clip.height}@${x.clip.fps}, ${(x.clip.bytes / 1e6).toFixed(1)} MB; walk truth ${x.service.truthFruit} fruit`,
  );
  console.log(
    `baseline  ffmpeg decode every ${DECODE.sampleSeconds} s, as the walk reads it: ${x.decode.ms} ms, ${x.decode.frames} frames`,
  );
  console.log(
    `service   upload → done: ${x.service.ms} ms (upload ${x.service.uploadMs} ms), ${x.service.frames} frames, ${x.service.framesPerSecond} frames/s, ${x.service.status}, detector ${x.service.detector} on ${x.service.threads} detection thread${x.service.threads === 1 ? '' : 's'}, counts ${JSON.stringify(x.service.counts)}`,
  );
  console.log(
    `ratio     score / decode: ${x.ratios.scoreOverDecode}×   score / clip length: ${x.ratios.scoreOverClip}× (below 1 is faster than real time)`,
  );
  console.log(
    `API       GET /api/health p99 idle ${x.api.idle.p99} ms (${x.api.idle.requests} req), while scoring ${x.api.duringScoring.p99} ms (${x.api.duringScoring.requests} req, max ${x.api.duringScoring.max} ms): ${x.ratios.p99DuringOverIdle}× idle`,
  );
  console.log(`memory    peak RSS of the API process (the worker process, heap-capped at 1 GB, and ffmpeg not counted): ${x.peakRssMb} MB`);
  console.log(
    `goals     faster than real time: ${x.goals.fasterThanRealTime ? 'yes' : 'NO'}; API p99 under 50 ms while scoring: ${x.goals.p99Under50ms ? 'yes' : 'NO'}`,
  );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      seconds: { type: 'string' },
      json: { type: 'boolean', default: false },
      model: { type: 'string' },
      threads: { type: 'string' },
    },
  });
  const figures = await runScoringServiceBench({
    seconds: values.seconds ? Number(values.seconds) : undefined,
    quiet: values.json,
    model: values.model,
    threads: values.threads !== undefined ? Number(values.threads) : undefined,
  });
  if (values.json) console.log(JSON.stringify(figures, null, 2));
}
