import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

/** Whether socat is installed (Debian package socat; scripts/setup.mjs installs it for the tests). */
export function hasSocat(): boolean {
  return spawnSync('socat', ['-V'], { stdio: 'ignore' }).status === 0;
}

/**
 * A real pseudo-terminal pair made by socat: the service opens `device` as its serial port (a
 * real tty, so the serialport library's own code runs), the test writes what the scale would send
 * into `feed`. `pull()` ends socat (the cable comes out); `plug()` makes the pair again under the
 * same names (it goes back in).
 */
export class PtyPair {
  readonly device: string;
  readonly feed: string;
  private child: ChildProcess | null = null;
  private fd: number | null = null;

  constructor(dir: string) {
    this.device = path.join(dir, 'scale0');
    this.feed = path.join(dir, 'feed0');
  }

  async plug(): Promise<void> {
    const child = spawn('socat', [`pty,raw,echo=0,link=${this.device}`, `pty,raw,echo=0,link=${this.feed}`], { stdio: 'ignore' });
    this.child = child;
    const deadline = performance.now() + 10_000;
    while (!(existsSync(this.device) && existsSync(this.feed))) {
      if (child.exitCode !== null) throw new Error(`socat exited with ${child.exitCode}`);
      if (performance.now() > deadline) throw new Error('socat made no pty pair within 10 s');
      await new Promise((r) => setTimeout(r, 10));
    }
    this.fd = openSync(this.feed, 'w');
  }

  send(text: string | Buffer): void {
    if (this.fd === null) throw new Error('the pty pair is not plugged');
    writeSync(this.fd, typeof text === 'string' ? Buffer.from(text, 'latin1') : text);
  }

  async pull(): Promise<void> {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await gone;
    // socat removes its links on exit; wait until it has, so plug() makes new ones.
    const deadline = performance.now() + 5000;
    while (existsSync(this.device) || existsSync(this.feed)) {
      if (performance.now() > deadline) throw new Error('socat left its links behind');
      await new Promise((r) => setTimeout(r, 10));
    }
  }
}

/** A pair under a fresh temporary folder, plugged unless `plugged` is false; pulled and removed when the test ends. */
export async function ptyPairFor(t: { teardown(fn: () => unknown): void }, plugged = true): Promise<PtyPair> {
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-pty-'));
  const pty = new PtyPair(dir);
  t.teardown(async () => {
    await pty.pull();
    rmSync(dir, { recursive: true, force: true });
  });
  if (plugged) await pty.plug();
  return pty;
}
