import { spawn } from 'node:child_process';
import type { RgbImage } from '../types.js';
import { MediaError, tailReason } from './errors.js';
import {
  canConvertColour,
  colourConversionFilters,
  colourConversionFor,
  isDolbyVisionOnly,
  type ColourConversion,
} from './colour-conversion.js';
import { requireFfmpeg } from './ffmpeg-path.js';
import { decodeHeif } from './heif.js';
import { photoColour, type PhotoColour } from './colour-profile.js';
import { convertToSrgb } from '../image/icc.js';
import { fileUrl, LITERAL_IMAGE_PATH, MAX_PIXELS, probeMedia, type MediaInfo } from './probe.js';
import { resizeArea } from '../image/resize.js';

export interface DecodeOptions {
  /** Seconds between sampled frames of a video (by timestamp, so variable frame rate is fine). Default 0.5. */
  sampleSeconds?: number;
  /** Stop after this many frames. Default DEFAULT_MAX_FRAMES. */
  maxFrames?: number;
  /** Frames are scaled down (never up) so the long side is at most this. Default 1280. */
  maxLongSide?: number;
  /** Probe answer when the caller already has one, to save a second ffprobe run. */
  info?: MediaInfo;
  /** Aborting kills ffmpeg and makes the iterator throw MediaError('aborted'). */
  signal?: AbortSignal;
}

export interface DecodedFrame {
  index: number;
  /** Sample time in the clip: index × sampleSeconds for a video, 0 for a photo. */
  timeSeconds: number;
  image: RgbImage;
  /**
   * How the clip's colours reached sRGB: 'as-recorded' (sRGB/BT.709 or untagged);
   * 'converted' from HDR (PQ, HLG) or BT.2020, or a photo's colour profile (Display P3, Adobe
   * RGB); 'unconverted' when the clip needed that but this ffmpeg lacks the zscale filter, the clip
   * is Dolby Vision without a standard base layer (profile 5), or the photo's profile cannot be
   * applied, so its hues and chroma are off (see colour-conversion.ts,
   * colour-profile.ts).
   */
  colour: 'as-recorded' | 'converted' | 'unconverted';
}

/**
 * How a decode ended, the generator's return value. ffmpeg runs at `-v error`, so anything it
 * printed is a decoding error; it still exits 0 when it could decode some of the file (a clip
 * cut off part way with its index intact, damaged pictures it skipped), and the frames it gave
 * look like the whole clip unless this is read.
 */
export interface DecodeSummary {
  /** Frames given. */
  frames: number;
  /** ffmpeg's own words when it reported decoding errors but gave frames; null for a clean decode. */
  errors: string | null;
}

export const DEFAULT_SAMPLE_SECONDS = 0.5;
/**
 * Ten minutes of clip at the default sampling: a whole row (a 100 m row filmed at a slow
 * 0.2 m/s is 500 s) is read, not its first stretch; a longer clip is cut there and says so.
 */
export const DEFAULT_MAX_FRAMES = 1200;
export const DEFAULT_MAX_LONG_SIDE = 1280;

/** Output size for a displayed width×height scaled so the long side fits, never enlarged. */
export function workingSize(width: number, height: number, maxLongSide: number): { width: number; height: number } {
  const long = Math.max(width, height);
  if (long <= maxLongSide) return { width, height };
  const s = maxLongSide / long;
  return { width: Math.max(1, Math.round(width * s)), height: Math.max(1, Math.round(height * s)) };
}

/**
 * Frames of a photo or clip as RGB images, streamed from one ffmpeg process.
 * ffmpeg applies the rotation metadata itself (autorotate), the fps filter
 * samples by presentation time, and the scale filter brings frames to the
 * working size. Leaving the loop early kills ffmpeg.
 */
export async function* decodeFrames(file: string, options: DecodeOptions = {}): AsyncGenerator<DecodedFrame, DecodeSummary> {
  const sampleSeconds = options.sampleSeconds ?? DEFAULT_SAMPLE_SECONDS;
  const maxFrames = options.maxFrames ?? DEFAULT_MAX_FRAMES;
  const maxLongSide = options.maxLongSide ?? DEFAULT_MAX_LONG_SIDE;
  if (!(sampleSeconds > 0) || !Number.isFinite(sampleSeconds)) throw new RangeError('sampleSeconds must be a positive number');
  if (!Number.isInteger(maxFrames) || maxFrames < 1) throw new RangeError('maxFrames must be a positive integer');
  if (!Number.isInteger(maxLongSide) || maxLongSide < 16) throw new RangeError('maxLongSide must be an integer of at least 16');
  if (options.signal?.aborted) throw new MediaError('aborted', 'decoding was cancelled');

  const info = options.info ?? (await probeMedia(file));
  if (info.container === 'heif') {
    yield await heifFrame(file, maxLongSide);
    return { frames: 1, errors: null };
  }
  const { ffmpeg } = await requireFfmpeg();
  const photo = info.kind === 'image';
  const size = workingSize(info.width, info.height, maxLongSide);
  const frameBytes = size.width * size.height * 3;

  const filters: string[] = [];
  // The fps filter keeps the last input frame of each output slot; rounding timestamps up makes
  // slot k hold the frame shown at k × sampleSeconds (with the default rounding it would be the
  // frame half an interval later).
  if (!photo) filters.push(`fps=fps=1/${sampleSeconds}:round=up:eof_action=pass`);
  filters.push(`scale=${size.width}:${size.height}:flags=area`);
  const conversion: ColourConversion | null = photo ? null : colourConversionFor(info.colourTransfer, info.colourPrimaries);
  const dolbyOnly = !photo && isDolbyVisionOnly(info.dolbyVision);
  const converting = !dolbyOnly && conversion !== null && (await canConvertColour(ffmpeg));
  if (converting) {
    filters.push(
      ...colourConversionFilters({
        transfer: info.colourTransfer,
        primaries: info.colourPrimaries,
        matrix: info.colourMatrix,
        range: info.colourRange,
      }),
    );
  }
  const profile = photo ? await photoColour(file) : null;
  const colour: DecodedFrame['colour'] = profile
    ? frameColour(profile)
    : dolbyOnly
      ? 'unconverted'
      : conversion === null
        ? 'as-recorded'
        : converting
          ? 'converted'
          : 'unconverted';
  const args = [
    '-hide_banner',
    '-nostdin',
    '-v',
    'error',
    '-protocol_whitelist',
    'file',
    ...(info.container === 'image2' ? LITERAL_IMAGE_PATH : []),
    '-i',
    fileUrl(file),
    '-map',
    '0:v:0',
    '-an',
    '-sn',
    '-dn',
    '-vf',
    filters.join(','),
    '-frames:v',
    String(photo ? 1 : maxFrames),
    '-f',
    'rawvideo',
    '-pix_fmt',
    'rgb24',
    'pipe:1',
  ];
  const child = spawn(ffmpeg, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (d: string) => {
    stderr = (stderr + d).slice(-8192);
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; spawnError?: Error }>((resolve) => {
    child.once('error', (spawnError) => resolve({ code: null, signal: null, spawnError }));
    child.once('close', (code, signal) => resolve({ code, signal }));
  });
  let aborted = false;
  const onAbort = () => {
    aborted = true;
    child.kill('SIGKILL');
  };
  options.signal?.addEventListener('abort', onAbort, { once: true });

  let finished = false;
  try {
    let frame = new Uint8Array(frameBytes);
    let filled = 0;
    let index = 0;
    for await (const chunk of child.stdout as AsyncIterable<Buffer>) {
      let at = 0;
      while (at < chunk.length) {
        const take = Math.min(frameBytes - filled, chunk.length - at);
        frame.set(chunk.subarray(at, at + take), filled);
        filled += take;
        at += take;
        if (filled === frameBytes) {
          const out: DecodedFrame = {
            index,
            timeSeconds: photo ? 0 : index * sampleSeconds,
            image: inSrgb({ width: size.width, height: size.height, data: frame }, profile),
            colour,
          };
          index++;
          frame = new Uint8Array(frameBytes);
          filled = 0;
          yield out;
        }
      }
    }
    const result = await exited;
    if (aborted) throw new MediaError('aborted', 'decoding was cancelled');
    if (result.spawnError) throw new MediaError('media_unavailable', 'ffmpeg could not be started', result.spawnError.message);
    if (result.code !== 0) {
      throw new MediaError(
        'decode_failed',
        'ffmpeg could not decode this file',
        tailReason(stderr, file) || `exit ${result.code ?? result.signal}`,
      );
    }
    if (index === 0) throw new MediaError('decode_failed', 'the file holds no decodable frame', tailReason(stderr, file) || undefined);
    if (filled !== 0)
      throw new MediaError('decode_failed', 'ffmpeg stopped in the middle of a frame', tailReason(stderr, file) || undefined);
    finished = true;
    return { frames: index, errors: tailReason(stderr, file, 240) || null };
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
    if (!finished && child.exitCode === null && child.signalCode === null) {
      // Unread output would keep the pipe (and so 'close') pending: drop it, then end ffmpeg.
      child.stdout.destroy();
      child.kill('SIGKILL');
      await exited;
    }
  }
}

/** A HEIF photo's one frame at the working size (ffmpeg 5.1 cannot read HEIF; see heif.ts). */
async function heifFrame(file: string, maxLongSide: number): Promise<DecodedFrame> {
  const full = await decodeHeif(file, MAX_PIXELS);
  const profile = await photoColour(file);
  const size = workingSize(full.width, full.height, maxLongSide);
  return { index: 0, timeSeconds: 0, image: inSrgb(resizeArea(full, size.width, size.height), profile), colour: frameColour(profile) };
}

/**
 * A photo's pixels in sRGB, converted after scaling to the working size: a tenth of the pixels of a
 * phone photo. Where scaling averaged two colours the result differs a little from converting first.
 */
function inSrgb(image: RgbImage, profile: PhotoColour | null): RgbImage {
  return profile?.kind === 'convert' ? convertToSrgb(image, profile.conversion) : image;
}

function frameColour(profile: PhotoColour): DecodedFrame['colour'] {
  return profile.kind === 'convert' ? 'converted' : profile.kind === 'unreadable' ? 'unconverted' : 'as-recorded';
}

/** Convenience for a photo: its one frame at the working size. */
export async function decodeImage(file: string, options: Omit<DecodeOptions, 'sampleSeconds' | 'maxFrames'> = {}): Promise<RgbImage> {
  for await (const f of decodeFrames(file, { ...options, maxFrames: 1 })) return f.image;
  throw new MediaError('decode_failed', 'the file holds no decodable frame');
}
