import type { Box, DetectionKind, RgbImage, Ripeness } from './types.js';
import { cloneImage, drawLabel, strokeRect, type Rgb } from './image/draw.js';

export interface OverlayBox {
  box: Box;
  kind: DetectionKind;
  ripeness?: Ripeness;
  /** Drawn as the label, e.g. the tracker's id; nothing is written when absent. */
  trackId?: number | string;
}

export const OVERLAY_COLOURS: Record<'green' | 'turning' | 'red' | 'fruit' | 'stem' | 'plant', Rgb> = {
  green: [40, 220, 40],
  turning: [255, 150, 0],
  red: [235, 20, 20],
  /** Fruit without a ripeness. */
  fruit: [255, 255, 255],
  stem: [0, 170, 255],
  plant: [200, 80, 255],
};

export function overlayColour(b: Pick<OverlayBox, 'kind' | 'ripeness'>): Rgb {
  if (b.kind === 'fruit') return b.ripeness ? OVERLAY_COLOURS[b.ripeness] : OVERLAY_COLOURS.fruit;
  return OVERLAY_COLOURS[b.kind];
}

/**
 * A copy of the frame with each box outlined in its ripeness colour (stems
 * and plants in their own) and its track id written on a label above it.
 * Line width and text size follow the frame size so they stay readable on a
 * 1280-px frame and do not swamp a small one.
 */
export function drawOverlay(image: RgbImage, boxes: readonly OverlayBox[]): RgbImage {
  const out = cloneImage(image);
  const long = Math.max(image.width, image.height);
  const thickness = Math.max(1, Math.round(long / 400));
  const scale = Math.max(1, Math.round(long / 500));
  // Stems and plants under fruit, so fruit boxes stay visible where they overlap.
  const ordered = [...boxes].sort((a, b) => (a.kind === 'fruit' ? 1 : 0) - (b.kind === 'fruit' ? 1 : 0));
  for (const b of ordered) {
    const colour = overlayColour(b);
    // Clip to the frame first so a box cut by the edge still shows its edge line.
    const box: Box = [
      Math.max(0, Math.min(image.width, b.box[0])),
      Math.max(0, Math.min(image.height, b.box[1])),
      Math.max(0, Math.min(image.width, b.box[2])),
      Math.max(0, Math.min(image.height, b.box[3])),
    ];
    if (box[2] - box[0] < 1 || box[3] - box[1] < 1) continue;
    strokeRect(out, box, colour, thickness);
    if (b.trackId !== undefined) {
      const text = String(b.trackId);
      const labelHeight = 7 * scale + 2 * scale;
      const y = box[1] - labelHeight >= 0 ? box[1] - labelHeight : box[1];
      const fg: Rgb = colour[0] * 0.3 + colour[1] * 0.6 + colour[2] * 0.1 > 140 ? [0, 0, 0] : [255, 255, 255];
      drawLabel(out, box[0], y, text, fg, colour, scale);
    }
  }
  return out;
}
