import t from 'tap';
import { drawOverlay, OVERLAY_COLOURS } from '../../src/vision/overlay.js';
import type { RgbImage } from '../../src/vision/types.js';

const grey = (w: number, h: number): RgbImage => ({ width: w, height: h, data: new Uint8Array(w * h * 3).fill(100) });
const px = (img: RgbImage, x: number, y: number) => [...img.data.subarray((y * img.width + x) * 3, (y * img.width + x) * 3 + 3)];

t.test('boxes are drawn in their ripeness colour on a copy, with ids', async (t) => {
  const frame = grey(400, 300);
  const out = drawOverlay(frame, [
    { box: [20, 40, 100, 120], kind: 'fruit', ripeness: 'red', trackId: 7 },
    { box: [150, 40, 230, 120], kind: 'fruit', ripeness: 'green', trackId: 12 },
    { box: [250, 40, 330, 120], kind: 'fruit', ripeness: 'turning' },
    { box: [340, 10, 360, 290], kind: 'stem', trackId: 3 },
  ]);
  t.same(px(frame, 20, 80), [100, 100, 100], 'the input frame is not touched');
  t.same(px(out, 20, 80), [...OVERLAY_COLOURS.red], 'red fruit outline');
  t.same(px(out, 150, 80), [...OVERLAY_COLOURS.green]);
  t.same(px(out, 250, 80), [...OVERLAY_COLOURS.turning]);
  t.same(px(out, 340, 150), [...OVERLAY_COLOURS.stem]);
  t.same(px(out, 60, 80), [100, 100, 100], 'box insides are left as they were');
  // The id label sits above the red box: its background is the box colour, with dark or light text on it.
  let labelPixels = 0;
  let textPixels = 0;
  for (let y = 20; y < 40; y++)
    for (let x = 20; x < 40; x++) {
      const p = px(out, x, y);
      if (p.join() === OVERLAY_COLOURS.red.join()) labelPixels++;
      else if (p.join() === '255,255,255' || p.join() === '0,0,0') textPixels++;
    }
  t.ok(labelPixels > 20 && textPixels > 5, `label drawn (${labelPixels} label, ${textPixels} text pixels)`);
  let aboveTurning = 0;
  for (let y = 20; y < 40; y++) for (let x = 250; x < 270; x++) if (px(out, x, y).join() !== '100,100,100') aboveTurning++;
  t.equal(aboveTurning, 0, 'no label where there is no id');
});

t.test('boxes at or beyond the frame edge are clipped', async (t) => {
  const out = drawOverlay(grey(50, 40), [{ box: [-10, -10, 60, 50], kind: 'fruit', ripeness: 'red', trackId: 1 }]);
  t.equal(out.data.length, 50 * 40 * 3);
  t.same(px(out, 25, 39), [...OVERLAY_COLOURS.red]);
});
