// `cropwalk backup`, `cropwalk backups`, `cropwalk restore FILE`: for a person at the box's
// console (docs/appliance.md). Settings come from the environment like the service's
// (the installed command reads /etc/cropwalk/cropwalk.env first). Exit 0 done, 1 failed or
// refused, 2 a bad command line.
import { createInterface } from 'node:readline/promises';
import { parseArgs } from 'node:util';
import { existsSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { loadConfig } from '../src/config.js';
import { systemClock } from '../src/clock.js';
import { backupDatabase, listBackups } from '../src/backup/backup.js';
import { APP_VERSION, backupDirOf } from '../src/backup/feature.js';
import { DATABASE_FILE, restoreDatabase, RestoreRefused } from '../src/backup/restore.js';
import { parseCli } from './cli.js';

const USAGE = `usage: cropwalk <command>

  cropwalk backup [--dir DIR]     back up the database now (the service may run)
  cropwalk backups [--dir DIR]    list the backups, newest first
  cropwalk restore FILE [--yes]   put a backup back (the service must be stopped)

DATA_DIR, BACKUP_DIR and BACKUP_KEEP are read from the environment (see docs/appliance.md).`;

const [command, ...rest] = process.argv.slice(2);
const cli = {
  args: rest,
  allowPositionals: true,
  options: { help: { type: 'boolean', short: 'h' }, dir: { type: 'string' }, yes: { type: 'boolean', short: 'y' } },
} as const;
const args = parseCli(cli, USAGE);
const positionals = parseArgs(cli).positionals;
const config = loadConfig(process.env);
const dir = args.dir ? path.resolve(args.dir) : backupDirOf(config);
const dbFile = path.join(config.dataDir, DATABASE_FILE);
// These commands copy the box's SQLite file; an upstream on PostgreSQL is backed up by its server's tools.
if (config.databaseUrl && command !== undefined && ['backup', 'backups', 'restore'].includes(command))
  fail('DATABASE_URL names a PostgreSQL database: back it up with pg_dump or continuous archiving (docs/postgres.md), not with cropwalk');

function fail(message: string, code = 1): never {
  console.error(`cropwalk ${command ?? ''}: ${message}`);
  process.exit(code);
}

async function confirm(question: string): Promise<boolean> {
  if (args.yes) return true;
  if (!process.stdin.isTTY) fail('add --yes to restore without a question (no terminal to ask on)', 2);
  const rl = createInterface({ input: process.stdin, output: process.stdout });
  const answer = await rl.question(`${question} [y/N] `);
  rl.close();
  return /^y(es)?$/i.test(answer.trim());
}

switch (command) {
  case 'backup': {
    if (!existsSync(dbFile)) fail(`no database at ${dbFile} (is DATA_DIR right?)`);
    const db = new SQLite(dbFile, { fileMustExist: true });
    db.pragma('busy_timeout = 5000');
    try {
      const m = await backupDatabase(db, { dir, keep: config.backupKeep, now: systemClock.now(), appVersion: APP_VERSION });
      console.log(
        `backed up to ${path.join(dir, m.file)} (${m.size_bytes} bytes, schema ${m.schema_version}, sha256 ${m.sha256}, integrity ok)`,
      );
    } catch (err) {
      fail((err as Error).message);
    } finally {
      db.close();
    }
    break;
  }
  case 'backups': {
    const all = await listBackups(dir);
    if (!all.length) console.log(`no backups in ${dir}`);
    for (const b of all) console.log(`${b.created_at}  ${String(b.size_bytes).padStart(12)} bytes  ${b.schema_version}  ${b.path}`);
    break;
  }
  case 'restore': {
    const file = positionals[0];
    if (!file) fail(`which backup? ${USAGE}`, 2);
    if (
      !(await confirm(
        `Replace the database in ${config.dataDir} with ${file}? The current one is kept in ${path.join(config.dataDir, 'replaced')}.`,
      ))
    )
      fail('not restored: not confirmed');
    try {
      const r = await restoreDatabase({ dataDir: config.dataDir, file, now: systemClock.now() });
      console.log(`restored ${r.restored.file} (schema ${r.restored.schema_version}${r.restored.manifest ? ', manifest checked' : ''})`);
      if (r.migrated.length) console.log(`migrated forward: ${r.migrated.join(', ')}`);
      console.log(r.kept_aside ? `the database it replaced is kept at ${r.kept_aside}` : 'there was no database before');
      console.log('start the service again: sudo systemctl start cropwalk');
    } catch (err) {
      fail(err instanceof RestoreRefused ? err.message : `restore failed: ${(err as Error).message}`);
    }
    break;
  }
  default:
    fail(command ? `unknown command ${command}\n${USAGE}` : USAGE, 2);
}
