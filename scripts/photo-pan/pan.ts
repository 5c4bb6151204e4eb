// A walk past real fruit: labelled photos laid side by side into a wall, filmed by a camera
// panning along it, written as a real video through ffmpeg with the photos' labels as its
// ground truth (the same WalkTruth as a rendered walk, so the same oracle, truth and
// breakdown apply). It checks what renders cannot: the detector and tracker on real skins,
// leaves and light, at a chosen fruit size. What it lacks: parallax (the wall is flat),
// occlusion changing as the camera moves, and a label's hidden share (a label box is
// taken as the fruit's whole extent, so `visible` is only the share inside the frame).
import { readFileSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { DEFAULT_PARAMS } from '../../src/vision/builtin/index.js';
import { applyGains, greyWorld } from '../../src/vision/image/white-balance.js';
import { median } from '../../src/vision/track/box.js';
import { decodeImage } from '../../src/vision/media/index.js';
import type { Box, Ripeness, RgbImage } from '../../src/vision/types.js';
import { spawnRawEncoder } from '../render/ffmpeg.js';
import type { TruthFruit, WalkTruth } from '../render/truth.js';

/** A photo's label file, as in ../shared/data/tomato-photos. */
export interface PhotoLabels {
  /** The pixel grid the boxes are in. */
  width: number;
  height: number;
  fruit: { ripeness: Ripeness; difficult?: boolean; box: Box }[];
}

export interface PhotoPanOptions {
  /** Folder of NNNN.jpg photos, each with an NNNN.json of labelled fruit. */
  photos: string;
  /** Only these photos (file names), in this order; all of the folder by default. */
  only?: string[];
  out: string;
  name: string;
  /** Median labelled fruit size (longer box side) wanted in the video, px. */
  fruitPx: number;
  width?: number;
  /** The wall is as many photos high as fit about this height; the video is exactly that high. */
  targetHeight?: number;
  fps?: number;
  /** Share of the frame's width the camera crosses per second (a 0.3 m/s walk filming 1.2 m of row: 0.25). */
  framesPerSecond?: number;
  /**
   * White-balance each photo on its own before it goes on the wall (grey world, as the built-in
   * detector balances a frame). The photos were taken under different lights (daylight, magenta grow
   * lights), and a frame showing several of them has no one balance, as a real row under one light has.
   */
  balanceEach?: boolean;
  /** Background where the wall has no photo (its ends). */
  background?: [number, number, number];
}

export interface PhotoPanTruth extends WalkTruth {
  /** Which photo and label each truth fruit is (`fruit[i]`). */
  sources: { photo: string; label: number; difficult: boolean }[];
  scale: number;
}

export interface PhotoPan {
  files: string[];
  truthFile: string;
  truth: PhotoPanTruth;
}

interface Tile {
  photo: string;
  image: RgbImage;
  x: number;
  y: number;
  labels: PhotoLabels['fruit'];
}

/** The labels carry no size in mm: a typical round tomato's, for the truth's fields that need one. */
const NOMINAL_FRUIT_MM = 60;

const fail = (message: string): never => {
  throw new Error(message);
};

/** Labelled photos in a folder, by name. */
export function labelledPhotos(dir: string): { photo: string; labels: PhotoLabels }[] {
  return readdirSync(dir)
    .filter((f) => /^\d+\.jpg$/.test(f))
    .sort()
    .map((photo) => ({ photo, labels: JSON.parse(readFileSync(path.join(dir, photo.replace(/\.jpg$/, '.json')), 'utf8')) as PhotoLabels }));
}

/** A labelled photo decoded at `scale` of its labels' pixel grid: as it goes on the wall. */
export function decodeAtScale(dir: string, photo: { photo: string; labels: PhotoLabels }, scale: number): Promise<RgbImage> {
  return decodeImage(path.join(dir, photo.photo), { maxLongSide: Math.round(Math.max(photo.labels.width, photo.labels.height) * scale) });
}

/**
 * Where each photo goes on the wall: rows of photos of one height, filled in turn so the rows
 * are about as long as each other. Pure, so the layout and the truth's boxes can be checked.
 */
export function wallLayout(sizes: readonly { width: number; height: number }[], rows: number): { x: number; y: number }[] {
  const ends = new Array<number>(rows).fill(0);
  return sizes.map((s, i) => {
    const row = i % rows;
    const at = { x: ends[row]!, y: row * s.height };
    ends[row]! += s.width;
    return at;
  });
}

/** A label box on the wall seen from a camera whose left edge is at `cameraX`: the box in the frame and its share inside it. */
export function seenBox(wallBox: Box, cameraX: number, width: number, height: number): { box: Box; visible: number } | null {
  const [x1, y1, x2, y2] = [wallBox[0] - cameraX, wallBox[1], wallBox[2] - cameraX, wallBox[3]];
  const cx1 = Math.max(0, x1),
    cy1 = Math.max(0, y1),
    cx2 = Math.min(width, x2),
    cy2 = Math.min(height, y2);
  if (cx2 <= cx1 || cy2 <= cy1) return null;
  const full = (x2 - x1) * (y2 - y1);
  return { box: [cx1, cy1, cx2, cy2], visible: full > 0 ? ((cx2 - cx1) * (cy2 - cy1)) / full : 0 };
}

export async function renderPhotoPan(options: PhotoPanOptions): Promise<PhotoPan> {
  const width = options.width ?? 1280;
  const fps = options.fps ?? 15;
  const crossing = options.framesPerSecond ?? 0.25;
  const bg = options.background ?? [48, 52, 44];
  const all = labelledPhotos(options.photos);
  const photos = options.only
    ? options.only.map((n) => all.find((p) => p.photo === n) ?? fail(`no labelled photo ${n} in ${options.photos}`))
    : all;
  if (photos.length === 0) throw new Error(`no labelled photos in ${options.photos}`);
  const labelSizes = photos.flatMap((p) => p.labels.fruit.map((f) => Math.max(f.box[2] - f.box[0], f.box[3] - f.box[1])));
  const scale = options.fruitPx / median(labelSizes);

  const tiles: Tile[] = [];
  for (const p of photos) {
    const decoded = await decodeAtScale(options.photos, p, scale);
    const image = options.balanceEach
      ? applyGains(decoded, greyWorld(decoded, { maxGreenCorrection: DEFAULT_PARAMS.wbMaxGreenCorrection }).gains)
      : decoded;
    tiles.push({ photo: p.photo, image, x: 0, y: 0, labels: p.labels.fruit });
  }
  const tileH = tiles[0]!.image.height;
  const odd = tiles.find((t) => t.image.height !== tileH);
  if (odd)
    throw new Error(
      `photos of one height are laid into rows: ${odd.photo} is ${odd.image.height} px high at this scale, ${tiles[0]!.photo} ${tileH}`,
    );
  const rows = Math.max(1, Math.round((options.targetHeight ?? 720) / tileH));
  const height = rows * tileH - ((rows * tileH) % 2);
  wallLayout(
    tiles.map((t) => t.image),
    rows,
  ).forEach((at, i) => Object.assign(tiles[i]!, at));
  const wallWidth = Math.max(...tiles.map((t) => t.x + t.image.width));

  // The wall enters at the frame's right edge and leaves at its left, so every fruit is seen whole.
  const pxPerSecond = crossing * width;
  const frames = Math.ceil(((wallWidth + width) / pxPerSecond) * fps) + 1;
  const cameraAt = (k: number) => -width + (k * pxPerSecond) / fps;

  const fruit: TruthFruit[] = [];
  const sources: PhotoPanTruth['sources'] = [];
  const wallBoxes: Box[] = [];
  for (const [k, t] of tiles.entries()) {
    const sx = t.image.width / photos[k]!.labels.width,
      sy = t.image.height / photos[k]!.labels.height;
    t.labels.forEach((l, i) => {
      const b: Box = [t.x + l.box[0] * sx, t.y + l.box[1] * sy, t.x + l.box[2] * sx, t.y + l.box[3] * sy];
      wallBoxes.push(b);
      sources.push({ photo: t.photo, label: i, difficult: Boolean(l.difficult) });
      fruit.push({
        id: fruit.length,
        ripeness: l.ripeness,
        stage: l.ripeness === 'green' ? 'green' : 'red',
        plant: 0,
        x: (b[0] + b[2]) / 2,
        y: (b[1] + b[3]) / 2,
        diameterMm: NOMINAL_FRUIT_MM,
        appearances: [],
      });
    });
  }

  await mkdir(options.out, { recursive: true });
  const file = path.join(options.out, `${options.name}.mp4`);
  const sink = await spawnRawEncoder(width, height, fps, [
    '-c:v',
    'libx264',
    '-preset',
    'veryfast',
    '-crf',
    '20',
    '-pix_fmt',
    'yuv420p',
    '-movflags',
    '+faststart',
    file,
  ]);
  const rgb = new Uint8Array(width * height * 3);
  for (let k = 0; k < frames; k++) {
    const cam = Math.round(cameraAt(k));
    for (let p = 0; p < rgb.length; p += 3) {
      rgb[p] = bg[0];
      rgb[p + 1] = bg[1];
      rgb[p + 2] = bg[2];
    }
    for (const t of tiles) {
      const x0 = Math.max(0, t.x - cam),
        x1 = Math.min(width, t.x + t.image.width - cam);
      if (x1 <= x0) continue;
      for (let y = 0; y < t.image.height && t.y + y < height; y++) {
        const src = (y * t.image.width + (x0 + cam - t.x)) * 3;
        rgb.set(t.image.data.subarray(src, src + (x1 - x0) * 3), ((t.y + y) * width + x0) * 3);
      }
    }
    await sink.write(rgb.slice());
    wallBoxes.forEach((b, i) => {
      const seen = seenBox(b, cam, width, height);
      if (seen) fruit[i]!.appearances.push({ clip: 0, frame: k, ...seen });
    });
  }
  await sink.finish();

  const fruitPx = median(wallBoxes.map((b) => Math.max(b[2] - b[0], b[3] - b[1])));
  const truth: PhotoPanTruth = {
    version: 1,
    seed: 0,
    width,
    height,
    fps,
    // Not a metric walk: pace in frame widths per second, and a nominal size for the median fruit.
    speed: crossing,
    mmPerPixel: NOMINAL_FRUIT_MM / fruitPx,
    clips: [{ index: 0, file: path.basename(file), startSeconds: 0, seconds: frames / fps, frames }],
    fruit,
    stems: [],
    plants: [],
    sources,
    scale,
  };
  const truthFile = path.join(options.out, `${options.name}.json`);
  await writeFile(truthFile, JSON.stringify(truth));
  return { files: [file], truthFile, truth };
}
