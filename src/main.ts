import { createApp } from './app.js';

/** `npm start`: serve the API until SIGTERM/SIGINT, then stop cleanly. */
const app = await createApp();
const { config, log } = app.services;
const server = await app.listen(config.port, config.host);
const address = server.address();
log.info('cropwalk listening', {
  address: typeof address === 'object' && address ? `${address.address}:${address.port}` : address,
  data_dir: config.dataDir,
  docs: '/api/docs',
});

let stopping = false;
async function stop(signal: string) {
  if (stopping) return;
  stopping = true;
  log.info('stopping', { signal });
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
