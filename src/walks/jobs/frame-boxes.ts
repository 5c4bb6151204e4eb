import { readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Box, Ripeness } from '../../vision/types.js';

/**
 * The fruit boxes of every scored frame, beside the frame images (frames/boxes.json): each box with
 * the counted fruit (result.fruit[].track_id) it belongs to, or null for a detection that never became
 * a counted fruit. Corrections name fruit, not boxes; this is what turns a corrected walk into labelled
 * frames (src/walks/training). Removed with the frames by retention.
 */
export interface FrameBoxes {
  /** Walk-wide frame index. */
  frame: number;
  width: number;
  height: number;
  fruit: { box: Box; ripeness: Ripeness; score: number; track_id: number | null }[];
}

export const FRAME_BOXES_FILE = 'boxes.json';

export async function writeFrameBoxes(framesDir: string, frames: FrameBoxes[]): Promise<void> {
  const file = path.join(framesDir, FRAME_BOXES_FILE);
  const round = (v: number) => Math.round(v * 10) / 10;
  const slim = frames.map((f) => ({
    ...f,
    fruit: f.fruit.map((d) => ({ ...d, box: d.box.map(round) as Box, score: Math.round(d.score * 1000) / 1000 })),
  }));
  await writeFile(`${file}.tmp`, JSON.stringify({ version: 1, frames: slim }));
  await rename(`${file}.tmp`, file);
}

/** The walk's frame boxes, or null when it has none (scored before they were kept, or its frames were removed). */
export async function readFrameBoxes(framesDir: string): Promise<FrameBoxes[] | null> {
  let text: string;
  try {
    text = await readFile(path.join(framesDir, FRAME_BOXES_FILE), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  const doc = JSON.parse(text) as { version?: number; frames?: FrameBoxes[] };
  return Array.isArray(doc.frames) ? doc.frames : null;
}
