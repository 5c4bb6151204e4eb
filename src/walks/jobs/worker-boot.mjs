// Entry of a scoring worker process. The runner sends the job as the first
// message; the worker's own code is TypeScript (see import-typescript.mjs).
import { importTypeScript } from '../../import-typescript.mjs';

const first = await new Promise((resolve) => process.once('message', resolve));
globalThis.__cropwalkJob = first.job;
await importTypeScript(first.entry);
