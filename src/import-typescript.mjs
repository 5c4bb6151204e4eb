// For the entry files of worker processes and threads (scoring jobs, the climate reader):
// their code is TypeScript. Under `node --import tsx` (npm start) and under tap the parent's
// loader usually arrives through execArgv; when it did not, tsx is registered here.
export async function importTypeScript(entry) {
  try {
    return await import(entry);
  } catch (err) {
    if (err?.code !== 'ERR_UNKNOWN_FILE_EXTENSION') throw err;
    const { register } = await import('tsx/esm/api');
    register();
    return await import(`${entry}?tsx`);
  }
}
