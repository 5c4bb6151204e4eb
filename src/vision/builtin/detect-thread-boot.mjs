// Entry of a detection thread (detect-threads.ts); its code is TypeScript (see import-typescript.mjs).
import { workerData } from 'node:worker_threads';
import { importTypeScript } from '../../import-typescript.mjs';

await importTypeScript(workerData.entry);
