// The climate reader thread: reads a climate-computer export into hourly values and hands
// finished hours to the main thread while it reads (reader-thread.ts).
import { parentPort } from 'node:worker_threads';
import { ExportRefused, readHourly, type IndexedColumns } from '../exports-reader/index.js';
import type { ReaderRequest, ReaderMessage } from './reader-thread.js';

/** Hours per handed-over batch: about 5,000 values of a 28-metric export, as the engine likes them. */
const BATCH_HOURS = 200;

const port = parentPort!;
const send = (m: ReaderMessage, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);
const sendHours = (id: number, c: IndexedColumns) => {
  if (c.length > 0)
    send({ id, type: 'hours', columns: c }, [c.ms.buffer as ArrayBuffer, c.metric.buffer as ArrayBuffer, c.value.buffer as ArrayBuffer]);
};

port.on('message', async (req: ReaderRequest) => {
  const { id } = req;
  try {
    const reader = readHourly(req.input, req.options);
    let unordered = false;
    const acc = await reader.read((a) => {
      if (a.outOfOrder) unordered = true;
      else if (a.hourCount - a.takenCount > BATCH_HOURS) sendHours(id, a.take(a.hourCount - 1));
    });
    if (unordered || acc.outOfOrder) {
      send({ id, type: 'unordered' });
      return;
    }
    sendHours(id, acc.take(acc.hourCount));
    send({ id, type: 'done', stats: reader.stats, warnings: reader.warnings, mapping: reader.mapping });
  } catch (err) {
    if (err instanceof ExportRefused) send({ id, type: 'refused', blocking: err.blocking });
    else send({ id, type: 'error', message: err instanceof Error ? err.message : String(err) });
  }
});
send({ id: 0, type: 'ready' });
