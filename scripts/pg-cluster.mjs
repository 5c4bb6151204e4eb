// A throwaway PostgreSQL server for tests and benchmarks: initdb in a temporary folder, started
// on a free port on 127.0.0.1, stopped and removed afterwards, so that nothing depends on a
// server the machine happens to run. Plain JavaScript: scripts/test-postgres.mjs runs it before
// the TypeScript tooling, and test/helpers/postgres.ts and bench/ import it.
import { existsSync, mkdtempSync, readdirSync, rmSync, chmodSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** The folder holding initdb and pg_ctl: PG_BIN, else Debian's newest /usr/lib/postgresql/N/bin, else pg_config's, else PATH. */
export function findPgBin() {
  if (process.env.PG_BIN && existsSync(path.join(process.env.PG_BIN, 'initdb'))) return process.env.PG_BIN;
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const versions = readdirSync(debian)
      .filter((v) => existsSync(path.join(debian, v, 'bin', 'initdb')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions.length) return path.join(debian, versions[0], 'bin');
  }
  const config = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  if (config.status === 0 && existsSync(path.join(config.stdout.trim(), 'initdb'))) return config.stdout.trim();
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) return path.dirname(which.stdout.trim());
  return null;
}

/** A port nothing listens on now (a race with another process taking it is possible, and then start fails). */
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

const isRoot = () => typeof process.getuid === 'function' && process.getuid() === 0;

/** PostgreSQL refuses to run as root: as root the server runs as Debian's `postgres` user. */
function asServerUser(bin, args) {
  if (!isRoot()) return [bin, args];
  return ['runuser', ['-u', 'postgres', '--', bin, ...args]];
}

function run(bin, args, what) {
  const [cmd, argv] = asServerUser(bin, args);
  const r = spawnSync(cmd, argv, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${what} failed (exit ${r.status ?? r.signal}): ${(r.stderr || r.stdout || '').trim().slice(-2000)}`);
  return r.stdout;
}

/**
 * Starts a server of its own. `durable`: fsync and synchronous commit as shipped (benchmarks that
 * compare with SQLite's synchronous=FULL); otherwise off (tests: a crash loses a throwaway folder).
 * Returns the admin URL (user `cropwalk`, trust on 127.0.0.1 only) and `stop()`.
 */
export async function startCluster({ durable = false, port: wanted } = {}) {
  const bin = findPgBin();
  if (!bin) throw new Error('PostgreSQL is not installed (no initdb found; apt-get install postgresql, or set PG_BIN)');
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-pg-'));
  if (isRoot()) {
    const r = spawnSync('chown', ['-R', 'postgres:postgres', dir]);
    if (r.status !== 0) throw new Error('cannot hand the cluster folder to the postgres user (no such user?)');
  }
  chmodSync(dir, 0o700);
  const data = path.join(dir, 'data');
  try {
    run(
      path.join(bin, 'initdb'),
      ['-D', data, '-U', 'cropwalk', '--auth=trust', '--encoding=UTF8', '--locale=C.UTF-8', '--no-instructions'],
      'initdb',
    );
    const port = wanted ?? (await freePort());
    const settings = [
      `-p ${port}`,
      `-k ${dir}`,
      "-c listen_addresses='127.0.0.1'",
      '-c max_connections=200',
      '-c shared_buffers=128MB',
      ...(durable ? [] : ['-c fsync=off', '-c synchronous_commit=off', '-c full_page_writes=off']),
    ].join(' ');
    run(
      path.join(bin, 'pg_ctl'),
      ['-D', data, '-o', settings, '-l', path.join(dir, 'server.log'), '-w', '-t', '60', 'start'],
      'pg_ctl start',
    );
    const url = `postgres://cropwalk@127.0.0.1:${port}/postgres`;
    let stopped = false;
    return {
      url,
      port,
      dir,
      stop() {
        if (stopped) return;
        stopped = true;
        try {
          run(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop'], 'pg_ctl stop');
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      },
    };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
