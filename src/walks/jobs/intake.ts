import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, rename, copyFile, rm } from 'node:fs/promises';
import { MediaError } from '../../vision/media/errors.js';
import { probeMedia, type MediaInfo } from '../../vision/media/probe.js';
import { sniffMediaType, SNIFF_BYTES, type SniffedMedia } from '../../vision/media/sniff.js';
import type { NewClip } from './commands.js';
import { clipsDir, ensureDir, inside } from './storage.js';
import { KIND_OF_MODE, type ScoringMode } from './options.js';
import { Invalid, Unavailable, UnsupportedMedia } from '../../errors.js';

/**
 * Checks uploads by content before a job is made: the first bytes must be a
 * photo or video container we score, and ffprobe must read a picture stream
 * from it. Anything else is refused at upload (415), so only files that at
 * least look right reach the worker; a file that passes here and still does
 * not decode ends as a failed job with ffmpeg's reason.
 */
export interface IncomingFile {
  path: string;
  originalName: string;
  size: number;
}

export interface InspectedFile extends IncomingFile {
  sha256: string;
  sniffed: SniffedMedia;
  info: MediaInfo;
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

async function firstBytes(file: string, n: number): Promise<Uint8Array> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(n);
    const { bytesRead } = await fh.read(buf, 0, n, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** `label` names the file in messages ("file", "files[3]"). */
export async function inspectUpload(file: IncomingFile, label: string, sha256?: string): Promise<InspectedFile> {
  if (file.size === 0)
    throw new UnsupportedMedia(`${label} is empty: upload a photo (JPEG, PNG, WebP, HEIC) or a video (MP4, MOV, MKV, WebM, AVI).`);
  const sniffed = sniffMediaType(await firstBytes(file.path, SNIFF_BYTES));
  if (!sniffed) {
    throw new UnsupportedMedia(
      `${label} is not a photo (JPEG, PNG, WebP, HEIC) or video (MP4, MOV, MKV, WebM, AVI) by its content, whatever its name.`,
      { field: label },
    );
  }
  let info: MediaInfo;
  try {
    info = await probeMedia(file.path);
  } catch (err) {
    if (err instanceof MediaError && err.code === 'unsupported_media') {
      // The reason no longer holds the spooled file's path (tailReason): the box's folders stay private.
      throw new UnsupportedMedia(`${label} starts like ${sniffed.format} but cannot be read as one: ${err.message}.`, { field: label });
    }
    if (err instanceof MediaError && err.code === 'media_unavailable') {
      throw new Unavailable('scoring_unavailable', `Uploads cannot be checked: ${err.message}.`);
    }
    throw err;
  }
  if (info.kind !== sniffed.kind) {
    throw new UnsupportedMedia(`${label} starts like a ${sniffed.kind} (${sniffed.format}) but holds a ${info.kind}.`, { field: label });
  }
  return { ...file, sha256: sha256 ?? (await sha256File(file.path)), sniffed, info };
}

/** mode photo / video: every upload must be that kind. */
export function checkKinds(files: InspectedFile[], mode: string, labels: string[]): void {
  const want = KIND_OF_MODE[mode as ScoringMode];
  if (!want) return;
  files.forEach((f, i) => {
    if (f.info.kind !== want)
      throw Invalid.field(
        labels[i]!,
        `is a ${f.info.kind === 'image' ? 'photo' : 'video'}, but mode "${mode}" takes ${mode === 'photo' ? 'photos' : 'video clips'} only`,
        'body',
      );
  });
}

/**
 * sha256 over what makes two requests "the same upload": the operation, its
 * path scope, the form fields (sorted) and each file's bytes in order. A retry
 * with the same Idempotency-Key must match it exactly.
 */
export function requestHash(parts: {
  operation: string;
  scope: Record<string, unknown>;
  fields: Record<string, unknown>;
  files: string[];
}): string {
  const fields = Object.fromEntries(
    Object.keys(parts.fields)
      .sort()
      .map((k) => [k, String(parts.fields[k])]),
  );
  const scope = Object.fromEntries(
    Object.keys(parts.scope)
      .sort()
      .map((k) => [k, parts.scope[k]]),
  );
  return createHash('sha256')
    .update(JSON.stringify({ operation: parts.operation, scope, fields, files: parts.files }))
    .digest('hex');
}

/**
 * Moves accepted files into DATA_DIR/walks/<walk>/clips as NN.<format>: names
 * the box makes, in walking order. `copy` keeps the source (examples).
 */
export async function placeClips(
  dataDir: string,
  walkId: string,
  files: InspectedFile[],
  options: { copy?: boolean } = {},
): Promise<NewClip[]> {
  const dir = ensureDir(clipsDir(dataDir, walkId));
  const out: NewClip[] = [];
  for (const [i, f] of files.entries()) {
    const fileName = `${String(i).padStart(2, '0')}.${f.sniffed.format}`;
    const target = inside(dir, fileName);
    if (options.copy) await copyFile(f.path, target);
    else await moveFile(f.path, target);
    out.push({
      fileName,
      originalName: f.originalName || fileName,
      size: f.size,
      sha256: f.sha256,
      kind: f.info.kind,
      format: f.sniffed.format,
      width: f.info.width,
      height: f.info.height,
      durationSeconds: f.info.durationSeconds,
    });
  }
  return out;
}

async function moveFile(from: string, to: string): Promise<void> {
  try {
    await rename(from, to);
  } catch (err) {
    // DATA_DIR/uploads and DATA_DIR/walks may sit on different disks.
    if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
    await copyFile(from, to);
    await rm(from, { force: true });
  }
}
