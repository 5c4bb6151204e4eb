import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Feature } from '../feature.js';
import type { HealthCheck, Services } from '../services.js';
import { storageOf } from '../health/routes.js';
import type { Schedule } from '../schedules/schedule.js';
import { backupDatabase, listBackups } from './backup.js';

const PACKAGE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'package.json');
export const APP_VERSION = (JSON.parse(readFileSync(PACKAGE, 'utf8')) as { version: string }).version;

/** Where the backups go: BACKUP_DIR (a USB disk, say), else DATA_DIR/backups. */
export function backupDirOf(config: Services['config']): string {
  return path.resolve(config.backupDir ?? path.join(config.dataDir, 'backups'));
}

/** A backup older than this means the nightly one has stopped working: health says so. */
export const BACKUP_STALE_MS = 48 * 3600_000;

export const backupSchedule: Schedule = {
  name: 'backup',
  summary: 'Backs up the database (SQLite online backup, checked with integrity_check) into BACKUP_DIR, keeping BACKUP_KEEP',
  // 03:15: after the hour the clocks change in Europe and North America, so it runs every night once.
  when: '15 3 * * *',
  // A file copy is SQLite's backup; a PostgreSQL database is backed up by its server's own tools.
  enabledByDefault: (services) =>
    services.engine.kind === 'sqlite'
      ? true
      : {
          off: 'the database is PostgreSQL (DATABASE_URL): back it up with its own tools, pg_dump or continuous archiving (docs/postgres.md)',
        },
  async run({ services, startedAt, signal }) {
    if (services.engine.kind !== 'sqlite' || !services.engine.sqlite)
      throw new Error('backups copy the SQLite file; on PostgreSQL use pg_dump or continuous archiving (docs/postgres.md)');
    const dir = backupDirOf(services.config);
    const m = await backupDatabase(services.engine.sqlite, {
      dir,
      keep: services.config.backupKeep,
      now: startedAt,
      appVersion: APP_VERSION,
      signal,
    });
    return { file: m.file, size_bytes: m.size_bytes, sha256: m.sha256, schema_version: m.schema_version };
  },
};

/**
 * The backups as a person needs them: the last good one and its age, the room left where they
 * go. Not ok when the newest is more than two days old (the nightly one has stopped working) or
 * the folder has less room than two more of them.
 */
export function backupsCheck(services: Services): HealthCheck {
  return {
    name: 'backups',
    critical: false,
    async check() {
      const dir = backupDirOf(services.config);
      const all = await listBackups(dir);
      const last = all[0] ?? null;
      const now = services.clock.now();
      const age = last ? Math.max(0, Math.round((now - Date.parse(last.created_at)) / 1000)) : null;
      const space = await storageOf(dir).catch(() => null);
      const warnings: string[] = [];
      if (!last)
        warnings.push(`No backup has been made yet. The nightly backup writes to ${dir}; run \`cropwalk backup\` to make one now.`);
      else if (age! * 1000 > BACKUP_STALE_MS)
        warnings.push(
          `The last good backup is ${Math.floor(age! / 3600)} hours old (${last.created_at}): the nightly backup is not working. GET /api/schedules shows its last run.`,
        );
      if (last && space && space.free_bytes < 2 * last.size_bytes)
        warnings.push(`The backup folder ${dir} has room for fewer than two more backups (${space.free_bytes} bytes free).`);
      return {
        ok: last ? warnings.length === 0 : true,
        detail: {
          dir,
          count: all.length,
          keep: services.config.backupKeep,
          last_good: last && {
            file: last.file,
            created_at: last.created_at,
            size_bytes: last.size_bytes,
            schema_version: last.schema_version,
          },
          age_s: age,
          free_bytes: space?.free_bytes ?? null,
          warning: warnings.length ? warnings.join(' ') : null,
        },
      };
    },
  };
}

export const backupFeature: Feature = {
  name: 'backup',
  routes: [],
  schedules: [backupSchedule],
  start(services) {
    // On PostgreSQL there is no backup of the box's own to report on.
    if (services.engine.kind === 'sqlite') services.healthChecks.push(backupsCheck(services));
  },
};
