import { orgKey } from '../db/engine.js';
import { among } from '../db/bulk.js';
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, linkSync, mkdirSync, readdirSync, renameSync, statSync, copyFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../db/schema.js';
import { clipsDir, framesDir, inside, walkDir } from '../walks/jobs/storage.js';
import './tables.js';

/**
 * A walk's files travel by content (docs/sync.md, "Files"): the walk's unit lists each file's
 * name and sha256, the bytes follow by a resumable upload (box → upstream) or a ranged
 * download (upstream → box), are checked against the hash on arrival, and land in the walk's
 * folder where the API serves them. A content the receiver already holds is never sent again.
 */

export interface ManifestEntry {
  /** `frames/00012-image.jpg`, `frames/00012-overlay.jpg`, `frames/boxes.json`, or `clips/<file name>` (SYNC_CLIPS). */
  name: string;
  sha256: string;
  size: number;
}

export const SHA256 = /^[0-9a-f]{64}$/;
type Q = Kysely<Database> | Transaction<Database>;
// boxes.json: each frame's fruit boxes (src/walks/jobs/frame-boxes.ts), the training export's labels, so an
// upstream exports a box's corrected walks as the box would.
const FRAME_FILE = /^(\d{5}-(image|overlay)\.jpg|boxes\.json)$/;
const CLIP_FILE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$/;

/**
 * Whether `name` is a file a walk may have, `frames/<frame file>` or `clips/<clip file>`. The
 * patterns allow no separator and no leading dot, so such a name cannot leave its folder; it is
 * checked for every file of every walk a push carries, without building a path.
 */
export function isWalkFileName(name: string): boolean {
  return walkFileParts(name) !== null;
}

function walkFileParts(name: string): { dir: 'frames' | 'clips'; file: string } | null {
  const [dir, file, ...rest] = name.split('/');
  if (rest.length || !file) return null;
  if (dir === 'frames' && FRAME_FILE.test(file)) return { dir, file };
  if (dir === 'clips' && CLIP_FILE.test(file)) return { dir, file };
  return null;
}

/** The file a manifest name stands for in a walk's folder, or null for a name that is none of a walk's files. */
export function walkFilePath(dataDir: string, walkId: string, name: string): string | null {
  const parts = walkFileParts(name);
  if (!parts) return null;
  try {
    return inside(parts.dir === 'frames' ? framesDir(dataDir, walkId) : clipsDir(dataDir, walkId), parts.file);
  } catch {
    return null;
  }
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * The manifest of a walk: the frames and overlays in its folder (and its clips with SYNC_CLIPS),
 * hashed once and remembered in sync_walk_files, and the files it received from elsewhere.
 */
export async function walkManifest(
  db: Kysely<Database>,
  dataDir: string,
  walk: { id: string; organization_id: string },
  clips: boolean,
  clipNames: string[],
): Promise<ManifestEntry[]> {
  const known = new Map(
    (await db.selectFrom('sync_walk_files').selectAll().where('walk_id', '=', walk.id).execute()).map((r) => [r.name, r]),
  );
  const names: string[] = [];
  const frames = framesDir(dataDir, walk.id);
  if (existsSync(frames)) for (const f of readdirSync(frames).sort()) if (FRAME_FILE.test(f)) names.push(`frames/${f}`);
  if (clips)
    for (const f of clipNames) if (CLIP_FILE.test(f) && existsSync(path.join(clipsDir(dataDir, walk.id), f))) names.push(`clips/${f}`);
  const out: ManifestEntry[] = [];
  for (const name of names) {
    const file = walkFilePath(dataDir, walk.id, name)!;
    const size = statSync(file).size;
    const had = known.get(name);
    if (had && had.present === 1 && had.size === size) {
      out.push({ name, sha256: had.sha256, size });
      continue;
    }
    const sha256 = await sha256File(file);
    await db
      .insertInto('sync_walk_files')
      .values({ walk_id: walk.id, name, organization_id: walk.organization_id, sha256, size, present: 1 })
      .onConflict((oc) => oc.columns(orgKey(db as never, ['walk_id', 'name'])).doUpdateSet({ sha256, size, present: 1 }))
      .execute();
    out.push({ name, sha256, size });
  }
  // Files received here belong to the walk whatever this instance's SYNC_CLIPS says: those still on
  // their way, and those in place (a box's clips an upstream passes on).
  for (const [name, r] of known) {
    if (names.includes(name)) continue;
    if (r.present === 0 || existsSync(walkFilePath(dataDir, walk.id, name) ?? '')) out.push({ name, sha256: r.sha256, size: r.size });
  }
  return out.sort((a, b) => (a.name < b.name ? -1 : 1));
}

// ---- Contents on their way in: DATA_DIR/sync/partial/<sha256>.

export function partialPath(dataDir: string, sha: string): string {
  if (!SHA256.test(sha)) throw new Error(`not a sha256: ${sha}`);
  const dir = path.join(dataDir, 'sync', 'partial');
  mkdirSync(dir, { recursive: true });
  return path.join(dir, sha);
}

/** Bytes of a content received so far. */
export function partialSize(dataDir: string, sha: string): number {
  const p = partialPath(dataDir, sha);
  return existsSync(p) ? statSync(p).size : 0;
}

/** A file here holding this content (a walk file already in place), if any. */
export async function presentCopy(db: Q, dataDir: string, sha: string): Promise<string | null> {
  return (await presentCopies(db, dataDir, [sha])).get(sha) ?? null;
}

/** Contents asked about in one query (under SQLite's bound-value cap). */
const PER_QUERY = 1000;

/** For each of these contents held here (a walk file in place), a file holding it: one query for many. */
export async function presentCopies(db: Q, dataDir: string, shas: readonly string[]): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  for (let i = 0; i < shas.length; i += PER_QUERY) {
    const rows = await db
      .selectFrom('sync_walk_files')
      .select(['walk_id', 'name', 'sha256'])
      .where(among(db as Kysely<any>, 'sha256', shas.slice(i, i + PER_QUERY)))
      .where('present', '=', 1)
      .execute();
    for (const r of rows) {
      if (found.has(r.sha256)) continue;
      const p = walkFilePath(dataDir, r.walk_id, r.name);
      if (p && existsSync(p)) found.set(r.sha256, p);
    }
  }
  return found;
}

/** Is this content one of this organization's walk files (held or awaited)? Its size if so. */
export async function wanted(db: Q, organizationId: string, sha: string): Promise<{ size: number } | null> {
  const size = (await wantedSizes(db, organizationId, [sha])).get(sha);
  return size === undefined ? null : { size };
}

/** The size of each of these contents that is one of this organization's walk files (held or awaited): one query for many. */
export async function wantedSizes(db: Q, organizationId: string, shas: readonly string[]): Promise<Map<string, number>> {
  const sizes = new Map<string, number>();
  for (let i = 0; i < shas.length; i += PER_QUERY)
    for (const r of await db
      .selectFrom('sync_walk_files')
      .select(['sha256', 'size'])
      .where(among(db as Kysely<any>, 'sha256', shas.slice(i, i + PER_QUERY)))
      .where('organization_id', '=', organizationId)
      .execute())
      if (!sizes.has(r.sha256)) sizes.set(r.sha256, r.size);
  return sizes;
}

function place(from: string, to: string): void {
  mkdirSync(path.dirname(to), { recursive: true });
  const tmp = `${to}.sync-${process.pid}`;
  rmSync(tmp, { force: true });
  try {
    linkSync(from, tmp);
  } catch {
    copyFileSync(from, tmp);
  }
  renameSync(tmp, to);
}

/**
 * Puts a content where the walks that want it expect it, from `source` (a verified upload or
 * download, or a copy already in place), and marks those files present. Returns how many.
 */
export async function materialize(db: Q, dataDir: string, sha: string, source: string): Promise<number> {
  const rows = await db
    .selectFrom('sync_walk_files')
    .innerJoin('walks', 'walks.id', 'sync_walk_files.walk_id')
    .select(['sync_walk_files.walk_id as walk_id', 'sync_walk_files.name as name'])
    .where('sync_walk_files.sha256', '=', sha)
    .where('sync_walk_files.present', '=', 0)
    .execute();
  let n = 0;
  for (const r of rows) {
    const to = walkFilePath(dataDir, r.walk_id, r.name);
    if (!to) continue;
    place(source, to);
    await db.updateTable('sync_walk_files').set({ present: 1 }).where('walk_id', '=', r.walk_id).where('name', '=', r.name).execute();
    n++;
  }
  return n;
}

/** A content fully received: checked against its hash, then placed; a mismatch is dropped (and sent again from the start). */
export async function completeContent(db: Kysely<Database>, dataDir: string, sha: string): Promise<'placed' | 'mismatch'> {
  const p = partialPath(dataDir, sha);
  if ((await sha256File(p)) !== sha) {
    rmSync(p, { force: true });
    return 'mismatch';
  }
  await db.transaction().execute((trx) => materialize(trx, dataDir, sha, p));
  rmSync(p, { force: true });
  return 'placed';
}

export { walkDir };
