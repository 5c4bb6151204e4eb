import { createHash } from 'node:crypto';
import type { Services } from '../services.js';
import { kindsOf } from './registry.js';

export interface KindDigest {
  count: number;
  /** sha256 over the rows in id order, each as the JSON array of the columns that travel. */
  sha256: string;
}

/**
 * What this instance holds of an organization, per kind of record: two instances that have
 * synced and received nothing since answer the same (docs/sync.md, "Checking"). Columns
 * that are one instance's own (a key's last use, a walk's retention dates) are left out.
 */
export async function organizationDigest(services: Services, organizationId: string): Promise<Record<string, KindDigest>> {
  const out: Record<string, KindDigest> = {};
  for (const kind of kindsOf(services).values()) {
    for (const spec of kind.digest) {
      const rows = await spec.rows(services.db, organizationId);
      const hash = createHash('sha256');
      for (const r of rows) hash.update(JSON.stringify(r)).update('\n');
      out[spec.name] = { count: rows.length, sha256: hash.digest('hex') };
    }
  }
  return out;
}
