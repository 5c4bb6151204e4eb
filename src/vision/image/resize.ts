import type { RgbImage } from '../types.js';

/**
 * Area-average resize of an RGB image: every output pixel is the mean of the
 * source area it covers (fractional edges weighted), which is the right
 * filter for shrinking and does not alias. Enlarging works too (it becomes
 * nearest-neighbour-like), but the pipeline only shrinks.
 */
export function resizeArea(image: RgbImage, width: number, height: number): RgbImage {
  if (!Number.isInteger(width) || !Number.isInteger(height) || width < 1 || height < 1) {
    throw new RangeError(`bad target size ${width}×${height}`);
  }
  const sw = image.width;
  const sh = image.height;
  if (sw === width && sh === height) return { width, height, data: image.data.slice() };
  const xs = spans(sw, width);
  const ys = spans(sh, height);
  const out = new Uint8Array(width * height * 3);
  const row = new Float64Array(width * 3);
  const src = image.data;
  for (let oy = 0; oy < height; oy++) {
    row.fill(0);
    const ySpan = ys[oy]!;
    for (let k = 0; k < ySpan.idx.length; k++) {
      const sy = ySpan.idx[k]!;
      const wy = ySpan.w[k]!;
      const base = sy * sw * 3;
      for (let ox = 0; ox < width; ox++) {
        const xSpan = xs[ox]!;
        let r = 0;
        let g = 0;
        let b = 0;
        for (let j = 0; j < xSpan.idx.length; j++) {
          const p = base + xSpan.idx[j]! * 3;
          const wx = xSpan.w[j]!;
          r += src[p]! * wx;
          g += src[p + 1]! * wx;
          b += src[p + 2]! * wx;
        }
        const o = ox * 3;
        row[o] += r * wy;
        row[o + 1] += g * wy;
        row[o + 2] += b * wy;
      }
    }
    const ob = oy * width * 3;
    for (let i = 0; i < width * 3; i++) out[ob + i] = Math.min(255, Math.round(row[i]!));
  }
  return { width, height, data: out };
}

/** For each output index: the source indices it covers and their weights (summing to 1). */
function spans(srcLen: number, dstLen: number): Array<{ idx: Int32Array; w: Float64Array }> {
  const scale = srcLen / dstLen;
  const result: Array<{ idx: Int32Array; w: Float64Array }> = [];
  for (let o = 0; o < dstLen; o++) {
    const start = o * scale;
    const end = Math.min(srcLen, (o + 1) * scale);
    const first = Math.floor(start);
    const last = Math.min(srcLen - 1, Math.ceil(end) - 1);
    const idx: number[] = [];
    const w: number[] = [];
    for (let s = first; s <= Math.max(first, last); s++) {
      const cover = Math.min(end, s + 1) - Math.max(start, s);
      if (cover > 1e-9) {
        idx.push(s);
        w.push(cover);
      }
    }
    const total = w.reduce((a, b) => a + b, 0) || 1;
    result.push({
      idx: Int32Array.from(idx.length ? idx : [Math.min(first, srcLen - 1)]),
      w: Float64Array.from(idx.length ? w.map((x) => x / total) : [1]),
    });
  }
  return result;
}

/** Size that fits `maxLongSide`, keeping the aspect ratio, never enlarging. */
export function fitLongSide(width: number, height: number, maxLongSide: number): { width: number; height: number; scale: number } {
  const long = Math.max(width, height);
  if (long <= maxLongSide) return { width, height, scale: 1 };
  const scale = maxLongSide / long;
  return { width: Math.max(1, Math.round(width * scale)), height: Math.max(1, Math.round(height * scale)), scale };
}
