// Entry of a scoring worker thread. The worker's own code is TypeScript: under
// `node --import tsx` (npm start) the worker does not inherit tsx's hooks, so
// they are registered here when the first import fails; under tap the parent's
// loader arrives through execArgv and the first import just works.
import { workerData } from 'node:worker_threads';

try {
  await import(workerData.entry);
} catch (err) {
  if (err?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw err;
  const { register } = await import('tsx/esm/api');
  register();
  await import(`${workerData.entry}?tsx`);
}
