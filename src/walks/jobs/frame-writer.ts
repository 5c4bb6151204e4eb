import { spawn, type ChildProcessByStdio } from 'node:child_process';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { requireFfmpeg } from '../../vision/media/ffmpeg-path.js';
import { MediaError, tailReason } from '../../vision/media/errors.js';
import type { RgbImage } from '../../vision/types.js';
import { FRAME_INDEX_DIGITS, type FrameName } from './storage.js';

/**
 * Writes a walk's frames as numbered JPEGs through one long-running ffmpeg
 * per run of same-sized consecutive frames, instead of one ffmpeg per frame:
 * starting a process costs more than encoding a frame, and a walk has
 * hundreds of frames times two (image and overlay).
 */
export class JpegSequenceWriter {
  private proc: ChildProcessByStdio<Writable, null, Readable> | null = null;
  private exited: Promise<void> | null = null;
  private stderr = '';
  private size = '';
  private next = -1;

  constructor(
    private readonly dir: string,
    private readonly name: FrameName,
    /** ffmpeg mjpeg qscale, 2 (best) to 31. */
    private readonly qscale = 5,
  ) {}

  /** Queues frame `index`; its file exists once the run is closed (or soon after). */
  async write(index: number, image: RgbImage): Promise<void> {
    const size = `${image.width}x${image.height}`;
    if (!this.proc || size !== this.size || index !== this.next) {
      await this.close();
      await this.open(index, size);
    }
    this.next = index + 1;
    const data = Buffer.from(image.data.buffer, image.data.byteOffset, image.width * image.height * 3);
    const stdin = this.proc!.stdin;
    if (!stdin.write(data))
      await new Promise<void>((resolve, reject) => {
        const done = (err?: Error) => {
          stdin.off('drain', done);
          stdin.off('error', done);
          if (err) reject(err);
          else resolve();
        };
        stdin.once('drain', done);
        stdin.once('error', done);
      });
  }

  /** Ends the current run and waits until every frame of it is on disk. */
  async close(): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    this.proc = null;
    proc.stdin.end();
    await this.exited;
  }

  /** Stops at once (the walk was stopped); partial files are removed by the runner. */
  kill(): void {
    this.proc?.kill('SIGKILL');
    this.proc = null;
  }

  private async open(start: number, size: string): Promise<void> {
    const { ffmpeg } = await requireFfmpeg();
    this.size = size;
    this.stderr = '';
    // image2 reads % as a pattern: a literal one in the folder name must be doubled.
    const pattern = path.join(this.dir.replace(/%/g, '%%'), `%0${FRAME_INDEX_DIGITS}d-${this.name}`);
    const args = [
      '-hide_banner',
      '-nostdin',
      '-v',
      'error',
      '-f',
      'rawvideo',
      '-pix_fmt',
      'rgb24',
      '-s',
      size,
      '-i',
      'pipe:0',
      '-fps_mode',
      'passthrough',
      '-c:v',
      'mjpeg',
      '-pix_fmt',
      'yuvj420p',
      '-q:v',
      String(this.qscale),
      '-start_number',
      String(start),
      '-f',
      'image2',
      pattern,
    ];
    const proc = spawn(ffmpeg, args, { stdio: ['pipe', 'ignore', 'pipe'] });
    proc.stderr.setEncoding('utf8');
    proc.stderr.on('data', (d: string) => {
      this.stderr = (this.stderr + d).slice(-4096);
    });
    proc.stdin.on('error', () => {
      // ffmpeg exiting early closes its stdin; the exit status below says why.
    });
    this.exited = new Promise<void>((resolve, reject) => {
      proc.once('error', (err) => reject(new MediaError('media_unavailable', 'ffmpeg could not be started', err.message)));
      proc.once('close', (code, signal) => {
        if (code === 0 || signal === 'SIGKILL') resolve();
        else
          reject(
            new MediaError(
              'encode_failed',
              'ffmpeg could not write the frame images',
              tailReason(this.stderr, this.dir) || `exit ${code ?? signal}`,
            ),
          );
      });
    });
    // A rejected exit before anyone awaits it must not crash the worker as an unhandled rejection.
    this.exited.catch(() => undefined);
    this.proc = proc;
  }
}
