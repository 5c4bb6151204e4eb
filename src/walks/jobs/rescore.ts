import { rm } from 'node:fs/promises';
import type { Actor } from '../../db/store.js';
import type { Services } from '../../services.js';
import { rescoreWalk, type RescoreFields } from './commands.js';
import { retentionOf } from './retention.js';
import { runnerOf } from './runner.js';
import { framesDir } from './storage.js';
import type { WalkTable } from './tables.js';

/**
 * Queues a finished walk to be scored again (rescoreWalk) and removes its old frames, which
 * are not served beside a cleared result. Under the media lock, so a retention sweep cannot
 * remove the folders of a walk between this and its new scoring.
 */
export async function queueRescore(
  services: Services,
  actor: Actor,
  walkId: string,
  organizationId: string,
  fields: RescoreFields,
): Promise<WalkTable> {
  const requeue = async () => {
    const walk = await services.store.write(actor, (w) => rescoreWalk(w, walkId, organizationId, fields));
    await rm(framesDir(services.config.dataDir, walk.id), { recursive: true, force: true });
    return walk;
  };
  const retention = retentionOf(services);
  const walk = await (retention ? retention.exclusive(requeue) : requeue());
  runnerOf(services)?.wake();
  return walk;
}
