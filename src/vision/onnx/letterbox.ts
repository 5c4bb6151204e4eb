// Ultralytics-style letterbox: scale to fit the model input keeping the aspect ratio,
// centre it, pad with grey 114, and hand over NCHW float32 in 0..1.
import type { RgbImage } from '../types.js';

export interface Letterbox {
  /** NCHW, 1 × 3 × height × width. */
  tensor: Float32Array;
  /** Model pixels per image pixel. */
  scale: number;
  /** Padding before the image, model pixels. */
  padX: number;
  padY: number;
}

export const PAD_VALUE = 114;

export function letterbox(image: RgbImage, width: number, height: number): Letterbox {
  const scale = Math.min(width / image.width, height / image.height);
  const newW = Math.round(image.width * scale);
  const newH = Math.round(image.height * scale);
  // Ultralytics rounds the split padding this way (round(dw - 0.1)), so boxes line up with its exports.
  const padX = Math.round((width - newW) / 2 - 0.1);
  const padY = Math.round((height - newH) / 2 - 0.1);
  const plane = width * height;
  const tensor = new Float32Array(3 * plane).fill(PAD_VALUE / 255);
  const src = image.data;
  const sw = image.width,
    sh = image.height;
  const fx = sw / newW,
    fy = sh / newH;
  // Bilinear with pixel centres aligned (OpenCV INTER_LINEAR).
  const x0s = new Int32Array(newW),
    x1s = new Int32Array(newW),
    wxs = new Float32Array(newW);
  for (let x = 0; x < newW; x++) {
    const sx = Math.min(sw - 1, Math.max(0, (x + 0.5) * fx - 0.5));
    x0s[x] = Math.floor(sx);
    x1s[x] = Math.min(sw - 1, x0s[x]! + 1);
    wxs[x] = sx - x0s[x]!;
  }
  const inv = 1 / 255;
  for (let y = 0; y < newH; y++) {
    const sy = Math.min(sh - 1, Math.max(0, (y + 0.5) * fy - 0.5));
    const y0 = Math.floor(sy),
      y1 = Math.min(sh - 1, y0 + 1),
      wy = sy - y0;
    const r0 = y0 * sw * 3,
      r1 = y1 * sw * 3;
    let o = (y + padY) * width + padX;
    for (let x = 0; x < newW; x++, o++) {
      const a = r0 + x0s[x]! * 3,
        b = r0 + x1s[x]! * 3,
        c = r1 + x0s[x]! * 3,
        d = r1 + x1s[x]! * 3;
      const wx = wxs[x]!;
      for (let ch = 0; ch < 3; ch++) {
        const top = src[a + ch]! + (src[b + ch]! - src[a + ch]!) * wx;
        const bot = src[c + ch]! + (src[d + ch]! - src[c + ch]!) * wx;
        tensor[ch * plane + o] = (top + (bot - top) * wy) * inv;
      }
    }
  }
  return { tensor, scale, padX, padY };
}
