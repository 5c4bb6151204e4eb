import type { Services } from '../services.js';
import { BUILTIN_KINDS } from './kinds/index.js';
import type { SyncKind } from './kinds/kind.js';

const byServices = new WeakMap<Services, Map<string, SyncKind>>();

/** The kinds that travel on this instance: sync's own and those features declare (Feature.syncKinds). */
export function kindsOf(services: Services): ReadonlyMap<string, SyncKind> {
  let kinds = byServices.get(services);
  if (!kinds) {
    kinds = new Map(BUILTIN_KINDS.map((k) => [k.kind, k]));
    for (const k of services.syncKinds) kinds.set(k.kind, k);
    byServices.set(services, kinds);
  }
  return kinds;
}

/** This instance's node id: the site name in change ids, origins and HLC stamps (meta.node_id). */
export function nodeOf(services: Services): string {
  return services.hlc.node;
}
