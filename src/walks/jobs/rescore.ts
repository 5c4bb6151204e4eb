import { rm } from 'node:fs/promises';
import type { Actor } from '../../db/store.js';
import type { Services } from '../../services.js';
import { rescoreWalk, type RescoreFields } from './commands.js';
import { retentionOf } from './retention.js';
import { runnerOf } from './runner.js';
import { framesDir } from './storage.js';
import { chooseDetector, configuredFor } from './detector-choice.js';
import type { WalkTable } from './tables.js';

/**
 * Queues a finished walk to be scored again (rescoreWalk) and removes its old frames, which
 * are not served beside a cleared result. Under the media lock, so a retention sweep cannot
 * remove the folders of a walk between this and its new scoring.
 */
export async function queueRescore(services: Services, actor: Actor, walk: WalkTable, fields: RescoreFields): Promise<WalkTable> {
  // A detector asked for must be one this box can run now (422 otherwise), before anything changes.
  if (fields.mode) chooseDetector(configuredFor(services), fields.mode);
  const requeue = async () => {
    const queued = await services.store.write(actor, (w) => rescoreWalk(w, walk.id, fields));
    await rm(framesDir(services.config.dataDir, queued.id), { recursive: true, force: true });
    return queued;
  };
  const retention = retentionOf(services);
  const queued = await (retention ? retention.exclusive(requeue) : requeue());
  runnerOf(services)?.wake();
  return queued;
}
