// ICC profiles and photos that carry them, as phones and cameras write them: a Display P3
// profile built from the values Apple's profile publishes, and the profile embedded in a JPEG
// (APP2 segments), a PNG (iCCP) or a WebP (VP8X + ICCP) around real encoded pictures.
import { existsSync } from 'node:fs';
import { crc32, deflateSync } from 'node:zlib';

/** Real profiles from Debian's colord-data and icc-profiles-free (scripts/setup.mjs installs them for the tests). */
export const SYSTEM_PROFILES = {
  adobeRgbV4: '/usr/share/color/icc/colord/AdobeRGB1998.icc',
  srgbV4: '/usr/share/color/icc/colord/sRGB.icc',
  srgbV2: '/usr/share/color/icc/sRGB.icc',
  adobeRgbV2: '/usr/share/color/icc/compatibleWithAdobeRGB1998.icc',
  grey: '/usr/share/color/icc/Gray.icc',
};
export const systemProfilesMissing = Object.values(SYSTEM_PROFILES).some((f) => !existsSync(f))
  ? 'the Debian packages colord-data and icc-profiles-free are not installed (apt-get install colord-data icc-profiles-free)'
  : false;

/** Display P3's colorants in the ICC connection space (D50), as Apple's "Display P3" profile lists them. */
export const DISPLAY_P3_D50 = [
  [0.515121, 0.241196, -0.001053],
  [0.291977, 0.692245, 0.041885],
  [0.157104, 0.066574, 0.784073],
] as const;

const s15 = (v: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(Math.round(v * 65536));
  return b;
};
const tag = (type: string, body: Buffer) => {
  const b = Buffer.concat([Buffer.from(type, 'latin1'), Buffer.alloc(4), body]);
  return Buffer.concat([b, Buffer.alloc((4 - (b.length % 4)) % 4)]);
};
const xyz = (v: readonly number[]) => tag('XYZ ', Buffer.concat(v.map(s15)));

/** A v4 matrix/TRC profile: three colorants (D50) and one curve for all channels (ICC type 3 parametric, or a gamma). */
export function rgbProfile(colorants: readonly (readonly number[])[], curve: { gamma: number } | 'srgb' = 'srgb'): Buffer {
  const trc =
    curve === 'srgb'
      ? tag('para', Buffer.concat([Buffer.from([0, 3, 0, 0]), ...[2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045].map(s15)]))
      : tag(
          'curv',
          Buffer.concat([Buffer.from([0, 0, 0, 1]), Buffer.from([Math.floor(curve.gamma), Math.round((curve.gamma % 1) * 256), 0, 0])]),
        );
  const tags: [string, Buffer][] = [
    ['wtpt', xyz([0.9642, 1, 0.8249])],
    ['rXYZ', xyz(colorants[0]!)],
    ['gXYZ', xyz(colorants[1]!)],
    ['bXYZ', xyz(colorants[2]!)],
    ['rTRC', trc],
    ['gTRC', trc],
    ['bTRC', trc],
  ];
  const table = Buffer.alloc(4 + tags.length * 12);
  table.writeUInt32BE(tags.length, 0);
  let offset = 128 + table.length;
  const bodies: Buffer[] = [];
  tags.forEach(([sig, body], i) => {
    table.write(sig, 4 + i * 12, 'latin1');
    table.writeUInt32BE(offset, 8 + i * 12);
    table.writeUInt32BE(body.length, 12 + i * 12);
    bodies.push(body);
    offset += body.length;
  });
  const header = Buffer.alloc(128);
  header.writeUInt32BE(offset, 0);
  header.writeUInt32BE(0x04300000, 8);
  header.write('mntrRGB XYZ ', 12, 'latin1');
  header.write('acsp', 36, 'latin1');
  s15(0.9642).copy(header, 68);
  s15(1).copy(header, 72);
  s15(0.8249).copy(header, 76);
  return Buffer.concat([header, table, ...bodies]);
}

export const displayP3Profile = () => rgbProfile(DISPLAY_P3_D50);

/** The JPEG with the profile in APP2 segments right after SOI, split into `segments` pieces as large files are. */
export function jpegWithProfile(jpeg: Buffer, icc: Uint8Array, segments = 1): Buffer {
  if (jpeg[0] !== 0xff || jpeg[1] !== 0xd8) throw new Error('not a JPEG');
  const size = Math.ceil(icc.length / segments);
  const parts: Buffer[] = [];
  for (let i = 0; i < segments; i++) {
    const chunk = icc.subarray(i * size, (i + 1) * size);
    const head = Buffer.alloc(4 + 14);
    head.writeUInt16BE(0xffe2, 0);
    head.writeUInt16BE(2 + 14 + chunk.length, 2);
    head.write('ICC_PROFILE\0', 4, 'latin1');
    head[16] = i + 1;
    head[17] = segments;
    parts.push(head, Buffer.from(chunk));
  }
  return Buffer.concat([jpeg.subarray(0, 2), ...parts, jpeg.subarray(2)]);
}

/** A PNG chunk with its CRC. */
export function pngChunk(type: string, data: Buffer): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt32BE(data.length, 0);
  head.write(type, 4, 'latin1');
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(Buffer.concat([head.subarray(4), data])));
  return Buffer.concat([head, data, crc]);
}

/** The PNG with `chunk` after IHDR (the first chunk, 33 bytes in). */
export function pngWithChunk(png: Buffer, chunk: Buffer): Buffer {
  if (png.toString('latin1', 12, 16) !== 'IHDR') throw new Error('not a PNG');
  return Buffer.concat([png.subarray(0, 33), chunk, png.subarray(33)]);
}

export function pngWithProfile(png: Buffer, icc: Uint8Array): Buffer {
  return pngWithChunk(png, pngChunk('iCCP', Buffer.concat([Buffer.from('ICC profile\0\0', 'latin1'), deflateSync(icc)])));
}

/** A simple (VP8) WebP made extended: a VP8X header that announces a profile, the ICCP chunk, then the picture. */
export function webpWithProfile(webp: Buffer, icc: Uint8Array, width: number, height: number): Buffer {
  if (webp.toString('latin1', 12, 16) !== 'VP8 ') throw new Error('not a simple lossy WebP');
  const vp8x = Buffer.alloc(18);
  vp8x.write('VP8X', 0, 'latin1');
  vp8x.writeUInt32LE(10, 4);
  vp8x[8] = 0x20; // ICC profile present
  vp8x.writeUIntLE(width - 1, 12, 3);
  vp8x.writeUIntLE(height - 1, 15, 3);
  const iccp = Buffer.alloc(8);
  iccp.write('ICCP', 0, 'latin1');
  iccp.writeUInt32LE(icc.length, 4);
  const pad = Buffer.alloc(icc.length & 1);
  const body = Buffer.concat([Buffer.from('WEBP', 'latin1'), vp8x, iccp, Buffer.from(icc), pad, webp.subarray(12)]);
  const riff = Buffer.alloc(8);
  riff.write('RIFF', 0, 'latin1');
  riff.writeUInt32LE(body.length, 4);
  return Buffer.concat([riff, body]);
}
