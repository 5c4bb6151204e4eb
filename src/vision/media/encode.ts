import { spawn } from 'node:child_process';
import type { RgbImage } from '../types.js';
import { MediaError, tailReason } from './errors.js';
import { requireFfmpeg } from './ffmpeg-path.js';

/**
 * JPEG bytes of an RGB image, encoded by ffmpeg through stdin/stdout (no
 * temporary file). `quality` is 1–100 like most tools; it is mapped onto
 * ffmpeg's mjpeg qscale (2 best … 31 worst).
 */
export async function encodeJpeg(image: RgbImage, quality = 85): Promise<Buffer> {
  assertImage(image);
  if (!(quality >= 1 && quality <= 100)) throw new RangeError('quality must be between 1 and 100');
  const { ffmpeg } = await requireFfmpeg();
  const qscale = Math.round(2 + ((100 - quality) / 99) * 29);
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
    `${image.width}x${image.height}`,
    '-i',
    'pipe:0',
    '-frames:v',
    '1',
    '-c:v',
    'mjpeg',
    '-pix_fmt',
    'yuvj420p',
    '-q:v',
    String(qscale),
    '-f',
    'image2pipe',
    'pipe:1',
  ];
  return new Promise<Buffer>((resolve, reject) => {
    const child = spawn(ffmpeg, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (d: string) => {
      stderr = (stderr + d).slice(-4096);
    });
    child.stdin.on('error', () => {
      // ffmpeg exiting early closes its stdin; the exit code below says why.
    });
    child.once('error', (err) => reject(new MediaError('media_unavailable', 'ffmpeg could not be started', err.message)));
    child.once('close', (code) => {
      const jpeg = Buffer.concat(out);
      if (code !== 0 || jpeg.length < 4) {
        reject(new MediaError('encode_failed', 'ffmpeg could not encode the JPEG', tailReason(stderr) || `exit ${code}`));
      } else resolve(jpeg);
    });
    child.stdin.end(Buffer.from(image.data.buffer, image.data.byteOffset, image.width * image.height * 3));
  });
}

export function assertImage(image: RgbImage): void {
  if (!Number.isInteger(image.width) || !Number.isInteger(image.height) || image.width < 1 || image.height < 1) {
    throw new RangeError(`bad image size ${image.width}×${image.height}`);
  }
  if (image.data.length < image.width * image.height * 3) {
    throw new RangeError(`image data holds ${image.data.length} bytes, ${image.width * image.height * 3} needed`);
  }
}
