import { execFile } from 'node:child_process';
import path from 'node:path';
import { open } from 'node:fs/promises';
import { MediaError, tailReason } from './errors.js';
import { orientationRotation, readJpegOrientation } from './exif.js';
import { requireFfmpeg } from './ffmpeg-path.js';
import { probeHeif } from './heif.js';
import { sniffMediaType } from './sniff.js';

export interface MediaInfo {
  kind: 'image' | 'video';
  /** Displayed size: already swapped when the clip carries a ±90° rotation. */
  width: number;
  height: number;
  /** 0 for a photo. */
  durationSeconds: number;
  /** Clockwise degrees the stored picture is turned for display: 0, 90, 180 or 270. */
  rotation: 0 | 90 | 180 | 270;
  /** Average frames per second (0 for a photo or when unknown). */
  frameRate: number;
  /** ffprobe's codec name, e.g. "h264", "mjpeg", "png". */
  codec: string;
  /** ffprobe's container name, e.g. "mov,mp4,m4a,3gp,3g2,mj2", "image2"; "heif" for a HEIF photo (read by libheif, not ffmpeg). */
  container: string;
  /**
   * The stream's colour tags as ffprobe names them (transfer e.g. "bt709", "smpte2084" (PQ),
   * "arib-std-b67" (HLG); primaries e.g. "bt709", "bt2020"; matrix e.g. "bt2020nc"; range "tv"
   * or "pc"); null when untagged or a photo.
   */
  colourTransfer: string | null;
  colourPrimaries: string | null;
  colourMatrix: string | null;
  colourRange: string | null;
  /**
   * The Dolby Vision configuration the container declares (dvcC/dvvC), or null: its profile and
   * the base layer's compatibility id (0 none, 1 HDR10, 2 SDR, 4 HLG), which says whether the
   * picture without Dolby's reshaping is a standard one.
   */
  dolbyVision: { profile: number; compatibility: number } | null;
}

interface ProbeStream {
  codec_type?: string;
  codec_name?: string;
  width?: number;
  height?: number;
  avg_frame_rate?: string;
  r_frame_rate?: string;
  duration?: string;
  nb_frames?: string;
  tags?: Record<string, string>;
  side_data_list?: Array<{ side_data_type?: string; rotation?: number; dv_profile?: number; dv_bl_signal_compatibility_id?: number }>;
  color_transfer?: string;
  color_primaries?: string;
  color_space?: string;
  color_range?: string;
  disposition?: { attached_pic?: number };
}

interface ProbeOutput {
  streams?: ProbeStream[];
  format?: { format_name?: string; duration?: string };
}

/**
 * Containers the product scores. An allow-list, because ffprobe will happily
 * "decode" a text file as ANSI art (container tty) or follow a playlist.
 */
const VIDEO_CONTAINERS = new Set(['mov,mp4,m4a,3gp,3g2,mj2', 'matroska,webm', 'avi']);
const IMAGE_CONTAINERS = new Set(['image2', 'jpeg_pipe', 'png_pipe', 'webp_pipe']);
const IMAGE_CODECS = new Set(['mjpeg', 'png', 'webp']);

/** ffmpeg reads a bare path that looks like "concat:…" or "http:…" as a protocol; this pins it to a file. */
export function fileUrl(file: string): string {
  return `file:${file}`;
}

/**
 * The image demuxer reads "%d" (and "%03d"…) in a photo's path as a frame-number pattern
 * whatever the protocol; `-pattern_type none` makes it the literal name. ffprobe takes the
 * option for any input; ffmpeg refuses it unless the input is read by the image demuxer
 * (container "image2"), so decoding passes it for those only.
 */
export const LITERAL_IMAGE_PATH = ['-pattern_type', 'none'] as const;

/** Above this many pixels a frame is refused: a decompression bomb, not a crop photo. */
export const MAX_PIXELS = 100_000_000;

/**
 * What ffprobe says about a file. Throws MediaError('unsupported_media') with
 * ffprobe's reason for anything that is not a decodable photo or video, so the
 * upload path can refuse it by content rather than by name.
 */
export async function probeMedia(file: string, options: { timeoutMs?: number } = {}): Promise<MediaInfo> {
  if (sniffMediaType(await head(file, 64))?.format === 'heic') return probeHeifPhoto(file);
  const { ffprobe } = await requireFfmpeg();
  const raw = await run(
    ffprobe,
    [
      '-v',
      'error',
      '-protocol_whitelist',
      'file',
      '-print_format',
      'json',
      '-show_format',
      '-show_streams',
      ...LITERAL_IMAGE_PATH,
      '-i',
      fileUrl(file),
    ],
    options.timeoutMs ?? 30_000,
  );
  let parsed: ProbeOutput;
  try {
    parsed = JSON.parse(raw) as ProbeOutput;
  } catch {
    throw new MediaError('unsupported_media', 'ffprobe gave no readable answer for this file');
  }
  const info = interpretProbe(parsed);
  if (info.kind === 'image' && info.codec === 'mjpeg' && info.rotation === 0) {
    // ffmpeg decodes a JPEG upright by its EXIF orientation, which ffprobe does not show.
    const turn = orientationRotation(readJpegOrientation(await head(file, 128 * 1024)));
    if (turn === 90 || turn === 270) return { ...info, rotation: turn, width: info.height, height: info.width };
    if (turn === 180) return { ...info, rotation: turn };
  }
  return info;
}

/** A HEIF photo as MediaInfo: libheif reads its container; the picture it decodes is already upright. */
async function probeHeifPhoto(file: string): Promise<MediaInfo> {
  const { width, height } = await probeHeif(file, MAX_PIXELS);
  return { kind: 'image', width, height, durationSeconds: 0, rotation: 0, frameRate: 0, codec: 'hevc', container: 'heif', ...UNTAGGED };
}

async function head(file: string, bytes: number): Promise<Uint8Array> {
  const fh = await open(file, 'r');
  try {
    const buf = new Uint8Array(bytes);
    const { bytesRead } = await fh.read(buf, 0, bytes, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** Pure part of probeMedia, exported for tests of odd ffprobe answers. */
export function interpretProbe(parsed: ProbeOutput): MediaInfo {
  const container = parsed.format?.format_name ?? '';
  const imageContainer = IMAGE_CONTAINERS.has(container);
  if (!imageContainer && !VIDEO_CONTAINERS.has(container)) {
    throw new MediaError('unsupported_media', `not a photo or video this appliance scores (container "${container || 'unknown'}")`);
  }
  const video = (parsed.streams ?? []).find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
  if (!video || !video.width || !video.height) {
    throw new MediaError('unsupported_media', 'the file holds no picture or video stream');
  }
  if (video.width * video.height > MAX_PIXELS) {
    throw new MediaError('unsupported_media', `picture of ${video.width}×${video.height} is larger than this appliance scores`);
  }
  const codec = video.codec_name ?? 'unknown';
  if (imageContainer && !IMAGE_CODECS.has(codec)) {
    throw new MediaError('unsupported_media', `image codec "${codec}" is not accepted (JPEG, PNG or WebP)`);
  }
  const isImage = imageContainer;
  const rotation = rotationOf(video);
  const swap = rotation === 90 || rotation === 270;
  const width = swap ? video.height : video.width;
  const height = swap ? video.width : video.height;
  if (isImage) {
    return { kind: 'image', width, height, durationSeconds: 0, rotation, frameRate: 0, codec, container, ...UNTAGGED };
  }
  const duration = firstFinite(parsed.format?.duration, video.duration);
  const frameRate = rate(video.avg_frame_rate) || rate(video.r_frame_rate);
  return {
    kind: 'video',
    width,
    height,
    durationSeconds: duration,
    rotation,
    frameRate,
    codec,
    container,
    colourTransfer: colourTag(video.color_transfer),
    colourPrimaries: colourTag(video.color_primaries),
    colourMatrix: colourTag(video.color_space),
    colourRange: colourTag(video.color_range),
    dolbyVision: dolbyVisionOf(video),
  };
}

const UNTAGGED = { colourTransfer: null, colourPrimaries: null, colourMatrix: null, colourRange: null, dolbyVision: null } as const;

function dolbyVisionOf(s: ProbeStream): MediaInfo['dolbyVision'] {
  const record = s.side_data_list?.find((d) => d.side_data_type === 'DOVI configuration record');
  if (!record || typeof record.dv_profile !== 'number') return null;
  return { profile: record.dv_profile, compatibility: record.dv_bl_signal_compatibility_id ?? 0 };
}

function colourTag(tag: string | undefined): string | null {
  return tag && tag !== 'unknown' && tag !== 'reserved' ? tag : null;
}

function rotationOf(s: ProbeStream): 0 | 90 | 180 | 270 {
  // ffprobe reports the display matrix as counter-clockwise degrees (-90 = turn clockwise by 90);
  // older muxers wrote a `rotate` tag in clockwise degrees.
  let cw = 0;
  const matrix = s.side_data_list?.find((d) => typeof d.rotation === 'number');
  if (matrix && typeof matrix.rotation === 'number') cw = -matrix.rotation;
  else if (s.tags?.rotate) cw = Number(s.tags.rotate) || 0;
  const q = (((Math.round(cw / 90) * 90) % 360) + 360) % 360;
  return q as 0 | 90 | 180 | 270;
}

function rate(text: string | undefined): number {
  if (!text) return 0;
  const [n, d] = text.split('/').map(Number);
  if (!Number.isFinite(n) || !n) return 0;
  if (d === undefined) return n!;
  return d ? n! / d : 0;
}

function firstFinite(...values: Array<string | undefined>): number {
  for (const v of values) {
    const n = Number(v);
    if (v !== undefined && Number.isFinite(n) && n >= 0) return n;
  }
  return 0;
}

function run(binary: string, args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(binary, args, { timeout: timeoutMs, maxBuffer: 4 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) {
        // err.message is the command line, the server's path of the file in it: not for a client.
        const input = args.find((a) => a.startsWith('file:'))?.slice('file:'.length);
        const reason =
          tailReason(String(stderr), input) ||
          (err.killed ? `${path.basename(binary)} timed out` : `${path.basename(binary)} exit ${err.code ?? 'unknown'}`);
        reject(new MediaError('unsupported_media', 'not a photo or video this appliance can read', reason));
        return;
      }
      resolve(String(stdout));
    });
  });
}
