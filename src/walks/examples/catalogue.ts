import { existsSync, readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { NotFound } from '../../errors.js';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The example photos shipped in the project's examples/ folder, described by
 * examples/index.json. They are synthetic tomato-row photos the project
 * renders itself (scripts/render-walk.ts --still), with what is in them, so a
 * new box can show scoring working before anyone films a walk.
 */
export const EXAMPLES_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../examples');

export interface Example {
  key: string;
  file: string;
  title: string;
  description: string;
  width: number;
  height: number;
  /** Millimetres per pixel of the photo, known because it is rendered. */
  mm_per_pixel: number;
  /** What the renderer put in view (fruit at least half visible), by ripeness. */
  truth: { green: number; turning: number; red: number; total: number; stems: number; plants: number };
}

const KEY = /^[a-z0-9][a-z0-9-]{0,63}$/;

export function loadExamples(dir = EXAMPLES_DIR): Example[] {
  const index = path.join(dir, 'index.json');
  if (!existsSync(index)) return [];
  const parsed = JSON.parse(readFileSync(index, 'utf8')) as { examples: Example[] };
  // The file name comes from our own index, but it is still kept to a plain name inside the folder.
  return parsed.examples.filter((e) => KEY.test(e.key) && e.file === path.basename(e.file) && existsSync(path.join(dir, e.file)));
}

export function examplePath(example: Example, dir = EXAMPLES_DIR): string {
  return path.join(dir, path.basename(example.file));
}

/** An example photo by key, with its file and size; NotFound for a key not in the catalogue. */
export async function exampleFile(key: string): Promise<{ example: Example; file: string; size: number }> {
  const example = loadExamples().find((e) => e.key === key);
  if (!example) throw new NotFound('example');
  const file = examplePath(example);
  return { example, file, size: (await stat(file)).size };
}
