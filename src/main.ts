import { createApp } from './app.js';

/** `npm start`: serve the API until SIGTERM/SIGINT, then stop cleanly. */
const app = await createApp();
const { config, log } = app.services;
const server = await app.listen(config.port, config.host);
const address = server.address();
log.info('cropwalk listening', {
  address: typeof address === 'object' && address ? `${address.address}:${address.port}` : address,
  data_dir: config.dataDir,
  // Where the records are: SQLite under DATA_DIR, or the PostgreSQL database (without its password).
  database: app.services.engine.kind === 'postgres' ? app.services.engine.where : 'sqlite',
  docs: '/api/docs',
});

let stopping = false;
async function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info('stopping', { signal, within_ms: config.stopTimeoutMs });
  // Bounded: a step that hangs (a stuck disk, a scale's port) must not keep systemd waiting
  // until it kills the process; exit with a line that says what happened instead.
  setTimeout(() => {
    log.error('stop took too long: exiting anyway', { after_ms: config.stopTimeoutMs });
    process.exit(1);
  }, config.stopTimeoutMs).unref();
  try {
    await app.close();
    log.info('stopped');
    process.exit(0);
  } catch (err) {
    log.error('error while stopping', { error: err as Error });
    process.exit(1);
  }
}
process.on('SIGTERM', () => void stop('SIGTERM'));
process.on('SIGINT', () => void stop('SIGINT'));
