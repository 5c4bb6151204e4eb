import type { Services } from '../services.js';
import { JsonText } from '../http/route.js';
import { presentTree } from './presenters.js';
import { NotFound } from '../errors.js';

/**
 * The organization tree, serialized once per state of the organization. Every
 * write of a synced record appends to the change log in its transaction, so
 * the organization's highest change-log seq names its state exactly: a cached
 * answer is served only while that seq is unchanged.
 */
const caches = new WeakMap<Services, Map<string, { seq: number; json: JsonText }>>();

export async function organizationTree(services: Services, orgId: string): Promise<JsonText> {
  const { db } = services;
  const head = await db
    .selectFrom('change_log')
    .select((eb) => eb.fn.max('seq').as('seq'))
    .where('organization_id', '=', orgId)
    .executeTakeFirst();
  const seq = Number(head?.seq ?? 0);
  let cache = caches.get(services);
  if (!cache) caches.set(services, (cache = new Map()));
  const hit = cache.get(orgId);
  if (hit && hit.seq === seq) return hit.json;

  const [org, farms, greenhouses, rows, cycles] = await Promise.all([
    db.selectFrom('organizations').selectAll().where('id', '=', orgId).executeTakeFirst(),
    db.selectFrom('farms').selectAll().where('organization_id', '=', orgId).orderBy('id').execute(),
    db.selectFrom('greenhouses').selectAll().where('organization_id', '=', orgId).orderBy('id').execute(),
    db.selectFrom('rows').selectAll().where('organization_id', '=', orgId).orderBy('id').execute(),
    db.selectFrom('cycles').selectAll().where('organization_id', '=', orgId).orderBy('id').execute(),
  ]);
  if (!org) throw new NotFound('organization');
  const json = new JsonText(JSON.stringify(presentTree(org, farms, greenhouses, rows, cycles)), `W/"${orgId}-${seq}"`);
  cache.set(orgId, { seq, json });
  return json;
}
