// Runs the real ffmpeg binary, resolved by the media module as docs/architecture.md
// says (FFMPEG_PATH, else ffmpeg-static's binary, else `ffmpeg` on PATH).
import { spawn } from 'node:child_process';
import { requireFfmpeg } from '../../src/vision/media/ffmpeg-path.js';

/** An ffmpeg process fed raw RGB frames on stdin; `write` respects the pipe's back-pressure. */
export interface RawFrameSink {
  write(frame: Uint8Array): Promise<void>;
  /** Closes stdin and resolves with stdout once ffmpeg exits cleanly. */
  finish(): Promise<Buffer>;
}

export async function spawnRawEncoder(width: number, height: number, fps: number, outputArgs: string[]): Promise<RawFrameSink> {
  const args = [
    '-hide_banner',
    '-loglevel',
    'error',
    '-y',
    '-f',
    'rawvideo',
    '-pix_fmt',
    'rgb24',
    '-s',
    `${width}x${height}`,
    '-r',
    String(fps),
    '-i',
    'pipe:0',
    ...outputArgs,
  ];
  const { ffmpeg } = await requireFfmpeg();
  const child = spawn(ffmpeg, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout.on('data', (d: Buffer) => out.push(d));
  child.stderr.on('data', (d: Buffer) => err.push(d));
  let failure: Error | undefined;
  const exited = new Promise<void>((resolve, reject) => {
    child.on('error', (e) => {
      failure = new Error(`cannot run ffmpeg (${ffmpeg}): ${e.message}`);
      reject(failure);
    });
    child.on('close', (code) => {
      if (code === 0) resolve();
      else {
        failure = new Error(`ffmpeg exited with ${code}: ${Buffer.concat(err).toString().trim().slice(-2000)}`);
        reject(failure);
      }
    });
  });
  exited.catch(() => undefined);
  child.stdin.on('error', () => undefined); // surfaced through `exited`

  return {
    async write(frame) {
      if (failure) throw failure;
      if (!child.stdin.write(frame)) {
        await new Promise<void>((resolve) => {
          const done = () => {
            child.stdin.off('drain', done);
            child.off('close', done);
            resolve();
          };
          child.stdin.once('drain', done);
          child.once('close', done);
        });
      }
      if (failure) throw failure;
    },
    async finish() {
      child.stdin.end();
      await exited;
      return Buffer.concat(out);
    },
  };
}

/**
 * Every frame of a clip at its own rate, exactly (no sampling): what the truth's
 * frame indices refer to. Used to align a sampling decoder's output to the truth.
 */
export async function* readAllFrames(file: string, width: number, height: number): AsyncGenerator<Uint8Array> {
  const { ffmpeg } = await requireFfmpeg();
  const child = spawn(
    ffmpeg,
    ['-hide_banner', '-loglevel', 'error', '-i', file, '-f', 'rawvideo', '-pix_fmt', 'rgb24', '-s', `${width}x${height}`, 'pipe:1'],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const frameBytes = width * height * 3;
  let pending: Buffer = Buffer.alloc(0);
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  try {
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      pending = pending.length ? Buffer.concat([pending, chunk]) : chunk;
      while (pending.length >= frameBytes) {
        yield new Uint8Array(pending.subarray(0, frameBytes));
        pending = pending.subarray(frameBytes);
      }
    }
    const code = await closed;
    if (code !== 0) throw new Error(`ffmpeg could not decode ${file}: ${stderr.trim()}`);
  } finally {
    child.kill();
  }
}
