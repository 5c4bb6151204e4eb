// Photos in Display P3 (an iPhone's default) and other RGB spaces: the profile read from JPEG,
// PNG, WebP and HEIF, the pixels brought to sRGB before detection, and hostile containers refused
// without being read past their bounds. The P3 pictures are made by ffmpeg's zscale (libzimg), so
// the conversion back is checked against an independent implementation.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { deflateSync } from 'node:zlib';
import path from 'node:path';
import { photoColour } from '../../../src/vision/media/colour-profile.js';
import { decodeFrames, resolveFfmpeg, type DecodedFrame } from '../../../src/vision/media/index.js';
import { canConvertColour } from '../../../src/vision/media/colour-conversion.js';
import { convertToSrgb } from '../../../src/vision/image/icc.js';
import { decodeHeif } from '../../../src/vision/media/heif.js';
import { displayP3Profile, jpegWithProfile, pngChunk, pngWithChunk, pngWithProfile, webpWithProfile } from '../../helpers/icc.js';
import { withColour } from '../../helpers/heif-edit.js';
import { upload, poll } from '../../helpers/walks.js';
import { startServer, createTree } from '../../helpers/server.js';

const ff = await resolveFfmpeg();
if (!ff.available || !(await canConvertColour(ff.ffmpeg.path))) {
  t.plan(0, `photo colour tests need ffmpeg with zscale to make Display P3 pictures: ${ff.available ? 'zscale is missing' : ff.reason}`);
  process.exit(0);
}
const FF = ff.ffmpeg.path;
const ROOT = path.resolve(import.meta.dirname, '../../..');
const SOURCE = path.join(ROOT, 'examples/row-mixed.jpg');
const HEIC = readFileSync(path.join(ROOT, 'test/fixtures/heic/row-mixed.heic'));
const dir = t.testdir();
const at = (name: string) => path.join(dir, name);
const write = (name: string, data: Uint8Array) => {
  writeFileSync(at(name), data);
  return at(name);
};
const ffmpeg = (...args: string[]) => execFileSync(FF, ['-v', 'error', '-y', ...args]);

// The example photo as sRGB pixels, and the same colours expressed in Display P3 by zscale.
ffmpeg('-i', SOURCE, '-pix_fmt', 'rgb24', at('srgb.png'));
ffmpeg('-i', at('srgb.png'), '-vf', 'zscale=pin=709:tin=iec61966-2-1:p=smpte432:t=iec61966-2-1,format=rgb24', at('p3-bare.png'));
ffmpeg('-i', at('p3-bare.png'), '-q:v', '2', at('p3-bare.jpg'));
ffmpeg('-i', at('srgb.png'), '-q:v', '2', at('srgb.jpg'));
ffmpeg('-i', at('p3-bare.png'), '-c:v', 'libwebp', '-quality', '95', at('p3-bare.webp'));
const P3 = displayP3Profile();
const cicp = (primaries: number, transfer: number, matrix = 0, fullRange = 1) =>
  pngChunk('cICP', Buffer.from([primaries, transfer, matrix, fullRange]));
writeFileSync(at('p3.png'), pngWithProfile(readFileSync(at('p3-bare.png')), P3));
const files = {
  pngP3: at('p3.png'),
  jpegP3: write('p3.jpg', jpegWithProfile(readFileSync(at('p3-bare.jpg')), P3)),
  jpegP3Split: write('p3-split.jpg', jpegWithProfile(readFileSync(at('p3-bare.jpg')), P3, 3)),
  webpP3: write('p3.webp', webpWithProfile(readFileSync(at('p3-bare.webp')), P3, 800, 600)),
  pngSrgbChunk: write('srgb-chunk.png', pngWithChunk(readFileSync(at('srgb.png')), pngChunk('sRGB', Buffer.from([0])))),
  // cICP (PNG's third edition): Display P3 as H.273 code points, primaries 12 and sRGB's curve 13.
  pngP3Cicp: write('p3-cicp.png', pngWithChunk(readFileSync(at('p3-bare.png')), cicp(12, 13))),
  // The same pixels with a P3 profile and a cICP of sRGB: cICP ranks first, before or after the profile.
  pngCicpFirst: write('cicp-first.png', pngWithChunk(readFileSync(at('p3.png')), cicp(1, 13))),
  pngCicpAfter: write(
    'cicp-after.png',
    pngWithChunk(
      pngWithChunk(readFileSync(at('p3-bare.png')), cicp(1, 13)),
      pngChunk('iCCP', Buffer.concat([Buffer.from('P3\0\0', 'latin1'), deflateSync(P3)])),
    ),
  ),
  heicP3Nclx: write('p3-nclx.heic', withColour(HEIC, { primaries: 12, transfer: 13 })),
  heicP3Icc: write('p3-icc.heic', withColour(HEIC, { icc: P3 })),
  heicPq: write('pq.heic', withColour(HEIC, { primaries: 9, transfer: 16 })),
  heic709: write('bt709.heic', withColour(HEIC, { primaries: 1, transfer: 13 })),
};

async function frame(file: string): Promise<DecodedFrame> {
  for await (const f of decodeFrames(file, { maxFrames: 1 })) return f;
  throw new Error('no frame');
}
const same = (a: Uint8Array, b: Uint8Array) =>
  Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
function maxAbsDiff(a: Uint8Array, b: Uint8Array): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i]! - b[i]!));
  return d;
}
function meanAbsDiff(a: Uint8Array, b: Uint8Array): number {
  let d = 0;
  for (let i = 0; i < a.length; i++) d += Math.abs(a[i]! - b[i]!);
  return d / a.length;
}

t.test('the profile is found in each container', async (t) => {
  for (const f of [
    SOURCE,
    at('srgb.png'),
    at('p3-bare.webp'),
    files.pngSrgbChunk,
    files.heic709,
    path.join(ROOT, 'test/fixtures/heic/row-mixed.heic'),
  ]) {
    t.same(await photoColour(f), { kind: 'srgb' }, `${path.basename(f)}: sRGB, nothing to do`);
  }
  t.same(await photoColour(files.pngCicpFirst), { kind: 'srgb' }, 'PNG: cICP (sRGB) ranks over the P3 profile after it');
  t.same(await photoColour(files.pngCicpAfter), { kind: 'srgb' }, 'and over a P3 profile before it');
  for (const f of [files.pngP3, files.pngP3Cicp, files.jpegP3, files.jpegP3Split, files.webpP3, files.heicP3Nclx, files.heicP3Icc]) {
    const c = await photoColour(f);
    t.equal(c.kind, 'convert', `${path.basename(f)}: Display P3, converted`);
    if (c.kind === 'convert') t.ok(Math.abs(c.conversion.matrix[0] - 1.2249) < 0.002, 'by the P3 matrix');
  }
  t.match(
    await photoColour(files.heicPq),
    { kind: 'unreadable', reason: /transfer characteristics 16/ },
    'an HDR (PQ) still is not converted, and says why',
  );
});

t.test("decoded pixels of a Display P3 photo are the sRGB original's", async (t) => {
  const original = await frame(at('srgb.png'));
  const png = await frame(files.pngP3);
  t.equal(png.colour, 'converted');
  const bare = await frame(at('p3-bare.png'));
  t.equal(bare.colour, 'as-recorded', 'without its profile the same pixels are taken as sRGB');
  const dBare = meanAbsDiff(bare.image.data, original.image.data),
    dPng = meanAbsDiff(png.image.data, original.image.data);
  // Measured: 0.14 levels converted (rounding on both sides), 2.3 read as sRGB (the mean over a
  // photo of leaves and fruit; the saturated fruit move most).
  t.ok(dPng < 1, `PNG with its profile: ${dPng.toFixed(2)} levels from the original`);
  t.ok(dBare > 1.5, `read as sRGB it is ${dBare.toFixed(2)} levels off`);
  const cicpFrame = await frame(files.pngP3Cicp);
  t.equal(cicpFrame.colour, 'converted');
  t.ok(maxAbsDiff(cicpFrame.image.data, png.image.data) <= 1, 'PNG tagged by cICP: the same pixels as by its ICC profile, within a level');
  const jpeg = await frame(files.jpegP3),
    jpegOriginal = await frame(at('srgb.jpg'));
  const dJpeg = meanAbsDiff(jpeg.image.data, jpegOriginal.image.data);
  t.ok(dJpeg < 1.5, `JPEG with its profile: ${dJpeg.toFixed(2)} levels from the sRGB JPEG`);
  t.ok(same((await frame(files.jpegP3Split)).image.data, jpeg.image.data), 'a profile split over three APP2 segments reads the same');
  const webp = await frame(files.webpP3);
  t.equal(webp.colour, 'converted', 'WebP too');
  t.ok(meanAbsDiff(webp.image.data, original.image.data) < 2, 'and lands near the original');

  const heicP3 = await frame(files.heicP3Nclx);
  t.equal(heicP3.colour, 'converted');
  const untagged = await frame(path.join(ROOT, 'test/fixtures/heic/row-mixed.heic'));
  t.ok(
    same(
      heicP3.image.data,
      convertToSrgb(untagged.image, ((await photoColour(files.heicP3Nclx)) as { kind: 'convert'; conversion: never }).conversion).data,
    ),
    'HEIC tagged P3: its pixels converted',
  );
  t.ok(meanAbsDiff(heicP3.image.data, untagged.image.data) > 1, 'which moves them');
  // The ICC profile's colorants are Apple's, rounded to 16 fractional bits: a level here and there.
  const byIcc = (await frame(files.heicP3Icc)).image.data;
  t.ok(
    maxAbsDiff(byIcc, heicP3.image.data) <= 1 && meanAbsDiff(byIcc, heicP3.image.data) < 0.05,
    'the same whether the tag is nclx or an ICC profile',
  );
  t.equal((await frame(files.heicPq)).colour, 'unconverted', 'a colour the box cannot convert is marked so');
  t.ok((await decodeHeif(files.heicP3Nclx, 1e8)).width === 800, 'libheif reads the edited file');
});

t.test('hostile containers: refused as unreadable or read as untagged, never past their bounds', async (t) => {
  const jpeg = readFileSync(at('p3-bare.jpg'));
  const three = readFileSync(files.jpegP3Split);
  // The second APP2 segment starts after SOI (2) and the first segment (4 + 14 + its part).
  const firstLength = three.readUInt16BE(4);
  const second = 2 + 2 + firstLength;
  const withoutSecond = Buffer.concat([three.subarray(0, second), three.subarray(second + 2 + three.readUInt16BE(second + 2))]);
  const dupSeq = Buffer.from(three);
  dupSeq[second + 16] = 1;
  const pastCount = Buffer.from(three);
  pastCount[second + 16] = 7;
  const shortLen = Buffer.concat([jpeg.subarray(0, 2), Buffer.from([0xff, 0xe1, 0x00, 0x01]), jpeg.subarray(2)]);
  const bomb = deflateSync(Buffer.alloc(64 * 1024 * 1024));
  const png = readFileSync(at('p3-bare.png'));
  const webp = readFileSync(files.webpP3);
  const hugeIccp = Buffer.from(webp);
  hugeIccp.writeUInt32LE(0xfffffff0, 12 + 18 + 4);
  const cases: [string, Buffer, RegExp | 'srgb'][] = [
    ['JPEG: a segment of three missing', withoutSecond, /3 segments, 2 found/],
    ['JPEG: a segment given twice', dupSeq, /twice/],
    ['JPEG: segment 7 of 3', pastCount, /numbered/],
    ['JPEG: a segment length under 2', shortLen, /length under 2/],
    [
      'JPEG: a CMYK profile',
      jpegWithProfile(jpeg, Buffer.from(P3).fill(0x43, 16, 17).fill(0x4d, 17, 18).fill(0x59, 18, 19).fill(0x4b, 19, 20)),
      /CMYK/,
    ],
    [
      'JPEG: 100,000 empty segments before the picture',
      Buffer.concat([jpeg.subarray(0, 2), Buffer.alloc(400_000, Buffer.from([0xff, 0xe1, 0x00, 0x02])), jpeg.subarray(2)]),
      /more than 1000 JPEG segments/,
    ],
    [
      'JPEG: noise after SOI',
      Buffer.concat([jpeg.subarray(0, 2), Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) & 255))]),
      'srgb',
    ],
    [
      `PNG: a profile that inflates past 4 MiB (${bomb.length} bytes packed)`,
      pngWithChunk(png, pngChunk('iCCP', Buffer.concat([Buffer.from('x\0\0', 'latin1'), bomb]))),
      /cannot be unpacked/,
    ],
    ['PNG: a profile that is not zlib', pngWithChunk(png, pngChunk('iCCP', Buffer.from('x\0\0garbage', 'latin1'))), /cannot be unpacked/],
    ['PNG: a profile chunk without a name', pngWithChunk(png, pngChunk('iCCP', Buffer.from([0, 0, 1, 2]))), /malformed/],
    [
      'PNG: a profile chunk of 4 GiB declared',
      pngWithChunk(png, Buffer.from([0xff, 0xff, 0xff, 0xf0, 0x69, 0x43, 0x43, 0x50])),
      /larger than any camera/,
    ],
    ['WebP: a profile chunk of 4 GiB declared', hugeIccp, /larger than any camera/],
    ['PNG: a cICP chunk of 3 bytes', pngWithChunk(png, pngChunk('cICP', Buffer.from([12, 13, 0]))), /cICP chunk of 3 bytes/],
    ['PNG: a cICP chunk declaring a YCbCr matrix', pngWithChunk(png, cicp(12, 13, 1)), /matrix coefficients 1/],
    ['PNG: a cICP chunk declaring narrow range', pngWithChunk(png, cicp(12, 13, 0, 0)), /narrow-range/],
    ['PNG: a cICP chunk of an HDR (PQ) picture', pngWithChunk(png, cicp(9, 16)), /transfer characteristics 16/],
    ['PNG: a cICP chunk of unknown primaries', pngWithChunk(png, cicp(200, 13)), /primaries 200/],
    [
      'PNG: a cICP chunk of 4 GiB declared',
      pngWithChunk(png, Buffer.from([0xff, 0xff, 0xff, 0xf0, 0x63, 0x49, 0x43, 0x50])),
      /cICP chunk of 4294967280 bytes/,
    ],
  ];
  for (const [name, bytes, want] of cases) {
    const c = await photoColour(write('hostile.bin', bytes));
    if (want === 'srgb') t.same(c, { kind: 'srgb' }, name);
    else t.match(c, { kind: 'unreadable', reason: want }, name);
  }
});

t.test('fuzzed headers: a photo with broken bytes in its headers gets an answer, never an exception', async (t) => {
  let seed = 4242;
  const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const sources = [files.jpegP3Split, files.pngP3, files.webpP3, files.heicP3Icc, files.pngP3Cicp].map((f) => readFileSync(f));
  const kinds = new Map<string, number>();
  const thrown: string[] = [];
  for (let i = 0; i < 800; i++) {
    const src = sources[i % sources.length]!;
    // The profile and the boxes around it sit in the first few kB.
    const b = Buffer.from(src.subarray(0, Math.min(src.length, 16_384)));
    for (let k = 1 + Math.floor(rnd() * 6); k > 0; k--) b[Math.floor(rnd() * Math.min(b.length, 4096))] = Math.floor(rnd() * 256);
    try {
      const c = await photoColour(write('fuzz.bin', b));
      kinds.set(c.kind, (kinds.get(c.kind) ?? 0) + 1);
    } catch (err) {
      thrown.push(`case ${i}: ${(err as Error).name}: ${(err as Error).message}`);
    }
  }
  t.same(thrown, [], `answers: ${JSON.stringify(Object.fromEntries(kinds))}`);
  t.ok((kinds.get('unreadable') ?? 0) > 50 && (kinds.get('convert') ?? 0) > 50, 'broken profiles are refused, intact ones still read');
});

t.test(
  'through the API: a P3 photo is counted as its sRGB original; a profile the box cannot read raises the colour warning',
  async (t) => {
    const s = await startServer(t);
    const { adminKey } = await createTree(s);
    async function scored(file: string) {
      const r = await upload(s, '/api/observations', adminKey, [{ field: 'file', file, name: path.basename(file) }], { mode: 'photo' });
      if (r.status !== 202) throw new Error(`${r.status} ${r.text}`);
      const done = (await poll(s, r.body.job_id, adminKey)).at(-1);
      t.equal(done.status, 'done', done.error?.detail ?? '');
      return done.result;
    }
    const original = await scored(at('srgb.png'));
    const p3 = await scored(files.pngP3);
    const bare = await scored(at('p3-bare.png'));
    for (const k of ['green', 'turning', 'red', 'total'] as const) {
      t.ok(
        Math.abs(p3.counts[k] - original.counts[k]) <= 1,
        `${k}: P3 with its profile ${p3.counts[k]}, sRGB original ${original.counts[k]} (read as sRGB: ${bare.counts[k]})`,
      );
    }
    t.same(
      p3.quality.warnings.filter((w: { code: string }) => w.code === 'colours_unconverted'),
      [],
      'converted: no colour warning',
    );
    const cmyk = Buffer.from(P3);
    cmyk.write('CMYK', 16, 'latin1');
    const unreadable = await scored(write('cmyk-profile.jpg', jpegWithProfile(readFileSync(at('p3-bare.jpg')), cmyk)));
    t.match(
      unreadable.quality.warnings,
      [{ code: 'colours_unconverted', message: /colour profile/ }],
      'an unreadable profile: the walk says its colours are uncertain',
    );
  },
);
