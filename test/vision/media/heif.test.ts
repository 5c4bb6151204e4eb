// HEIF/HEIC photos (an iPhone camera's default) read through libheif (WebAssembly): recognised by
// content, probed without decoding, decoded upright at the working size, and hostile files refused.
import t from 'tap';
import { readFileSync, writeFileSync, openSync, writeSync, ftruncateSync, closeSync } from 'node:fs';
import path from 'node:path';
import { decodeFrames, probeMedia, resolveFfmpeg, sniffMediaType } from '../../../src/vision/media/index.js';
import { decodeHeif, MAX_HEIF_BYTES } from '../../../src/vision/media/heif.js';
import type { RgbImage } from '../../../src/vision/types.js';
import { withDeclaredSize, withRotation } from '../../helpers/heif-edit.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const HEIC = path.join(ROOT, 'test/fixtures/heic/row-mixed.heic');
// The same photo as an iPhone stores one: a grid of HEVC tiles (test/fixtures/heic/make-grid.ts).
const GRID = path.join(ROOT, 'test/fixtures/heic/row-mixed-grid.heic');
const JPEG = path.join(ROOT, 'examples/row-mixed.jpg');
const bytes = readFileSync(HEIC);
const dir = t.testdir();
const write = (name: string, data: Buffer) => {
  const file = path.join(dir, name);
  writeFileSync(file, data);
  return file;
};
const ftyp = (major: string, ...compatible: string[]) => {
  const b = Buffer.alloc(16 + 4 * compatible.length);
  b.writeUInt32BE(b.length, 0);
  b.write('ftyp', 4, 'latin1');
  b.write(major, 8, 'latin1');
  compatible.forEach((c, i) => b.write(c, 16 + 4 * i, 'latin1'));
  return b;
};

/** The one frame of a photo; throws when there is not exactly one. */
async function frameOf(file: string, maxLongSide = 1280): Promise<RgbImage> {
  const frames = [];
  for await (const f of decodeFrames(file, { maxLongSide })) frames.push(f);
  if (frames.length !== 1 || frames[0]!.colour !== 'as-recorded')
    throw new Error(`${path.basename(file)}: ${frames.length} frames, ${frames[0]?.colour}`);
  return frames[0]!.image;
}

function meanAbsDiff(a: RgbImage, b: RgbImage): number {
  let d = 0;
  for (let i = 0; i < a.data.length; i++) d += Math.abs(a.data[i]! - b.data[i]!);
  return d / a.data.length;
}

/** Silences and collects console output: libheif's own wrappers print to stdout, which would break the JSON log. */
function captureConsole(): { lines: string[]; restore: () => void } {
  const lines: string[] = [];
  const saved = { log: console.log, error: console.error, warn: console.warn };
  for (const k of ['log', 'error', 'warn'] as const) console[k] = (...a: unknown[]) => void lines.push(a.map(String).join(' '));
  return { lines, restore: () => Object.assign(console, saved) };
}

t.test('HEIC is recognised by its brands; AVIF (AV1, which this libheif cannot decode) is not', async (t) => {
  t.match(sniffMediaType(bytes), { kind: 'image', format: 'heic', mime: 'image/heic' });
  t.equal(sniffMediaType(ftyp('mif1', 'heic', 'miaf'))?.format, 'heic', 'mif1 with heic among the compatible brands');
  t.equal(sniffMediaType(ftyp('heix', 'mif1'))?.format, 'heic', '10-bit HEIC');
  t.equal(sniffMediaType(ftyp('mif1', 'avif', 'miaf')), null, 'AVIF');
  t.equal(sniffMediaType(ftyp('isom', 'iso2', 'mp41'))?.format, 'mp4', 'an MP4 stays an MP4');
});

t.test('probe: size from the container, no ffmpeg involved', async (t) => {
  const info = await probeMedia(HEIC);
  t.match(info, {
    kind: 'image',
    width: 800,
    height: 600,
    durationSeconds: 0,
    rotation: 0,
    codec: 'hevc',
    container: 'heif',
    colourTransfer: null,
  });
  t.match(
    await probeMedia(GRID),
    { kind: 'image', width: 800, height: 600, container: 'heif' },
    'a grid: the size of the whole picture, not a tile',
  );
});

const ffmpeg = await resolveFfmpeg();
t.test(
  'decoded like the JPEG it was made from, scaled to the working size',
  { skip: ffmpeg.available ? false : `ffmpeg is not available here, the JPEG is decoded by it: ${ffmpeg.reason}` },
  async (t) => {
    const heic = await frameOf(HEIC);
    const jpeg = await frameOf(JPEG);
    t.same([heic.width, heic.height], [800, 600]);
    const d = meanAbsDiff(heic, jpeg);
    t.ok(d < 3, `mean difference ${d.toFixed(2)} levels (HEVC at quality 90 against the JPEG source)`);
    const grid = await frameOf(GRID);
    t.same([grid.width, grid.height], [800, 600], 'a grid of 2 × 2 tiles of 400 × 300');
    for (const [x0, y0] of [
      [0, 0],
      [400, 0],
      [0, 300],
      [400, 300],
    ] as const) {
      let diff = 0,
        n = 0;
      for (let y = y0; y < y0 + 300; y++)
        for (let x = x0; x < x0 + 400; x++) {
          for (let c = 0; c < 3; c++) diff += Math.abs(grid.data[(y * 800 + x) * 3 + c]! - jpeg.data[(y * 800 + x) * 3 + c]!);
          n += 3;
        }
      t.ok(diff / n < 3, `tile at ${x0},${y0} in its place (mean difference ${(diff / n).toFixed(2)})`);
    }
    const small = await frameOf(HEIC, 400);
    t.same([small.width, small.height], [400, 300]);
    const smallJpeg = await frameOf(JPEG, 400);
    t.ok(meanAbsDiff(small, smallJpeg) < 3, 'area-scaled like ffmpeg scales the JPEG');
  },
);

t.test('a rotation property is applied: a portrait photo arrives upright', async (t) => {
  const upright = await decodeHeif(HEIC, 1e8);
  const at = (img: RgbImage, x: number, y: number) => img.data[(y * img.width + x) * 3]!;
  const W = upright.width,
    H = upright.height;
  // irot turns anticlockwise: where each pixel of the turned picture comes from in the stored one.
  const from: Record<1 | 2 | 3, (x: number, y: number) => [number, number]> = {
    1: (x, y) => [W - 1 - y, x],
    2: (x, y) => [W - 1 - x, H - 1 - y],
    3: (x, y) => [y, H - 1 - x],
  };
  for (const q of [1, 2, 3] as const) {
    const file = write(`turned-${q}.heic`, withRotation(bytes, q));
    const info = await probeMedia(file);
    const turned = await decodeHeif(file, 1e8);
    const size = q === 2 ? [800, 600] : [600, 800];
    t.same([info.width, info.height], size, `${q * 90}°: probed size is the displayed one`);
    t.same([turned.width, turned.height], size, `${q * 90}°: decoded size`);
    let diff = 0,
      n = 0;
    for (let y = 0; y < turned.height; y += 5)
      for (let x = 0; x < turned.width; x += 5) {
        const [ox, oy] = from[q](x, y);
        diff += Math.abs(at(turned, x, y) - at(upright, ox, oy));
        n++;
      }
    t.equal(diff / n, 0, `${q * 90}°: every pixel where the rotation puts it`);
  }
  // An iPhone's portrait photo: the rotation sits on the grid, the tiles are stored as filmed.
  const grid = await decodeHeif(GRID, 1e8);
  const gridTurned = await decodeHeif(write('grid-turned.heic', withRotation(readFileSync(GRID), 3)), 1e8);
  t.same([gridTurned.width, gridTurned.height], [600, 800]);
  let diff = 0,
    n = 0;
  for (let y = 0; y < 800; y += 5)
    for (let x = 0; x < 600; x += 5) {
      const [ox, oy] = from[3](x, y);
      diff += Math.abs(at(gridTurned, x, y) - at(grid, ox, oy));
      n++;
    }
  t.equal(diff / n, 0, 'a turned grid: every pixel where the rotation puts it');
});

t.test('hostile HEIF files are refused with a reason, and libheif prints nothing', async (t) => {
  const out = captureConsole();
  try {
    const bomb = write('bomb.heic', withDeclaredSize(bytes, 20000, 20000));
    await t.rejects(
      probeMedia(bomb),
      { code: 'unsupported_media', message: /20000×20000 is larger than this appliance scores/ },
      'a declared 400 megapixels',
    );
    const info = { ...(await probeMedia(HEIC)), width: 20000, height: 20000 };
    await t.rejects(
      (async () => {
        for await (const _ of decodeFrames(bomb, { info })) void _;
      })(),
      { message: /larger than this appliance scores/ },
      'checked again before decoding, whatever the caller says',
    );

    const noise = Buffer.concat([ftyp('heic', 'mif1'), Buffer.from(Array.from({ length: 4000 }, (_, i) => (i * 7919) & 255))]);
    await t.rejects(
      probeMedia(write('noise.heic', noise)),
      { code: 'unsupported_media', message: /HEIF/ },
      'a heic ftyp followed by noise',
    );
    await t.rejects(probeMedia(write('header-only.heic', ftyp('heic', 'mif1'))), { code: 'unsupported_media' }, 'a bare ftyp');

    // Container intact, picture data cut: it probes (as ffprobe probes a clip) and fails to decode with libheif's reason.
    const cut = write('cut.heic', bytes.subarray(0, 2000));
    t.match(await probeMedia(cut), { container: 'heif', width: 800 });
    await t.rejects(
      (async () => {
        for await (const _ of decodeFrames(cut)) void _;
      })(),
      { code: 'decode_failed', message: /libheif could not decode.*end of file/i },
    );

    const huge = path.join(dir, 'huge.heic');
    const fd = openSync(huge, 'w');
    writeSync(fd, bytes);
    ftruncateSync(fd, MAX_HEIF_BYTES + 1);
    closeSync(fd);
    await t.rejects(
      probeMedia(huge),
      { code: 'unsupported_media', message: /larger than this appliance reads/ },
      'not read into memory above the cap',
    );
  } finally {
    out.restore();
  }
  t.same(out.lines, [], 'nothing on stdout or stderr');
});
