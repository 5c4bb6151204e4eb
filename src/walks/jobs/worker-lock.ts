import { readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/**
 * The lock a walk's worker leaves in the walk's folder while it runs: the process id of the
 * worker, which leads a process group of its own (its ffmpeg processes are in it). A box killed
 * with `kill -9` cannot stop its worker; the worker notices its parent is gone and ends itself
 * (worker.ts), but until it has, it and its ffmpeg may still write into the walk's frames folder.
 * So before a walk is scored again, a worker named by its lock that still runs is stopped and
 * waited for (`stopOldWorker`), and only then are the frames cleared for the new attempt.
 */
export const WORKER_LOCK = 'worker.pid';

export async function writeWorkerLock(walkDir: string, pid: number): Promise<void> {
  await writeFile(path.join(walkDir, WORKER_LOCK), `${pid}\n`);
}

export async function removeWorkerLock(walkDir: string): Promise<void> {
  await rm(path.join(walkDir, WORKER_LOCK), { force: true });
}

/**
 * Live processes of the lock's process group whose command line names this walk (its folder is in
 * the arguments of the worker and of every ffmpeg it starts): a reused process id of something
 * else is never touched. Linux only (/proc); elsewhere none are found.
 */
async function groupOf(pgid: number, walkId: string): Promise<number[]> {
  const names = await readdir('/proc').catch(() => [] as string[]);
  const found: number[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const stat = await readFile(`/proc/${name}/stat`, 'utf8');
      // pid (comm) state ppid pgrp ...; comm may hold spaces and parentheses, so read after the last ')'.
      const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z' || Number(pgrp) !== pgid) continue;
      if ((await readFile(`/proc/${name}/cmdline`, 'utf8')).includes(walkId)) found.push(Number(name));
    } catch {
      // Ended while we looked.
    }
  }
  return found;
}

/**
 * Stops a worker of an earlier run of the box that still scores this walk, with its ffmpeg, and
 * waits until they are gone; then removes the lock. Answers the process ids it stopped. Throws
 * when they are still there after `timeoutMs` (the walk then waits in the queue for another try).
 */
export async function stopOldWorker(walkDir: string, walkId: string, timeoutMs = 5_000): Promise<number[]> {
  const text = await readFile(path.join(walkDir, WORKER_LOCK), 'utf8').catch(() => null);
  if (text === null) return [];
  const pgid = Number(text.trim());
  const stopped = Number.isInteger(pgid) && pgid > 1 ? await groupOf(pgid, walkId) : [];
  if (stopped.length) {
    const deadline = Date.now() + timeoutMs;
    for (let left = stopped; left.length; left = await groupOf(pgid, walkId)) {
      if (Date.now() > deadline) throw new Error(`an old worker of walk ${walkId} (processes ${left.join(', ')}) did not stop`);
      for (const pid of left) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // Already gone.
        }
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  }
  await removeWorkerLock(walkDir);
  return stopped;
}
