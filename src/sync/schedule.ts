import type { Schedule } from '../schedules/schedule.js';
import { agentOf } from './agent.js';

/**
 * A full round with the upstream at fixed times, listed in GET /api/schedules with its outcome.
 * Rounds also run every SYNC_INTERVAL_S and after a burst of writes (agent.ts); this one is what a
 * box on a metered or night-only link keeps when SYNC_INTERVAL_S=0 (SCHEDULE_SYNC='0 2 * * *').
 */
export const syncSchedule: Schedule = {
  name: 'sync',
  summary: 'A sync round with the upstream (push, pull, walk files), besides the rounds every SYNC_INTERVAL_S and after writes',
  when: '0 * * * *',
  enabledByDefault(services) {
    return agentOf(services) ? true : { off: 'no upstream: UPSTREAM_URL is not set and the box is not linked' };
  },
  async run({ services }) {
    const agent = agentOf(services);
    if (!agent) throw new Error('no upstream: set UPSTREAM_URL and UPSTREAM_KEY, or link the box (POST /api/admin/sync/link)');
    const round = await agent.syncNow();
    if (!round.ok) throw new Error(`${round.state}: ${round.error ?? 'the round did not finish'}`);
    return {
      pushed: round.pushed,
      pulled: round.pulled,
      refused: round.refused + round.pull_refused,
      files_sent: round.files_sent,
      files_received: round.files_received,
    };
  },
};
