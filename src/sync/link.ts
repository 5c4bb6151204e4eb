import { Conflict, Invalid, UpstreamFailed } from '../errors.js';
import type { Services } from '../services.js';
import { agentOf, attachAgent, SyncAgent, type RoundReport } from './agent.js';
import { UpstreamClient, UpstreamError } from './client.js';
import { nodeOf } from './registry.js';
import { notHeld } from './refusal.js';

/**
 * Links a box that was used on its own first to an upstream (docs/sync.md, "Linking a box that
 * has data"): the organization is made upstream with the same id (ids are UUIDv7, so nothing
 * the box made collides with anything there), an admin key of it is made for the box, and the
 * first round sends everything the box holds of it.
 */
/** The upstream said no: a credential of the request (422), or the upstream itself (502). */
function refusedUpstream(credential: boolean, detail: string): Invalid | UpstreamFailed {
  return credential
    ? new Invalid([{ in: 'body', name: 'upstream_token', message: 'was refused by the upstream' }], detail, 'upstream_refused')
    : new UpstreamFailed('upstream_refused', detail);
}

export interface LinkInput {
  upstream_url: string;
  organization_id: string;
  /** The upstream's appliance admin token: the organization and a key are made there with it. Not stored. */
  upstream_token?: string;
  /** Or an admin key of the organization already made upstream. */
  upstream_key?: string;
}

export async function linkToUpstream(services: Services, input: LinkInput): Promise<{ report: RoundReport; key_id: string | null }> {
  if (services.config.upstreamUrl) throw new Conflict('UPSTREAM_URL is set: this box is linked by its settings; unset it to link here.');
  if (agentOf(services)) throw new Conflict('This box is linked to an upstream already.');
  const org = await services.db.selectFrom('organizations').selectAll().where('id', '=', input.organization_id).executeTakeFirst();
  if (!org) throw notHeld('There is no organization with this id on this box.');
  if (!input.upstream_key && !input.upstream_token)
    throw new Invalid(
      [{ in: 'body', name: 'upstream_token', message: 'or upstream_key is required' }],
      'Send upstream_token or upstream_key.',
    );
  const url = input.upstream_url.replace(/\/+$/, '');
  let key = input.upstream_key;
  if (!key) {
    let res: Response;
    try {
      res = await fetch(`${url}/api/sync/v1/organizations`, {
        method: 'POST',
        headers: { authorization: `Bearer ${input.upstream_token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ organization_id: org.id, name: org.name, key_name: `box ${nodeOf(services)}` }),
        signal: AbortSignal.timeout(30_000),
      });
    } catch (err) {
      throw new UpstreamFailed('upstream_unreachable', `The upstream did not answer: ${(err as Error).message}`);
    }
    const body = (await res.json().catch(() => ({}))) as { key?: { api_key?: string }; detail?: string };
    if (!res.ok || !body.key?.api_key)
      throw refusedUpstream(res.status === 401, `The upstream refused to make the organization: ${body.detail ?? res.status}`);
    key = body.key.api_key;
  }
  let keyId: string;
  try {
    const client = new UpstreamClient(url, key, nodeOf(services));
    const hello = await client.hello().finally(() => client.close());
    if (hello.organization_id !== org.id) throw new Invalid([], 'upstream_key is a key of another organization upstream.');
    keyId = hello.key_id;
  } catch (err) {
    if (err instanceof UpstreamError) throw refusedUpstream(err.failure === 'unauthorized', err.message);
    throw err;
  }
  await services.db
    .insertInto('sync_links')
    .values({
      organization_id: org.id,
      upstream_url: url,
      upstream_key: key,
      upstream_node: null,
      linked_at: services.clock.iso(),
      pushed_seq: 0,
      pull_cursor: null,
      state: 'idle',
      failures: 0,
    } as never)
    .onConflict((oc) => oc.column('organization_id').doUpdateSet({ upstream_url: url, upstream_key: key }))
    .execute();
  const agent = new SyncAgent(services, { url, key });
  attachAgent(services, agent);
  services.onClose.push(() => agent.stop());
  agent.start();
  return { report: await agent.syncNow(), key_id: keyId };
}
