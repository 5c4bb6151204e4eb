// Entry of a scoring worker process. The runner sends the job as the first
// message. The worker's own code is TypeScript: under `node --import tsx`
// (npm start) and under tap the parent's loader arrives through execArgv;
// when it did not, tsx is registered here.
const first = await new Promise((resolve) => process.once('message', resolve));
globalThis.__cropwalkJob = first.job;
try {
  await import(first.entry);
} catch (err) {
  if (err?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw err;
  const { register } = await import('tsx/esm/api');
  register();
  await import(`${first.entry}?tsx`);
}
