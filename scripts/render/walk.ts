// Renders synthetic row walks and still photos of a tomato crop, with their ground truth.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Box } from '../../src/vision/types.js';
import { spawnRawEncoder } from './ffmpeg.js';
import { FrameRasterizer, type FruitLighting } from './raster.js';
import { buildScene, type Scene } from './scene.js';
import { stageToRipeness, type TruthClip, type TruthFruit, type TruthPlant, type TruthStem, type WalkTruth } from './truth.js';

export interface RenderWalkOptions {
  /** Output folder; created when missing. */
  out: string;
  /** Total length of the walk in seconds (split over `clips`). */
  seconds: number;
  fps?: number;
  width?: number;
  height?: number;
  /** Walking speed along the row, metres per second. */
  speed?: number;
  seed?: number;
  /** Number of consecutive clips the walk is cut into (one truth file for all). */
  clips?: number;
  /** Seconds the walker keeps walking between clips without filming (0: clips join exactly). */
  clipGapSeconds?: number;
  /** Metres between plants. */
  plantSpacing?: number;
  /** Metres of row across the frame's width. */
  viewWidth?: number;
  /** A dull, dark greenhouse: light level 0.35 and more sensor noise. */
  dark?: boolean;
  /** How the fruit are lit: 'studio' (default, one light for all) or 'greenhouse' (each fruit its own, softer). */
  lighting?: FruitLighting;
  /** Shutter open for this fraction of the frame time: motion blur of speed × fraction / fps. */
  blur?: number;
  /** Sensor noise, 8-bit levels (default 2, or 6 when dark). */
  noise?: number;
  secondStemRate?: number;
  /** File name stem: `<name>.mp4`, or `<name>-1.mp4`… for several clips; truth is `<name>.json`. */
  name?: string;
  /** x264 quality (lower is better). */
  crf?: number;
}

export interface RenderedWalk {
  files: string[];
  truthFile: string;
  truth: WalkTruth;
}

interface ResolvedView {
  width: number;
  height: number;
  ppm: number;
  viewWidth: number;
  viewHeight: number;
}

function view(width: number, height: number, viewWidth: number): ResolvedView {
  const ppm = width / viewWidth;
  return { width, height, ppm, viewWidth, viewHeight: height / ppm };
}

function sceneFor(seed: number, rowLength: number, v: ResolvedView, plantSpacing: number, secondStemRate: number): Scene {
  return buildScene({ seed, rowLength, plantSpacing, viewWidth: v.viewWidth, viewHeight: v.viewHeight, secondStemRate });
}

export async function renderWalk(options: RenderWalkOptions): Promise<RenderedWalk> {
  const fps = options.fps ?? 30;
  const width = options.width ?? 1280;
  const height = options.height ?? 720;
  const speed = options.speed ?? 0.3;
  const seed = options.seed ?? 1;
  const clipCount = Math.max(1, Math.floor(options.clips ?? 1));
  const name = options.name ?? 'walk';
  const dark = options.dark ?? false;
  if (width % 2 || height % 2) throw new Error('width and height must be even (yuv420p)');
  if (!(options.seconds > 0)) throw new Error('seconds must be positive');

  const gap = Math.max(0, options.clipGapSeconds ?? 0);
  const v = view(width, height, options.viewWidth ?? 1.2);
  const scene = sceneFor(
    seed,
    speed * (options.seconds + gap * (clipCount - 1)) + v.viewWidth + 0.5,
    v,
    options.plantSpacing ?? 0.4,
    options.secondStemRate ?? 0.25,
  );
  const raster = new FrameRasterizer(scene, {
    width,
    height,
    ppm: v.ppm,
    light: dark ? 0.35 : 1,
    noise: options.noise ?? (dark ? 6 : 2),
    blurPx: ((options.blur ?? 0) * speed * v.ppm) / fps,
    lighting: options.lighting ?? 'studio',
  });

  await mkdir(options.out, { recursive: true });
  const totalFrames = Math.max(1, Math.round(options.seconds * fps));
  const fruit = new Map<number, TruthFruit>();
  const stems = new Map<number, TruthStem>();
  const plants = new Map<number, TruthPlant>();
  const clips: TruthClip[] = [];
  const files: string[] = [];

  let global = 0;
  for (let c = 0; c < clipCount; c++) {
    const end = Math.round(((c + 1) * totalFrames) / clipCount);
    const frames = end - global;
    const file = path.join(options.out, clipCount === 1 ? `${name}.mp4` : `${name}-${c + 1}.mp4`);
    const sink = await spawnRawEncoder(width, height, fps, [
      '-c:v',
      'libx264',
      '-preset',
      'veryfast',
      '-crf',
      String(options.crf ?? 20),
      '-pix_fmt',
      'yuv420p',
      '-movflags',
      '+faststart',
      file,
    ]);
    for (let f = 0; f < frames; f++, global++) {
      const camX = speed * (global / fps + c * gap);
      const seen = raster.render(camX);
      await sink.write(new Uint8Array(raster.rgb.buffer.slice(0)));
      for (const o of seen.fruit) {
        let t = fruit.get(o.id);
        if (!t) {
          const s = scene.fruit[o.id]!;
          t = {
            id: s.id,
            ripeness: stageToRipeness(s.stage),
            stage: s.stage,
            plant: s.plant,
            x: s.x,
            y: s.y,
            diameterMm: round1(s.radius * 2000),
            appearances: [],
          };
          fruit.set(o.id, t);
        }
        t.appearances.push({ clip: c, frame: f, box: o.box, visible: round3(o.visible) });
      }
      for (const o of seen.stems) {
        let t = stems.get(o.id);
        if (!t) {
          const s = scene.stems[o.id]!;
          t = { id: s.id, plant: s.plant, x: round3(s.x0), appearances: [] };
          stems.set(o.id, t);
        }
        t.appearances.push({ clip: c, frame: f, box: o.box, visible: round3(o.visible) });
      }
      for (const o of seen.plants) {
        let t = plants.get(o.id);
        if (!t) {
          const p = scene.plants[o.id]!;
          t = { id: p.id, x: round3(p.x), stems: p.stems, appearances: [] };
          plants.set(o.id, t);
        }
        t.appearances.push({ clip: c, frame: f, box: o.box, visible: round3(o.visible) });
      }
    }
    await sink.finish();
    clips.push({ index: c, file: path.basename(file), startSeconds: (global - frames) / fps + c * gap, seconds: frames / fps, frames });
    files.push(file);
  }

  const truth: WalkTruth = {
    version: 1,
    seed,
    width,
    height,
    fps,
    speed,
    mmPerPixel: 1000 / v.ppm,
    clips,
    fruit: [...fruit.values()].sort((a, b) => a.id - b.id),
    stems: [...stems.values()].sort((a, b) => a.id - b.id),
    plants: [...plants.values()].sort((a, b) => a.id - b.id),
  };
  const truthFile = path.join(options.out, `${name}.json`);
  await writeFile(truthFile, JSON.stringify(truth));
  return { files, truthFile, truth };
}

export interface RenderStillOptions {
  seed?: number;
  width?: number;
  height?: number;
  viewWidth?: number;
  dark?: boolean;
  /** Where along the row the photo is taken, metres. */
  at?: number;
  /** ffmpeg mjpeg quality scale, 2 (best) to 31. */
  quality?: number;
}

export interface StillObject {
  id: number;
  box: Box;
  visible: number;
}

export interface StillTruth {
  width: number;
  height: number;
  mmPerPixel: number;
  fruit: (StillObject & { ripeness: TruthFruit['ripeness']; stage: TruthFruit['stage']; diameterMm: number })[];
  stems: StillObject[];
  plants: StillObject[];
}

/** One photo of the crop as a JPEG (through ffmpeg), with what is in it. */
export async function renderStill(options: RenderStillOptions = {}): Promise<{ jpeg: Buffer; truth: StillTruth }> {
  const width = options.width ?? 1280;
  const height = options.height ?? 960;
  const at = options.at ?? 0.5;
  const v = view(width, height, options.viewWidth ?? 1.2);
  const scene = sceneFor(options.seed ?? 1, at + v.viewWidth + 0.5, v, 0.4, 0.25);
  const raster = new FrameRasterizer(scene, {
    width,
    height,
    ppm: v.ppm,
    light: options.dark ? 0.35 : 1,
    noise: options.dark ? 6 : 2,
    blurPx: 0,
  });
  const seen = raster.render(at);
  const sink = await spawnRawEncoder(width, height, 1, [
    '-frames:v',
    '1',
    '-c:v',
    'mjpeg',
    '-q:v',
    String(options.quality ?? 3),
    '-f',
    'image2pipe',
    'pipe:1',
  ]);
  await sink.write(new Uint8Array(raster.rgb.buffer.slice(0)));
  const jpeg = await sink.finish();
  return {
    jpeg,
    truth: {
      width,
      height,
      mmPerPixel: 1000 / v.ppm,
      fruit: seen.fruit.map((o) => {
        const s = scene.fruit[o.id]!;
        return {
          ...o,
          visible: round3(o.visible),
          ripeness: stageToRipeness(s.stage),
          stage: s.stage,
          diameterMm: round1(s.radius * 2000),
        };
      }),
      stems: seen.stems,
      plants: seen.plants,
    },
  };
}

function round1(x: number): number {
  return Math.round(x * 10) / 10;
}
function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}
