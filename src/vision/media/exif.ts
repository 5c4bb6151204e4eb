import { jpegSegments } from './jpeg-segments.js';

/**
 * The EXIF orientation tag of a JPEG (1–8), read from its first bytes. Phone
 * photos are stored sideways with this tag; ffmpeg turns them upright when
 * decoding but ffprobe does not report it, so the probe reads it here to
 * know the displayed size. Hostile input gives null, never an exception.
 */
export function readJpegOrientation(bytes: Uint8Array): number | null {
  for (const { marker, body } of jpegSegments(bytes)) {
    if (marker === 0xe1 && body.length >= 14 && ascii(body, 0, 6) === 'Exif\0\0') {
      const o = orientationInTiff(body.subarray(6));
      if (o !== null) return o;
    }
  }
  return null;
}

function ascii(b: Uint8Array, at: number, n: number): string {
  let s = '';
  for (let i = at; i < at + n && i < b.length; i++) s += String.fromCharCode(b[i]!);
  return s;
}

function orientationInTiff(t: Uint8Array): number | null {
  if (t.length < 8) return null;
  const little = t[0] === 0x49 && t[1] === 0x49;
  const big = t[0] === 0x4d && t[1] === 0x4d;
  if (!little && !big) return null;
  const u16 = (at: number) => (at + 2 > t.length ? -1 : little ? t[at]! | (t[at + 1]! << 8) : (t[at]! << 8) | t[at + 1]!);
  const u32 = (at: number) =>
    at + 4 > t.length
      ? -1
      : little
        ? (t[at]! | (t[at + 1]! << 8) | (t[at + 2]! << 16) | (t[at + 3]! << 24)) >>> 0
        : ((t[at]! << 24) | (t[at + 1]! << 16) | (t[at + 2]! << 8) | t[at + 3]!) >>> 0;
  if (u16(2) !== 42) return null;
  const ifd = u32(4);
  if (ifd < 8 || ifd + 2 > t.length) return null;
  const count = u16(ifd);
  for (let k = 0; k < count && k < 512; k++) {
    const e = ifd + 2 + k * 12;
    if (e + 12 > t.length) return null;
    if (u16(e) === 0x0112 && u16(e + 2) === 3) {
      const v = u16(e + 8);
      return v >= 1 && v <= 8 ? v : null;
    }
  }
  return null;
}

/** Clockwise turn an orientation value implies (mirrored variants share their turn). */
export function orientationRotation(o: number | null): 0 | 90 | 180 | 270 {
  switch (o) {
    case 3:
    case 4:
      return 180;
    case 5:
    case 6:
      return 90;
    case 7:
    case 8:
      return 270;
    default:
      return 0;
  }
}
