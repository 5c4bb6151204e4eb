import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Config } from '../../src/config.js';
import { storageOf } from '../../src/health/routes.js';
import { startServer, type TestServer } from './server.js';

/** Mounts a tmpfs of `bytes` at a new folder; the reason when this machine does not allow it (not root, no mount). */
export function smallDisk(bytes: number): { dir: string } | { reason: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-full-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${bytes}`, 'tmpfs', dir], { stdio: 'pipe' });
    return { dir };
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    return { reason: ((err as { stderr?: Buffer }).stderr?.toString().trim() || (err as Error).message).split('\n')[0]! };
  }
}

export function unmount(dir: string): void {
  // Lazy: a handle still closing (a worker's SQLite file) must not fail the teardown.
  execFileSync('umount', ['-l', dir]);
  rmSync(dir, { recursive: true, force: true });
}

/** The skip reason of a test that needs a small tmpfs, or false where one can be mounted. */
export function smallDiskSkip(bytes: number, what: string): string | false {
  const probe = smallDisk(bytes);
  if ('dir' in probe) {
    unmount(probe.dir);
    return false;
  }
  return `a small tmpfs cannot be mounted here (${probe.reason}); ${what} need one`;
}

/** Writes one file under `dir` that leaves `leave` bytes free (0: the disk full to its last page); answers its path. */
export async function ballast(dir: string, leave = 0, name = 'ballast'): Promise<string> {
  const file = path.join(dir, name);
  rmSync(file, { force: true });
  try {
    writeFileSync(file, Buffer.alloc(Math.max(0, (await storageOf(dir)).free_bytes - leave)));
  } catch (err) {
    // tmpfs counts in pages: the last partial page may not fit, and the disk is full either way.
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  }
  return file;
}

/** A server whose DATA_DIR is a fresh tmpfs of `bytes` of its own, unmounted after the test. */
export async function serverOnSmallDisk(
  t: { teardown(fn: () => unknown): void },
  bytes: number,
  config: Partial<Config> = {},
): Promise<TestServer> {
  const disk = smallDisk(bytes);
  if (!('dir' in disk)) throw new Error(disk.reason);
  const box: { server?: TestServer } = {};
  t.teardown(async () => {
    await box.server?.close();
    unmount(disk.dir);
  });
  box.server = await startServer(t, { ...config, dataDir: disk.dir });
  return box.server;
}
