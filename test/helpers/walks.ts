import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { TestServer } from './server.js';

/** Shared by the scoring API tests: multipart uploads, polling a walk, and what a refused upload may leave. */
export interface Part {
  field: string;
  file: string;
  name?: string;
}

export async function upload(
  s: TestServer,
  url: string,
  key: string,
  files: Part[],
  fields: Record<string, string> = {},
  headers: Record<string, string> = {},
) {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const f of files) form.append(f.field, new Blob([readFileSync(f.file)]), f.name ?? path.basename(f.file));
  return s.request('POST', url, { key, raw: form, headers });
}

/** Polls a walk until `until` holds; returns every answer seen, in order. */
export async function poll(
  s: TestServer,
  id: string,
  key: string,
  until: (w: any) => boolean = (w) => w.status === 'done' || w.status === 'failed',
  timeoutMs = 240_000,
) {
  const seen: any[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await s.request('GET', `/api/observations/${id}`, { key });
    if (r.status !== 200) throw new Error(`GET walk: ${r.status} ${r.text}`);
    seen.push(r.body);
    if (until(r.body)) return seen;
    if (Date.now() > deadline) throw new Error(`walk ${id} still ${r.body.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 60));
  }
}

export async function walkCount(s: TestServer): Promise<number> {
  const r = await s.app.services.db
    .selectFrom('walks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .executeTakeFirstOrThrow();
  return Number(r.n);
}

export function leftovers(s: TestServer): string[] {
  const incoming = path.join(s.dataDir, 'uploads', 'incoming');
  return existsSync(incoming) ? readdirSync(incoming) : [];
}
