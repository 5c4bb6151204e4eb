import path from 'node:path';
import { lstat } from 'node:fs/promises';
import { EventEmitter } from 'node:events';
import { watch, type FSWatcher } from 'chokidar';
import { DateTime } from 'luxon';
import type { Logger } from '../../log.js';
import type { Actor } from '../../db/store.js';
import type { CycleTable, GreenhouseTable } from '../../db/schema.js';
import { UUID_PATTERN } from '../../db/ids.js';
import { DomainError } from '../../errors.js';
import type { CycleScope } from '../../registry/scope.js';
import { importExport, sha256File, type ClimateDeps } from '../imports/service.js';
import { recordFailedImport } from '../imports/engine.js';
import { savedMapping } from '../imports/mappings.js';
import type { ConfirmedMapping } from '../exports-reader/index.js';

export const WATCHER_ACTOR: Actor = { keyId: null, label: 'watcher' };
const UUID = new RegExp(UUID_PATTERN);

export type Outcome =
  { kind: 'imported'; importId: string } | { kind: 'failed'; importId: string; reason: string } | { kind: 'skipped'; reason: string };

export interface WatcherOptions {
  dir: string;
  deps: ClimateDeps;
  log: Logger;
  /** Largest file imported, bytes (the upload cap). */
  limitBytes: number;
  /** How long a file's size must stay the same before it is read (ms). */
  stabilityMs?: number;
  pollMs?: number;
  /** Use polling instead of inotify (network shares, some containers). */
  usePolling?: boolean;
}

/**
 * The greenhouse's current crop cycle: the one with the latest `started_on`
 * that has not ended, i.e. `ended_on` is empty or today or later on the
 * greenhouse's calendar.
 */
export async function currentCycle(
  deps: ClimateDeps,
  greenhouse: GreenhouseTable,
  now: DateTime = DateTime.fromMillis(deps.clock.now()),
): Promise<CycleTable | undefined> {
  const today = now.setZone(greenhouse.time_zone).toISODate()!;
  return deps.db
    .selectFrom('cycles')
    .selectAll()
    .where('greenhouse_id', '=', greenhouse.id)
    .where((eb) => eb.or([eb('ended_on', 'is', null), eb('ended_on', '>=', today)]))
    .orderBy('started_on', 'desc')
    .orderBy('id', 'desc')
    .executeTakeFirst();
}

/**
 * Imports one file found in the watched folder, `<dir>/<greenhouse_id>/<file>`,
 * into that greenhouse's current cycle with its saved column choices. Never
 * the same content twice into a cycle (sha256): content imported before, or
 * undone since, is skipped; content that failed for the same reason is not
 * recorded again. Failures with a cycle to hang them on become failed imports
 * with their reason; the others (no greenhouse, no cycle) are logged.
 */
export async function importWatchedFile(opts: Pick<WatcherOptions, 'dir' | 'deps' | 'log' | 'limitBytes'>, file: string): Promise<Outcome> {
  const { deps, log } = opts;
  const rel = path.relative(opts.dir, file);
  const parts = rel.split(path.sep);
  if (parts.length !== 2 || parts[0]!.startsWith('..')) {
    log.warn('climate watch: file outside a greenhouse folder ignored', { file: rel, expected: '<greenhouse_id>/<file>' });
    return { kind: 'skipped', reason: 'not in a greenhouse folder' };
  }
  const [folder, name] = parts as [string, string];
  // A link could point anywhere on the box: only plain files inside the folder are read.
  const info = await lstat(file);
  if (!info.isFile()) {
    log.warn('climate watch: not a plain file (a link?); ignored', { file: rel });
    return { kind: 'skipped', reason: 'not a plain file' };
  }
  const greenhouse = UUID.test(folder)
    ? await deps.db.selectFrom('greenhouses').selectAll().where('id', '=', folder).executeTakeFirst()
    : undefined;
  if (!greenhouse) {
    log.warn('climate watch: folder names no greenhouse of this box; file not imported', { file: rel });
    return { kind: 'skipped', reason: 'unknown greenhouse folder' };
  }
  const cycle = await currentCycle(deps, greenhouse);
  if (!cycle) {
    log.warn('climate watch: the greenhouse has no current crop cycle; file not imported', { file: rel, greenhouse_id: greenhouse.id });
    return { kind: 'skipped', reason: 'no current crop cycle' };
  }
  const scope: CycleScope = { cycle, greenhouse, zone: greenhouse.time_zone };
  const contentHash = await sha256File(file);
  const known = await deps.db
    .selectFrom('climate_imports')
    .select(['id', 'status', 'failure_reason'])
    .where('cycle_id', '=', cycle.id)
    .where('content_hash', '=', contentHash)
    .orderBy('created_at', 'desc')
    .execute();
  const done = known.find((k) => k.status !== 'failed');
  if (done) {
    log.debug('climate watch: content imported before; skipped', { file: rel, import_id: done.id });
    return { kind: 'skipped', reason: 'content imported before' };
  }

  const fail = async (reason: string, mapping: unknown = null): Promise<Outcome> => {
    if (known[0]?.failure_reason === reason) return { kind: 'skipped', reason: `failed before: ${reason}` };
    const row = await deps.store.write(WATCHER_ACTOR, (w) =>
      recordFailedImport(
        w,
        cycle,
        { kind: 'watch', fileName: name, contentHash, sizeBytes: info.size, actor: 'watcher', mapping, warnings: [] },
        reason,
      ),
    );
    log.warn('climate watch: import failed', { file: rel, import_id: row.id, reason });
    return { kind: 'failed', importId: row.id, reason };
  };

  if (info.size > opts.limitBytes)
    return fail(`the file is ${info.size} bytes, above the climate upload limit of ${opts.limitBytes} bytes`);
  const saved = await savedMapping(deps.db, greenhouse.id);
  if (!saved)
    return fail('no saved column choices for this greenhouse: import one export with POST {cycle}/climate/file and remember=true');
  const mapping = JSON.parse(saved.mapping) as ConfirmedMapping;
  try {
    const row = await importExport(
      deps,
      scope,
      { path: file, fileName: name, size: info.size },
      {
        kind: 'watch',
        actor: WATCHER_ACTOR,
        actorLabel: 'watcher',
        hourly: true,
        choices: { mapping },
        mappingMustFit: true,
      },
    );
    log.info('climate watch: imported', {
      file: rel,
      import_id: row.id,
      added: row.readings_added,
      updated: row.readings_updated,
      skipped: row.readings_skipped,
    });
    return { kind: 'imported', importId: row.id };
  } catch (err) {
    // A file the domain refuses (blocking problems, no saved mapping, too large) is the file's fault, not the box's.
    if (err instanceof DomainError) return fail(err.message, mapping);
    log.error('climate watch: import crashed', { file: rel, error: err as Error });
    return fail(`internal error while importing: ${(err as Error).message}`, mapping);
  }
}

export interface WatcherStatus {
  dir: string;
  /** Files handled since start, by outcome. */
  imported: number;
  failed: number;
  skipped: number;
  last_error: string | null;
}

export interface ClimateWatcher {
  /** Emits `outcome` (file, Outcome) after each file. */
  events: EventEmitter;
  status(): WatcherStatus;
  /** Resolves when chokidar's initial scan is done (files it found may still be waiting for their size to settle). */
  ready: Promise<void>;
  /** Resolves when nothing is queued. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Watches the climate computer's export folder. Files are handled one at a
 * time, only once their size has stopped changing (chokidar's
 * awaitWriteFinish): a file still being written is never read half. The
 * initial scan (ignoreInitial: false) picks up what arrived while the box was
 * down; hashes keep it from importing anything twice.
 */
export function startClimateWatcher(opts: WatcherOptions): ClimateWatcher {
  const events = new EventEmitter();
  let queue: Promise<void> = Promise.resolve();
  let closed = false;
  const status: WatcherStatus = { dir: opts.dir, imported: 0, failed: 0, skipped: 0, last_error: null };
  events.on('outcome', (_file: string, o: Outcome) => {
    status[o.kind]++;
    if (o.kind === 'failed') status.last_error = o.reason;
  });
  const enqueue = (file: string) => {
    queue = queue.then(async () => {
      if (closed) return;
      try {
        const outcome = await importWatchedFile(opts, file);
        events.emit('outcome', file, outcome);
      } catch (err) {
        opts.log.error('climate watch: file not handled', { file, error: err as Error });
        events.emit('outcome', file, { kind: 'skipped', reason: (err as Error).message });
      }
    });
  };
  const watcher: FSWatcher = watch(opts.dir, {
    ignoreInitial: false,
    depth: 1,
    // Editors and copy tools write dot- and tilde-files first; the finished file arrives under its name.
    ignored: (p: string) => /(^|[\\/])(\.|~)[^\\/]*$|\.(tmp|part|crdownload)$/i.test(p),
    awaitWriteFinish: { stabilityThreshold: opts.stabilityMs ?? 2000, pollInterval: opts.pollMs ?? 100 },
    usePolling: opts.usePolling ?? false,
    followSymlinks: false,
  });
  watcher.on('add', enqueue);
  watcher.on('change', enqueue);
  watcher.on('error', (err) => {
    status.last_error = (err as Error).message;
    opts.log.error('climate watch: watcher error', { error: err as Error });
  });
  const ready = new Promise<void>((resolve) => watcher.once('ready', () => resolve()));
  opts.log.info('climate watch: watching', { dir: opts.dir, layout: '<dir>/<greenhouse_id>/<export file>' });
  return {
    events,
    status: () => ({ ...status }),
    ready,
    idle: async () => {
      let seen: Promise<void>;
      do {
        seen = queue;
        await seen;
      } while (seen !== queue);
    },
    close: async () => {
      closed = true;
      await watcher.close();
      await queue;
    },
  };
}
