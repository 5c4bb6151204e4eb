import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import SQLite from 'better-sqlite3';

/**
 * Backups of the database while the service runs: SQLite's online backup API copies a consistent
 * snapshot page by page (the writers go on; a file copy could catch a transaction half written),
 * into `<dir>/cropwalk-<UTC time>.sqlite` beside a manifest `<same>.json`. Each is checked with
 * `PRAGMA integrity_check` before it counts; the oldest go once more than `keep` are kept. No
 * HTTP, no service: the nightly schedule and the `cropwalk backup` command both call this.
 */

export interface BackupManifest {
  file: string;
  /** ISO 8601 UTC, when the snapshot was taken. */
  created_at: string;
  /** The last migration applied in the backup: the schema it holds. */
  schema_version: string;
  migrations: number;
  sha256: string;
  size_bytes: number;
  integrity: 'ok';
  /** The box it came from (meta.node_id). */
  node_id: string | null;
  app_version: string;
}

const NAME = /^cropwalk-(\d{8}T\d{6}(?:\d{3})?Z)\.sqlite$/;
const PAGES_PER_STEP = 256;

/** cropwalk-20260504T023000Z.sqlite for 2026-05-04T02:30:00Z; milliseconds only when needed to keep names apart. */
export function backupName(at: number, withMs = false): string {
  const iso = new Date(at).toISOString();
  const stamp = iso.replace(/[-:]/g, '').replace(/\.(\d{3})Z$/, withMs ? '$1Z' : 'Z');
  return `cropwalk-${stamp}.sqlite`;
}

export async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The last migration a database file holds, and how many: read without migrating it. */
export function schemaOf(db: SQLite.Database): { version: string; count: number } {
  const has = db.prepare("select 1 from sqlite_master where type = 'table' and name = 'kysely_migration'").get();
  if (!has) return { version: 'none', count: 0 };
  const rows = db.prepare('select name from kysely_migration order by name').all() as { name: string }[];
  return { version: rows.at(-1)?.name ?? 'none', count: rows.length };
}

function integrity(db: SQLite.Database): string[] {
  const rows = db.pragma('integrity_check') as { integrity_check: string }[];
  return rows.map((r) => r.integrity_check);
}

export interface BackupOptions {
  dir: string;
  keep: number;
  /** Epoch ms on the service clock: names the file and stamps the manifest. */
  now: number;
  appVersion: string;
  signal?: AbortSignal;
}

/**
 * Takes a backup of the open database `source` into `options.dir`. The snapshot is written under a
 * temporary name, checked, hashed and only then named as a backup, so a failed or interrupted one
 * never looks like a good one.
 */
export async function backupDatabase(source: SQLite.Database, options: BackupOptions): Promise<BackupManifest> {
  if (!(options.keep >= 1)) throw new Error(`BACKUP_KEEP must be at least 1, got ${options.keep}`);
  await mkdir(options.dir, { recursive: true });
  let name = backupName(options.now);
  if (existsSync(path.join(options.dir, name))) name = backupName(options.now, true);
  const final = path.join(options.dir, name);
  const partial = path.join(options.dir, `.${name}.partial`);
  for (const f of [partial, `${partial}-wal`, `${partial}-shm`, `${partial}-journal`]) await rm(f, { force: true });
  try {
    await source.backup(partial, {
      progress: () => {
        // Throwing here is how better-sqlite3 abandons a backup: the service is stopping.
        if (options.signal?.aborted) throw new Error('backup abandoned: the service is stopping');
        return PAGES_PER_STEP;
      },
    });
    const copy = new SQLite(partial, { fileMustExist: true });
    let schema: { version: string; count: number };
    let node: string | null = null;
    try {
      // The copy keeps the source's WAL mode; a backup is one self-contained file, so not WAL.
      copy.pragma('journal_mode = DELETE');
      const problems = integrity(copy);
      if (problems.length !== 1 || problems[0] !== 'ok')
        throw new Error(`the backup failed its integrity check: ${problems.slice(0, 5).join('; ')}`);
      schema = schemaOf(copy);
      try {
        node = (copy.prepare("select value from meta where key = 'node_id'").get() as { value: string } | undefined)?.value ?? null;
      } catch {
        node = null;
      }
    } finally {
      copy.close();
    }
    const size = (await stat(partial)).size;
    const manifest: BackupManifest = {
      file: name,
      created_at: new Date(options.now).toISOString(),
      schema_version: schema.version,
      migrations: schema.count,
      sha256: await sha256Of(partial),
      size_bytes: size,
      integrity: 'ok',
      node_id: node,
      app_version: options.appVersion,
    };
    await syncFile(partial);
    await rename(partial, final);
    const manifestPath = manifestOf(final);
    await writeFile(`${manifestPath}.partial`, JSON.stringify(manifest, null, 2) + '\n');
    await syncFile(`${manifestPath}.partial`);
    await rename(`${manifestPath}.partial`, manifestPath);
    await syncDir(options.dir);
    await prune(options.dir, options.keep);
    return manifest;
  } catch (err) {
    for (const f of [partial, `${partial}-wal`, `${partial}-shm`, `${partial}-journal`]) await rm(f, { force: true });
    throw err;
  }
}

export function manifestOf(backupFile: string): string {
  return backupFile.replace(/\.sqlite$/, '.json');
}

async function syncFile(file: string): Promise<void> {
  const fh = await open(file, 'r+');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } catch {
    // Some filesystems (a FAT USB disk) cannot sync a folder; the files themselves were synced.
  } finally {
    await fh.close();
  }
}

/** The complete backups in `dir` (file and manifest both there), newest first. */
export async function listBackups(dir: string): Promise<(BackupManifest & { path: string })[]> {
  const names = await readdir(dir).catch(() => [] as string[]);
  const out: (BackupManifest & { path: string })[] = [];
  for (const name of names) {
    if (!NAME.test(name)) continue;
    const file = path.join(dir, name);
    try {
      const manifest = JSON.parse(await readFile(manifestOf(file), 'utf8')) as BackupManifest;
      if (manifest.file !== name) continue;
      out.push({ ...manifest, path: file });
    } catch {
      // No manifest (or a torn one): not a backup this code finished; never counted, never pruned.
    }
  }
  return out.sort((a, b) => b.created_at.localeCompare(a.created_at) || b.file.localeCompare(a.file));
}

/** Removes the oldest complete backups beyond `keep`; other files in the folder are left alone. */
export async function prune(dir: string, keep: number): Promise<string[]> {
  const all = await listBackups(dir);
  const gone: string[] = [];
  for (const old of all.slice(keep)) {
    await rm(old.path, { force: true });
    await rm(manifestOf(old.path), { force: true });
    gone.push(old.file);
  }
  return gone;
}

export interface BackupCheck {
  file: string;
  schema_version: string;
  migrations: string[];
  size_bytes: number;
  sha256: string;
  /** Whether a manifest was beside it and matched. */
  manifest: boolean;
}

/**
 * Checks a file before it may replace the database: the manifest's size and sha256 when there is
 * one, an SQLite file that passes integrity_check, with the tables of a cropwalk database, and no
 * migration this build does not know (a backup from a newer version). Throws with what is wrong.
 */
export async function checkBackup(file: string, knownMigrations: string[]): Promise<BackupCheck> {
  const info = await stat(file).catch(() => null);
  if (!info?.isFile()) throw new Error(`${file} is not a file`);
  const sha256 = await sha256Of(file);
  let manifest = false;
  const manifestPath = manifestOf(file);
  if (file.endsWith('.sqlite') && existsSync(manifestPath)) {
    const m = JSON.parse(await readFile(manifestPath, 'utf8')) as BackupManifest;
    if (m.size_bytes !== info.size)
      throw new Error(`${file} is ${info.size} bytes; its manifest says ${m.size_bytes}: the file is damaged or incomplete`);
    if (m.sha256 !== sha256) throw new Error(`${file} does not match the sha256 of its manifest: the file is damaged`);
    manifest = true;
  }
  const head = Buffer.alloc(16);
  const fh = await open(file, 'r');
  try {
    await fh.read(head, 0, 16, 0);
  } finally {
    await fh.close();
  }
  if (head.toString('latin1') !== 'SQLite format 3\u0000') throw new Error(`${file} is not an SQLite database`);
  const db = new SQLite(file, { readonly: true, fileMustExist: true });
  try {
    const problems = integrity(db);
    if (problems.length !== 1 || problems[0] !== 'ok')
      throw new Error(`${file} fails the integrity check: ${problems.slice(0, 5).join('; ')}`);
    const tables = new Set(
      (db.prepare("select name from sqlite_master where type = 'table'").all() as { name: string }[]).map((r) => r.name),
    );
    for (const t of ['kysely_migration', 'meta', 'organizations', 'change_log']) {
      if (!tables.has(t)) throw new Error(`${file} is not a cropwalk database (no ${t} table)`);
    }
    const migrations = (db.prepare('select name from kysely_migration order by name').all() as { name: string }[]).map((r) => r.name);
    const unknown = migrations.filter((m) => !knownMigrations.includes(m));
    if (unknown.length)
      throw new Error(
        `${file} comes from a newer cropwalk (it has migrations this version lacks: ${unknown.join(', ')}); upgrade cropwalk first`,
      );
    return { file, schema_version: migrations.at(-1) ?? 'none', migrations, size_bytes: info.size, sha256, manifest };
  } finally {
    db.close();
  }
}
