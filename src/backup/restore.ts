import { chown, copyFile, mkdir, open, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { migrationNames, openDatabase } from '../db/database.js';
import { backupName, checkBackup, type BackupCheck } from './backup.js';

/**
 * Putting a backup back in place of the database, for a person at the console (`cropwalk restore
 * FILE`): refused while the service runs (it holds the database open), the file checked first,
 * the current database kept aside (DATA_DIR/replaced/), and the backup migrated forward to this
 * version's schema, as a start of the service would.
 */

export const DATABASE_FILE = 'cropwalk.sqlite';
export const PID_FILE = 'cropwalk.pid';

/** The service writes its pid here while it has the database open (src/app.ts). */
export async function writePidFile(dataDir: string, pid = process.pid): Promise<void> {
  await writeFile(path.join(dataDir, PID_FILE), `${pid}\n`, { mode: 0o644 });
}

export async function removePidFile(dataDir: string, pid = process.pid): Promise<void> {
  const file = path.join(dataDir, PID_FILE);
  const text = await readFile(file, 'utf8').catch(() => null);
  // Only our own: a second instance started on the same folder must not lose its mark.
  if (text !== null && Number(text.trim()) === pid) await rm(file, { force: true });
}

/** The pid of a running service on this data folder, or null (no pid file, or a stale one). */
export async function runningService(dataDir: string): Promise<number | null> {
  const text = await readFile(path.join(dataDir, PID_FILE), 'utf8').catch(() => null);
  const pid = Number(text?.trim());
  if (!Number.isInteger(pid) || pid <= 0) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (err) {
    // EPERM: it exists and belongs to another user (the service's, when root runs this).
    return (err as NodeJS.ErrnoException).code === 'EPERM' ? pid : null;
  }
}

export class RestoreRefused extends Error {}

export interface RestoreReport {
  restored: BackupCheck;
  /** Where the database that was in place now is; null when there was none. */
  kept_aside: string | null;
  /** Migrations applied to bring the backup up to this version. */
  migrated: string[];
}

export async function restoreDatabase(options: { dataDir: string; file: string; now: number }): Promise<RestoreReport> {
  const { dataDir } = options;
  const pid = await runningService(dataDir);
  if (pid !== null)
    throw new RestoreRefused(
      `the service is running (pid ${pid}) and has the database open: stop it first (sudo systemctl stop cropwalk), restore, then start it again`,
    );
  const check = await checkBackup(path.resolve(options.file), migrationNames()).catch((err: Error) => {
    throw new RestoreRefused(`not restored: ${err.message}`);
  });

  await mkdir(dataDir, { recursive: true });
  const current = path.join(dataDir, DATABASE_FILE);
  let keptAside: string | null = null;
  if (existsSync(current)) {
    // Fold the write-ahead log into the file first, so the file kept aside is the whole database.
    const db = new SQLite(current, { fileMustExist: true });
    try {
      db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      db.close();
    }
    const aside = path.join(dataDir, 'replaced');
    await mkdir(aside, { recursive: true, mode: 0o750 });
    keptAside = path.join(aside, backupName(options.now).replace(/^cropwalk-/, 'cropwalk-before-restore-'));
    if (existsSync(keptAside)) keptAside = keptAside.replace(/\.sqlite$/, `-${process.pid}.sqlite`);
    await rename(current, keptAside);
    for (const ext of ['-wal', '-shm']) await rm(current + ext, { force: true });
  }

  const partial = path.join(dataDir, `.${DATABASE_FILE}.restoring`);
  await copyFile(check.file, partial);
  const fh = await open(partial, 'r+');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(partial, current);

  // The restored box is a new site to sync: under its old node id it would number new changes
  // as ones its upstream already holds from it (docs/sync.md, "Restoring from a backup").
  const restored = new SQLite(current, { fileMustExist: true });
  try {
    restored.prepare("DELETE FROM meta WHERE key = 'node_id'").run();
  } finally {
    restored.close();
  }

  // Migrated forward now, as the service's start would: an error shows here, at the console.
  const before = new Set(check.migrations);
  const opened = await openDatabase(dataDir);
  await opened.close();
  const migrated = migrationNames().filter((m) => !before.has(m));

  await matchOwner(
    dataDir,
    [current, keptAside && path.dirname(keptAside), keptAside].filter((p): p is string => Boolean(p)),
  );
  return { restored: check, kept_aside: keptAside, migrated };
}

/** Run as root, the files written belong to root: give them to the data folder's owner (the service user). */
async function matchOwner(dataDir: string, files: string[]): Promise<void> {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return;
  const owner = await stat(dataDir);
  for (const f of files) {
    for (const p of [f, `${f}-wal`, `${f}-shm`]) await chown(p, owner.uid, owner.gid).catch(() => undefined);
  }
}
