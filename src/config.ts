import { readFileSync, existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { IANAZone } from 'luxon';

/**
 * Every setting the service reads, with a default that works on a laptop.
 * Sources, later wins: defaults, `DATA_DIR/config.json` (or CROPWALK_CONFIG), the environment.
 */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /**
   * postgres://user:password@host:port/database to store in PostgreSQL (an upstream that outgrows
   * one file, docs/postgres.md); absent, the service stores in SQLite under dataDir. Files (walk
   * clips, frames) stay under dataDir either way.
   */
  databaseUrl: string | undefined;
  /** PostgreSQL connections this process keeps at most. */
  pgPoolMax: number;
  adminToken: string | undefined;
  upstreamUrl: string | undefined;
  upstreamKey: string | undefined;
  weatherUrl: string;
  /** How long a weather refresh waits for the weather service (ms) before answering 503. */
  weatherTimeoutMs: number;
  climateWatchDir: string | undefined;
  logLevel: LogLevel;
  /** Cap on any JSON body, bytes. */
  jsonBodyLimit: number;
  /** Cap on one uploaded climate or harvest file, bytes. */
  climateUploadLimit: number;
  /** Cap on one uploaded harvest CSV, bytes. */
  harvestUploadLimit: number;
  /** Cap on one uploaded clip or photo, bytes. */
  videoUploadLimit: number;
  /** Scoring jobs that may run at once. */
  scoringConcurrency: number;
  /**
   * Threads each scoring job detects frames on, ahead of their turn; 0 detects on the job's
   * own thread. The counts are the same either way; the default is one per core, at most 4.
   */
  scoringThreads: number;
  /**
   * "auto" (the newest usable model in `modelsDir`, read at start, else the built-in detector),
   * "builtin", or the file name of a model manifest in `modelsDir`.
   */
  detector: string;
  /** Folder of model manifests and ONNX files. */
  modelsDir: string;
  /** Days a scored walk's uploaded clips are kept (for scoring it again); 0 keeps them for ever. */
  walkClipKeepDays: number;
  /** Days a scored walk's frames and overlays are kept; 0 keeps them for ever. */
  walkFrameKeepDays: number;
  /** Below this many free bytes under dataDir, the oldest scored walks' clips, then frames, go early; 0 never. */
  diskReserve: number;
  /** Failed key attempts per client per minute before 429. */
  authFailuresPerMinute: number;
  /** Trust X-Forwarded-* (behind a TLS-terminating proxy). */
  trustProxy: boolean;
  /** The staff app's build output, served at `/` (scripts/build-web.mjs writes it). */
  webDir: string;
  /** The zone the box's own schedules (backup, retention, sync) are read in; an IANA name. */
  scheduleTimeZone: string;
  /** Per schedule: on, off or a cron pattern (SCHEDULE_<NAME>, or `schedules` in the config file). */
  schedules: Record<string, string>;
  /** Folder of the nightly backups (a USB disk, say); default DATA_DIR/backups. */
  backupDir: string | undefined;
  /** Backups kept: the oldest go once there are more. */
  backupKeep: number;
  /** Serial ports with a scale, comma-separated (/dev/ttyUSB0); off when unset. */
  scalePort: string | undefined;
  scaleBaud: number;
  /** Data bits, parity, stop bits: 8N1, 7E1... */
  scaleFraming: string;
  /** The crop cycle a scale records into until PUT /api/scales/{port} sets one. */
  scaleCycleId: string | undefined;
  /** A stable reading within this many kg of zero is zero. */
  scaleZeroKg: number;
  /** A plain line (no stability flag) is stable after this many same readings in a row. */
  scalePlainRepeats: number;
  /** First and longest wait before reopening a scale's port, ms (doubled after each failure). */
  scaleReconnectMinMs: number;
  scaleReconnectMaxMs: number;
  /** On SIGTERM, the longest the service takes to stop before it exits anyway, ms. */
  stopTimeoutMs: number;
  /** Seconds between syncs with the upstream (docs/sync.md); 0 syncs only after writes and when asked. */
  syncIntervalS: number;
  /** Pushed batches an upstream applies at once, and how many more wait before it answers 503 upstream_busy (src/sync/admission.ts). */
  syncPushAtOnce: number;
  syncPushWaiting: number;
  /** Walk clips travel to the upstream too (off: row videos are large). */
  syncClips: boolean;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

const ENV_KEYS: Record<keyof Config, string> = {
  port: 'PORT',
  host: 'HOST',
  dataDir: 'DATA_DIR',
  databaseUrl: 'DATABASE_URL',
  pgPoolMax: 'PG_POOL_MAX',
  adminToken: 'ADMIN_TOKEN',
  upstreamUrl: 'UPSTREAM_URL',
  upstreamKey: 'UPSTREAM_KEY',
  weatherUrl: 'WEATHER_URL',
  weatherTimeoutMs: 'WEATHER_TIMEOUT_MS',
  climateWatchDir: 'CLIMATE_WATCH_DIR',
  logLevel: 'LOG_LEVEL',
  jsonBodyLimit: 'JSON_BODY_LIMIT',
  climateUploadLimit: 'CLIMATE_UPLOAD_LIMIT',
  harvestUploadLimit: 'HARVEST_UPLOAD_LIMIT',
  videoUploadLimit: 'VIDEO_UPLOAD_LIMIT',
  scoringConcurrency: 'SCORING_CONCURRENCY',
  scoringThreads: 'SCORING_THREADS',
  detector: 'DETECTOR',
  modelsDir: 'MODELS_DIR',
  walkClipKeepDays: 'WALK_CLIP_KEEP_DAYS',
  walkFrameKeepDays: 'WALK_FRAME_KEEP_DAYS',
  diskReserve: 'DISK_RESERVE',
  authFailuresPerMinute: 'AUTH_FAILURES_PER_MINUTE',
  trustProxy: 'TRUST_PROXY',
  webDir: 'WEB_DIR',
  scheduleTimeZone: 'SCHEDULE_TIME_ZONE',
  schedules: 'SCHEDULE_<NAME>',
  backupDir: 'BACKUP_DIR',
  backupKeep: 'BACKUP_KEEP',
  scalePort: 'SCALE_PORT',
  scaleBaud: 'SCALE_BAUD',
  scaleFraming: 'SCALE_FRAMING',
  scaleCycleId: 'SCALE_CYCLE_ID',
  scaleZeroKg: 'SCALE_ZERO_KG',
  scalePlainRepeats: 'SCALE_PLAIN_REPEATS',
  scaleReconnectMinMs: 'SCALE_RECONNECT_MIN_MS',
  scaleReconnectMaxMs: 'SCALE_RECONNECT_MAX_MS',
  stopTimeoutMs: 'STOP_TIMEOUT_MS',
  syncIntervalS: 'SYNC_INTERVAL_S',
  syncPushAtOnce: 'SYNC_PUSH_AT_ONCE',
  syncPushWaiting: 'SYNC_PUSH_WAITING',
  syncClips: 'SYNC_CLIPS',
};

/**
 * An upstream's push admission by the machine's cores (docs/postgres.md, "Admission by the
 * machine's cores, and a warmed benchmark"). A pushed batch is CPU, in this process and in the database, and on a small
 * machine the two share the cores: past about half of them at once, a batch only waits for CPU
 * behind the others, and its wait is added to their answer times. Those waiting are as many as
 * those applying, so a batch waits about one batch's time; more boxes are told to come back
 * (Retry-After). At most 8 at once, under the pool's ten connections (one per batch applying).
 */
export function pushAdmissionFor(cores: number): { atOnce: number; waiting: number } {
  const atOnce = Math.max(1, Math.min(8, Math.floor(cores / 2)));
  return { atOnce, waiting: atOnce };
}

const PUSH_ADMISSION = pushAdmissionFor(availableParallelism());

export const DEFAULTS: Config = {
  port: 8080,
  host: '0.0.0.0',
  dataDir: './data',
  databaseUrl: undefined,
  pgPoolMax: 10,
  adminToken: undefined,
  upstreamUrl: undefined,
  upstreamKey: undefined,
  weatherUrl: 'https://api.open-meteo.com',
  weatherTimeoutMs: 15_000,
  climateWatchDir: undefined,
  logLevel: 'info',
  jsonBodyLimit: 1024 * 1024,
  climateUploadLimit: 50 * 1024 * 1024,
  harvestUploadLimit: 5 * 1024 * 1024,
  videoUploadLimit: 2 * 1024 * 1024 * 1024,
  scoringConcurrency: 1,
  // Each thread holds a frame's planes and masks (about 140 MB at 1280 px): past four, a
  // Jetson's memory goes faster than the walk.
  scoringThreads: Math.min(4, availableParallelism()),
  // The trained model ships in models/: a box runs it, and the built-in detector when it cannot.
  detector: 'auto',
  modelsDir: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'models'),
  // Clips are the bulk of a walk's files (up to 2 GiB each) and are needed only to score it
  // again: a month is time enough for that. Frames (about 230 kB per scored frame with its
  // overlay, measured on the labelled photos) are what staff look back at, so kept for ever.
  walkClipKeepDays: 30,
  walkFrameKeepDays: 0,
  // Above the 1 GiB at which /api/health says the box is short of room (LOW_STORAGE_BYTES), so
  // a small disk (a Jetson's eMMC) gives up old walks' files before it refuses the next upload.
  diskReserve: 2 * 1024 ** 3,
  authFailuresPerMinute: 20,
  trustProxy: false,
  webDir: path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'web', 'dist'),
  // The zone the system is set to (/etc/localtime), which is where a person reads "02:30".
  scheduleTimeZone: Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC',
  schedules: {},
  backupDir: undefined,
  // Two weeks of nights: a mistake noticed a week late can still be undone.
  backupKeep: 14,
  scalePort: undefined,
  scaleBaud: 9600,
  scaleFraming: '8N1',
  scaleCycleId: undefined,
  // 50 g: more than an indicator's drift at zero, less than the lightest crate of fruit.
  scaleZeroKg: 0.05,
  scalePlainRepeats: 3,
  scaleReconnectMinMs: 1000,
  scaleReconnectMaxMs: 30_000,
  // Under systemd's TimeoutStopSec (30 s, systemd/cropwalk.service), so the service, not SIGKILL, ends it.
  stopTimeoutMs: 20_000,
  syncIntervalS: 60,
  syncPushAtOnce: PUSH_ADMISSION.atOnce,
  syncPushWaiting: PUSH_ADMISSION.waiting,
  syncClips: false,
};

/** More detection threads than this only add memory: a frame's analysis is the unit of work. */
const MAX_SCORING_THREADS = 32;

const LOG_LEVELS: LogLevel[] = ['debug', 'info', 'warn', 'error', 'silent'];

function coerce<K extends keyof Config>(key: K, raw: unknown): Config[K] {
  const fallback = DEFAULTS[key];
  if (raw === undefined || raw === null || raw === '') return fallback;
  if (typeof fallback === 'number') {
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0) throw new Error(`setting ${ENV_KEYS[key]} must be a non-negative number, got ${String(raw)}`);
    if (key === 'scoringThreads' && !(Number.isInteger(n) && n <= MAX_SCORING_THREADS)) {
      throw new Error(`setting SCORING_THREADS must be a whole number from 0 to ${MAX_SCORING_THREADS}, got ${String(raw)}`);
    }
    if ((key === 'syncPushAtOnce' || key === 'syncPushWaiting') && !(Number.isInteger(n) && (n >= 1 || key === 'syncPushWaiting'))) {
      throw new Error(`setting ${ENV_KEYS[key]} must be a whole number${key === 'syncPushAtOnce' ? ' from 1' : ''}, got ${String(raw)}`);
    }
    return n as Config[K];
  }
  if (typeof fallback === 'boolean') return (raw === true || raw === 'true' || raw === '1') as Config[K];
  if (key === 'logLevel') {
    if (!LOG_LEVELS.includes(raw as LogLevel)) throw new Error(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);
  }
  return String(raw) as Config[K];
}

/**
 * SCHEDULE_<NAME>=on|off|pattern settings, by schedule name (lower case): from the config file's
 * `schedules` object, then the environment. Checked against the schedules when the service
 * starts (src/schedules/scheduler.ts), which knows their names.
 */
function scheduleSettings(env: NodeJS.ProcessEnv, fromFile: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (fromFile !== undefined) {
    if (typeof fromFile !== 'object' || fromFile === null || Array.isArray(fromFile))
      throw new Error('setting schedules in the config file must be an object of name: "on" | "off" | "cron pattern"');
    for (const [k, v] of Object.entries(fromFile)) out[k.toLowerCase()] = String(v);
  }
  for (const [k, v] of Object.entries(env)) {
    if (k === 'SCHEDULE_TIME_ZONE' || !k.startsWith('SCHEDULE_') || v === undefined) continue;
    out[k.slice('SCHEDULE_'.length).toLowerCase()] = v;
  }
  return out;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env, overrides: Partial<Config> = {}): Config {
  const dataDir = path.resolve(overrides.dataDir ?? env.DATA_DIR ?? DEFAULTS.dataDir);
  const file = env.CROPWALK_CONFIG ?? path.join(dataDir, 'config.json');
  let fromFile: Record<string, unknown> = {};
  if (existsSync(file)) {
    fromFile = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  }
  const config = { ...DEFAULTS };
  for (const key of Object.keys(ENV_KEYS) as (keyof Config)[]) {
    if (key === 'schedules') {
      config.schedules = scheduleSettings(env, fromFile.schedules);
      continue;
    }
    const envName = ENV_KEYS[key];
    const raw = env[envName] ?? fromFile[envName] ?? fromFile[key];
    (config as Record<string, unknown>)[key] = coerce(key, raw);
  }
  Object.assign(config, overrides);
  config.dataDir = dataDir;
  if (!IANAZone.isValidZone(config.scheduleTimeZone))
    throw new Error(`setting SCHEDULE_TIME_ZONE must be an IANA time zone (Europe/Amsterdam), got ${config.scheduleTimeZone}`);
  config.modelsDir = path.resolve(config.modelsDir);
  config.webDir = path.resolve(config.webDir);
  return config;
}
