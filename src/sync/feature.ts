import type { Feature } from '../feature.js';
import type { Services } from '../services.js';
import { attachAgent, SyncAgent, type LinkConfig } from './agent.js';
import { syncRoutes } from './routes.js';
import { syncSchedule } from './schedule.js';
import './tables.js';

/** The link a box syncs with: UPSTREAM_URL and UPSTREAM_KEY, else one made by POST /api/admin/sync/link. */
async function configuredLink(services: Services): Promise<LinkConfig | null> {
  const { upstreamUrl, upstreamKey } = services.config;
  if (upstreamUrl) {
    if (!upstreamKey) {
      services.log.warn('UPSTREAM_URL is set without UPSTREAM_KEY: not syncing (docs/sync.md)');
      return null;
    }
    return { url: upstreamUrl, key: upstreamKey };
  }
  const linked = await services.db
    .selectFrom('sync_links')
    .select(['upstream_url', 'upstream_key'])
    .where('upstream_key', 'is not', null)
    .executeTakeFirst();
  return linked ? { url: linked.upstream_url, key: linked.upstream_key! } : null;
}

/**
 * Upstream sync (docs/sync.md). Every instance answers boxes (the /api/sync/v1 routes); an
 * instance with an upstream also syncs with it in the background.
 */
export const syncFeature: Feature = {
  name: 'sync',
  routes: syncRoutes,
  schedules: [syncSchedule],
  async start(services) {
    const link = await configuredLink(services);
    if (!link) return;
    const agent = new SyncAgent(services, link);
    attachAgent(services, agent);
    services.onClose.push(() => agent.stop());
    agent.start();
  },
};
