import type { RgbImage } from '../types.js';
import { GLYPH_HEIGHT, GLYPH_WIDTH, glyph } from './font.js';

export type Rgb = readonly [number, number, number];

export function cloneImage(image: RgbImage): RgbImage {
  return { width: image.width, height: image.height, data: image.data.slice(0, image.width * image.height * 3) };
}

/** Fills a rectangle (inclusive-exclusive pixel bounds), clipped to the image. */
export function fillRect(image: RgbImage, x1: number, y1: number, x2: number, y2: number, colour: Rgb): void {
  const xa = Math.max(0, Math.floor(x1));
  const ya = Math.max(0, Math.floor(y1));
  const xb = Math.min(image.width, Math.ceil(x2));
  const yb = Math.min(image.height, Math.ceil(y2));
  const d = image.data;
  for (let y = ya; y < yb; y++) {
    let p = (y * image.width + xa) * 3;
    for (let x = xa; x < xb; x++, p += 3) {
      d[p] = colour[0];
      d[p + 1] = colour[1];
      d[p + 2] = colour[2];
    }
  }
}

/** Outline of a box [x1, y1, x2, y2] with the given line thickness, drawn inside the box. */
export function strokeRect(image: RgbImage, box: readonly [number, number, number, number], colour: Rgb, thickness = 2): void {
  const [x1, y1, x2, y2] = box;
  const t = Math.max(1, Math.round(thickness));
  fillRect(image, x1, y1, x2, y1 + t, colour);
  fillRect(image, x1, y2 - t, x2, y2, colour);
  fillRect(image, x1, y1, x1 + t, y2, colour);
  fillRect(image, x2 - t, y1, x2, y2, colour);
}

/** Width in pixels of `text` drawn at `scale`. */
export function textWidth(text: string, scale = 1): number {
  return text.length === 0 ? 0 : (text.length * (GLYPH_WIDTH + 1) - 1) * scale;
}

export const TEXT_HEIGHT = GLYPH_HEIGHT;

/** Draws text with its top-left at (x, y); each font pixel becomes a scale×scale square. */
export function drawText(image: RgbImage, x: number, y: number, text: string, colour: Rgb, scale = 1): void {
  let cx = Math.round(x);
  const top = Math.round(y);
  for (const ch of text) {
    const rows = glyph(ch);
    for (let r = 0; r < GLYPH_HEIGHT; r++) {
      const bits = rows[r]!;
      for (let c = 0; c < GLYPH_WIDTH; c++) {
        if (bits & (1 << (GLYPH_WIDTH - 1 - c)))
          fillRect(image, cx + c * scale, top + r * scale, cx + (c + 1) * scale, top + (r + 1) * scale, colour);
      }
    }
    cx += (GLYPH_WIDTH + 1) * scale;
  }
}

/** Text on a filled label background, kept inside the image. */
export function drawLabel(image: RgbImage, x: number, y: number, text: string, fg: Rgb, bg: Rgb, scale = 1): void {
  const pad = scale;
  const w = textWidth(text, scale) + 2 * pad;
  const h = GLYPH_HEIGHT * scale + 2 * pad;
  const lx = Math.min(Math.max(0, Math.round(x)), Math.max(0, image.width - w));
  const ly = Math.min(Math.max(0, Math.round(y)), Math.max(0, image.height - h));
  fillRect(image, lx, ly, lx + w, ly + h, bg);
  drawText(image, lx + pad, ly + pad, text, fg, scale);
}
