import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { UUID_PATTERN } from '../../db/ids.js';

/**
 * Where a walk keeps its files: DATA_DIR/walks/<job_id>/clips (the uploads,
 * under names the box makes) and .../frames (one image and one overlay per
 * scored frame). Every path is built from a job id and a frame number, never
 * from client text, and checked to stay inside its folder anyway.
 */
export const FRAME_NAMES = ['image.jpg', 'overlay.jpg'] as const;
export type FrameName = (typeof FRAME_NAMES)[number];

const ID = new RegExp(UUID_PATTERN);

export function walksRoot(dataDir: string): string {
  return path.resolve(dataDir, 'walks');
}

/** Whether a walk with this id can have a folder (a walk's id names it). */
export function isWalkId(walkId: string): boolean {
  return ID.test(walkId);
}

export function walkDir(dataDir: string, walkId: string): string {
  if (!isWalkId(walkId)) throw new Error(`not a walk id: ${walkId}`);
  return inside(walksRoot(dataDir), walkId);
}

export function clipsDir(dataDir: string, walkId: string): string {
  return path.join(walkDir(dataDir, walkId), 'clips');
}

export function framesDir(dataDir: string, walkId: string): string {
  return path.join(walkDir(dataDir, walkId), 'frames');
}

/** Frame files are named 00012-image.jpg; ffmpeg's image2 writer uses the same %05d pattern. */
export const FRAME_INDEX_DIGITS = 5;

export function frameFileName(index: number, name: FrameName): string {
  return `${String(index).padStart(FRAME_INDEX_DIGITS, '0')}-${name}`;
}

/** The file of one frame, or null when the request names anything but a frame of this walk. */
export function framePath(dataDir: string, walkId: string, index: number, name: string): string | null {
  if (!Number.isSafeInteger(index) || index < 0 || !(FRAME_NAMES as readonly string[]).includes(name)) return null;
  try {
    return inside(framesDir(dataDir, walkId), frameFileName(index, name as FrameName));
  } catch {
    return null;
  }
}

/** `dir/name`, refusing any name that would leave `dir` (defence in depth behind the callers' own checks). */
export function inside(dir: string, name: string): string {
  const full = path.resolve(dir, name);
  const rel = path.relative(dir, full);
  if (!rel || rel.startsWith('..') || path.isAbsolute(rel) || rel.includes(path.sep)) throw new Error(`path escapes its folder: ${name}`);
  return full;
}

export function ensureDir(dir: string): string {
  mkdirSync(dir, { recursive: true });
  return dir;
}
