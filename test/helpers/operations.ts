// The operations of the served OpenAPI document, with a concrete URL for each, for tests that send
// one kind of request to every operation it applies to (a new route is covered without being listed).
import { ADMIN_TOKEN, createTree, startServer, type TestServer, type Tree } from './server.js';
import { sqliteOf } from './postgres.js';

export type Op = { method: string; path: string; op: any };

export function operations(doc: any): Op[] {
  return Object.entries<any>(doc.paths).flatMap(([path, methods]) =>
    Object.entries<any>(methods).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );
}

/** A concrete URL for an operation's path: the tree's ids, and a plausible value for the rest. */
export function urlOf(path: string, tree: Tree & { adminKeyId: string }): string {
  const known: Record<string, string> = {
    organization_id: tree.orgId,
    farm_id: tree.farmId,
    greenhouse_id: tree.greenhouseId,
    row_id: tree.rowId,
    cycle_id: tree.cycleId,
    key_id: tree.adminKeyId,
    week: '2026-W07',
    counted_on: '2026-03-02',
    key: 'row-mixed',
    frame: '0',
    name: 'image.jpg',
    file: 'index.css',
  };
  return path.replace(/\{(\w+)\}/g, (_, name: string) => known[name] ?? '01900000-0000-7000-8000-000000000001');
}

export const changeLog = (s: TestServer) =>
  (sqliteOf(s.app.services).prepare('SELECT count(*) AS n FROM change_log').get() as { n: number }).n;
export const headers = (tree: Tree) => ({ 'x-api-key': tree.adminKey, 'x-admin-token': ADMIN_TOKEN });

export async function setup(t: { teardown(fn: () => unknown): void }) {
  const s = await startServer(t);
  const tree = await createTree(s);
  const keys = await s.request('GET', `/api/organizations/${tree.orgId}/keys`, { key: tree.adminKey });
  const doc = (await s.request('GET', '/openapi.json')).body;
  return { s, tree: { ...tree, adminKeyId: keys.body.items[0].key_id as string }, ops: operations(doc) };
}

export const isProblem = (r: { status: number; headers: Headers; body: any }) =>
  r.status >= 400 &&
  r.status < 500 &&
  (r.headers.get('content-type') ?? '').includes('application/problem+json') &&
  typeof r.body.code === 'string';
