// Entry of the climate reader thread (reader-thread.ts). Its code is TypeScript: under
// `node --import tsx` (npm start) and under tap the parent's loader may not reach a worker
// thread, so tsx is registered here when the import fails for want of it.
import { workerData } from 'node:worker_threads';

try {
  await import(workerData.entry);
} catch (err) {
  if (err?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw err;
  const { register } = await import('tsx/esm/api');
  register();
  await import(`${workerData.entry}?tsx`);
}
