import { Worker } from 'node:worker_threads';
import { fileURLToPath } from 'node:url';
import {
  ExportRefused,
  namedColumns,
  type AnalyseOptions,
  type ConfirmedMapping,
  type ExportInput,
  type IndexedColumns,
  type Problem,
  type ReadingColumns,
  type ReadOutcome,
  type ReadStats,
} from '../exports-reader/index.js';

/**
 * Reading a climate-computer export into hourly values on a thread of its own, handing
 * finished hours to the caller while it reads. An import then writes the first hours while
 * the thread reads the rest: on the two cores of a small box the import takes about the
 * time of the reading (docs/climate-exports.md), and the API's event loop does none of
 * the parsing. One thread serves every import; it is started once (the climate feature
 * starts it with the service, since starting one costs about 0.3 s) and does not keep the
 * process alive.
 *
 * A file whose rows are not in time order would need an hour it already handed over:
 * the stream then ends with NotInTimeOrder, and the caller reads the file the whole way
 * first instead.
 */

export type ReaderRequest = { id: number; input: ExportInput; options: AnalyseOptions };
export type ReaderMessage =
  | { id: number; type: 'ready' }
  | { id: number; type: 'hours'; columns: IndexedColumns }
  | { id: number; type: 'done'; stats: ReadStats | null; warnings: Problem[]; mapping: ConfirmedMapping | null }
  | { id: number; type: 'unordered' }
  | { id: number; type: 'refused'; blocking: Problem[] }
  | { id: number; type: 'error'; message: string };

export class NotInTimeOrder extends Error {
  override name = 'NotInTimeOrder';
  constructor() {
    super('the export is not in time order: its hours are read whole before they are stored');
  }
}

type Handler = (m: ReaderMessage) => void;

const BOOT = fileURLToPath(new URL('./reader-thread-boot.mjs', import.meta.url));
const ENTRY = new URL('./reader-thread-worker.ts', import.meta.url).href;

let thread: { worker: Worker; ready: Promise<void>; handlers: Map<number, Handler> } | null = null;
let nextId = 1;

function start() {
  const handlers = new Map<number, Handler>();
  // A small young generation: the reader's garbage is short-lived, and V8's default (up to
  // 16 MB semi-spaces) added about 40 MB to the process's peak RSS for no speed (measured
  // on three years of 5-minute data: 320 → 270-284 MB, same import time).
  const worker = new Worker(BOOT, { workerData: { entry: ENTRY }, resourceLimits: { maxYoungGenerationSizeMb: 8 } });
  let resolveReady!: () => void;
  let rejectReady!: (e: Error) => void;
  const ready = new Promise<void>((res, rej) => {
    resolveReady = res;
    rejectReady = rej;
  });
  ready.catch(() => undefined);
  const t = { worker, ready, handlers };
  worker.on('message', (m: ReaderMessage) => {
    if (m.type === 'ready') resolveReady();
    else handlers.get(m.id)?.(m);
  });
  const fail = (err: Error) => {
    if (thread === t) thread = null;
    rejectReady(err);
    for (const h of handlers.values()) h({ id: 0, type: 'error', message: `the climate reader thread stopped: ${err.message}` });
    handlers.clear();
  };
  worker.on('error', fail);
  worker.on('exit', (code) => fail(new Error(`exit code ${code}`)));
  // After the listeners: adding a 'message' listener refs the thread again. While a read is
  // under way the thread is ref'd (the caller may have nothing else keeping the process up).
  worker.unref();
  return t;
}

/** Starts the reader thread if it is not running; resolves once it can take work. */
export async function readerThreadReady(): Promise<void> {
  thread ??= start();
  const t = thread;
  // Starting counts as work: keep the process up until the thread answers.
  t.worker.ref();
  try {
    await t.ready;
  } finally {
    if (t.handlers.size === 0) t.worker.unref();
  }
}

/** Stops the thread (tests, shutdown); the next read starts another. */
export async function stopReaderThread(): Promise<void> {
  const t = thread;
  thread = null;
  if (t) await t.worker.terminate();
}

/**
 * Reads an export on the thread. `batches` yields its hourly values as they are finished
 * (in the order the file gives its hours) and ends with the file, or throws: ExportRefused
 * with the blocking problems, NotInTimeOrder, or an Error. `stats`, `warnings` and
 * `mapping` are set when it ended.
 */
export function readHourlyOnThread(input: ExportInput, options: AnalyseOptions): { batches: AsyncIterable<ReadingColumns> } & ReadOutcome {
  const outcome: ReadOutcome = { stats: null, warnings: [], mapping: null };
  async function* batches(): AsyncGenerator<ReadingColumns> {
    await readerThreadReady();
    const t = thread!;
    const id = nextId++;
    const queue: ReaderMessage[] = [];
    let wake: (() => void) | null = null;
    t.handlers.set(id, (m) => {
      // A read that failed (the thread stopped, or the file could not be read) fails at once:
      // hours still queued belong to a read that cannot finish.
      if (m.type === 'error') queue.length = 0;
      queue.push(m);
      wake?.();
    });
    if (t.handlers.size === 1) t.worker.ref();
    try {
      t.worker.postMessage({ id, input, options } satisfies ReaderRequest);
      for (;;) {
        while (queue.length === 0) await new Promise<void>((res) => (wake = res));
        wake = null;
        const m = queue.shift()!;
        if (m.type === 'hours') yield namedColumns(m.columns);
        else if (m.type === 'done') {
          Object.assign(outcome, { stats: m.stats, warnings: m.warnings, mapping: m.mapping });
          return;
        } else if (m.type === 'unordered') throw new NotInTimeOrder();
        else if (m.type === 'refused') throw new ExportRefused(m.blocking);
        else if (m.type === 'error') throw new Error(m.message);
      }
    } finally {
      t.handlers.delete(id);
      if (t.handlers.size === 0) t.worker.unref();
    }
  }
  return Object.assign(outcome, { batches: batches() });
}
