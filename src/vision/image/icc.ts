import type { RgbImage } from '../types.js';

/**
 * RGB colour profiles of photos, and their conversion to sRGB.
 *
 * An iPhone stores its photos in Display P3 (wider primaries than sRGB, the sRGB tone curve),
 * with the profile embedded. Read as sRGB such a photo is paler: on the labelled tomato photos
 * re-expressed in P3 the detector found 14 % fewer red fruit. So a photo's embedded profile is
 * read and its pixels are brought to sRGB before detection.
 *
 * Only matrix/TRC profiles (three colorants and three tone curves, ICC v2 or v4), which is what
 * cameras and phones embed for RGB photos, are applied; a profile that is not one (a LUT-based
 * or a CMYK profile, a broken one) is reported so that the walk can say its colours are uncertain.
 * The ICC connection space is XYZ relative to D50, so both profiles' colorants are D50-adapted and
 * the conversion is one matrix: sRGB's colorants inverted, times the photo profile's.
 */

/** 3 × 3, row-major: rows X, Y, Z; columns R, G, B. */
export type Matrix3 = readonly [number, number, number, number, number, number, number, number, number];

export type ToneCurve =
  | { kind: 'gamma'; gamma: number }
  | { kind: 'table'; table: Float64Array }
  /** ICC parametric curve, function types 0–4 (ICC.1:2010 table 68); params g, a, b, c, d, e, f. */
  | { kind: 'parametric'; type: number; params: number[] };

export interface RgbProfile {
  colorants: Matrix3;
  curves: readonly [ToneCurve, ToneCurve, ToneCurve];
}

export class ProfileError extends Error {
  override name = 'ProfileError';
}

/** sRGB's colorants in the ICC connection space (Bradford-adapted to D50), as sRGB profiles carry them. */
export const SRGB_COLORANTS_D50: Matrix3 = [0.436074, 0.385065, 0.14308, 0.222504, 0.716879, 0.060617, 0.013932, 0.097105, 0.714173];

/** The sRGB tone curve as an ICC type 3 parametric curve. */
export const SRGB_CURVE: ToneCurve = { kind: 'parametric', type: 3, params: [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045] };

/** A profile is a few kB (Apple's Display P3: 536 bytes); anything near this is not a camera's. */
export const MAX_PROFILE_BYTES = 4 * 1024 * 1024;
const MAX_TAGS = 200;
const MAX_TABLE = 65536;

/** Reads a matrix/TRC RGB profile; anything else is a ProfileError saying why. */
export function parseRgbProfile(data: Uint8Array): RgbProfile {
  if (data.length < 132) throw new ProfileError('colour profile shorter than its header');
  if (data.length > MAX_PROFILE_BYTES) throw new ProfileError(`colour profile of ${data.length} bytes`);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const text = (at: number) => String.fromCharCode(data[at]!, data[at + 1]!, data[at + 2]!, data[at + 3]!);
  const declared = view.getUint32(0);
  if (text(36) !== 'acsp') throw new ProfileError('not an ICC profile (no acsp signature)');
  if (declared > data.length || declared < 132) throw new ProfileError(`ICC profile declares ${declared} bytes but holds ${data.length}`);
  const space = text(16);
  if (space !== 'RGB ') throw new ProfileError(`ICC profile for ${space.trim() || 'an unknown'} colour space, not RGB`);
  if (text(20) !== 'XYZ ') throw new ProfileError('ICC profile with a Lab connection space (a LUT-based profile)');
  const count = view.getUint32(128);
  if (count > MAX_TAGS || 132 + count * 12 > declared) throw new ProfileError(`ICC profile with ${count} tags`);
  const tags = new Map<string, Uint8Array>();
  for (let i = 0; i < count; i++) {
    const at = 132 + i * 12;
    const offset = view.getUint32(at + 4),
      size = view.getUint32(at + 8);
    if (offset + size > declared || size < 8) throw new ProfileError(`ICC tag ${text(at).trim()} lies outside the profile`);
    tags.set(text(at), data.subarray(offset, offset + size));
  }
  const need = (sig: string) => {
    const t = tags.get(sig);
    if (!t) throw new ProfileError(`ICC profile without ${sig.trim()} (not a matrix/TRC profile)`);
    return t;
  };
  const xyz = ['rXYZ', 'gXYZ', 'bXYZ'].map((sig) => readXyz(need(sig), sig));
  const colorants: Matrix3 = [
    xyz[0]![0]!,
    xyz[1]![0]!,
    xyz[2]![0]!,
    xyz[0]![1]!,
    xyz[1]![1]!,
    xyz[2]![1]!,
    xyz[0]![2]!,
    xyz[1]![2]!,
    xyz[2]![2]!,
  ];
  const curves = ['rTRC', 'gTRC', 'bTRC'].map((sig) => readCurve(need(sig), sig)) as [ToneCurve, ToneCurve, ToneCurve];
  if (Math.abs(det(colorants)) < 1e-6) throw new ProfileError('ICC colorants do not span a colour space');
  return { colorants, curves };
}

function readXyz(tag: Uint8Array, sig: string): number[] {
  const v = new DataView(tag.buffer, tag.byteOffset, tag.byteLength);
  if (tag.length < 20 || String.fromCharCode(...tag.subarray(0, 4)) !== 'XYZ ') throw new ProfileError(`ICC ${sig} is not an XYZ value`);
  return [0, 1, 2].map((k) => v.getInt32(8 + 4 * k) / 65536);
}

const PARAMETRIC_COUNTS = [1, 3, 4, 5, 7];

function readCurve(tag: Uint8Array, sig: string): ToneCurve {
  const v = new DataView(tag.buffer, tag.byteOffset, tag.byteLength);
  const type = String.fromCharCode(...tag.subarray(0, 4));
  if (type === 'curv') {
    if (tag.length < 12) throw new ProfileError(`ICC ${sig} is cut short`);
    const n = v.getUint32(8);
    if (n === 0) return { kind: 'gamma', gamma: 1 };
    if (n === 1) {
      if (tag.length < 14) throw new ProfileError(`ICC ${sig} is cut short`);
      return { kind: 'gamma', gamma: v.getUint16(12) / 256 };
    }
    if (n > MAX_TABLE || tag.length < 12 + 2 * n) throw new ProfileError(`ICC ${sig} table of ${n} entries does not fit`);
    const table = new Float64Array(n);
    for (let i = 0; i < n; i++) table[i] = v.getUint16(12 + 2 * i) / 65535;
    return { kind: 'table', table };
  }
  if (type === 'para') {
    const fn = tag.length >= 12 ? v.getUint16(8) : -1;
    const k = PARAMETRIC_COUNTS[fn];
    if (k === undefined || tag.length < 12 + 4 * k) throw new ProfileError(`ICC ${sig} parametric curve of an unknown kind`);
    return { kind: 'parametric', type: fn, params: Array.from({ length: k }, (_, i) => v.getInt32(12 + 4 * i) / 65536) };
  }
  throw new ProfileError(`ICC ${sig} of type ${type.trim()} (not a tone curve)`);
}

/** Encoded value (0–1) to linear light (0–1) by an ICC tone curve. */
export function evalCurve(c: ToneCurve, x: number): number {
  if (c.kind === 'gamma') return Math.pow(x, c.gamma);
  if (c.kind === 'table') {
    const t = c.table;
    if (t.length === 1) return t[0]!;
    const p = x * (t.length - 1),
      i = Math.min(t.length - 2, Math.floor(p)),
      f = p - i;
    return t[i]! + (t[i + 1]! - t[i]!) * f;
  }
  const [g, a = 1, b = 0, cc = 0, d = 0, e = 0, f = 0] = c.params;
  const pow = (u: number) => (u > 0 ? Math.pow(u, g!) : 0);
  switch (c.type) {
    case 0:
      return pow(x);
    case 1:
      return x >= -b / a ? pow(a * x + b) : 0;
    case 2:
      return x >= -b / a ? pow(a * x + b) + cc : cc;
    case 3:
      return x >= d ? pow(a * x + b) : cc * x;
    default:
      return x >= d ? pow(a * x + b) + e : cc * x + f;
  }
}

/** What a conversion to sRGB needs: per channel, 8-bit code to linear light; and the matrix to linear sRGB. */
export interface SrgbConversion {
  toLinear: readonly [Float32Array, Float32Array, Float32Array];
  matrix: Matrix3;
}

/**
 * The conversion from a profile's pixels to sRGB, or null when the profile is sRGB's own (within
 * half an 8-bit level on the curves and 0.002 on the colorants, so the round trip would change nothing).
 */
export function conversionToSrgb(profile: RgbProfile): SrgbConversion | null {
  const toLinear = profile.curves.map((c) => {
    const lut = new Float32Array(256);
    for (let i = 0; i < 256; i++) lut[i] = Math.min(1, Math.max(0, evalCurve(c, i / 255)));
    return lut;
  }) as unknown as [Float32Array, Float32Array, Float32Array];
  // sRGB's own curve: encoding the linear value gives the code back.
  const sameCurves = toLinear.every((lut) => lut.every((v, i) => Math.abs(encodeSrgb(v) - i) <= 0.5));
  const sameColorants = profile.colorants.every((v, i) => Math.abs(v - SRGB_COLORANTS_D50[i]!) <= 0.002);
  if (sameCurves && sameColorants) return null;
  return { toLinear, matrix: multiply(invert(SRGB_COLORANTS_D50), profile.colorants) };
}

function encodeSrgb(linear: number): number {
  const c = Math.min(1, Math.max(0, linear));
  return 255 * (c <= 0.0031308 ? 12.92 * c : 1.055 * Math.pow(c, 1 / 2.4) - 0.055);
}

const ENCODE_STEPS = 16384;
let encodeTable: Uint8Array | null = null;
/** Linear light to 8-bit sRGB through a table fine enough to be exact to a level in the shadows. */
function srgbEncodeTable(): Uint8Array {
  if (!encodeTable) {
    encodeTable = new Uint8Array(ENCODE_STEPS + 1);
    for (let i = 0; i <= ENCODE_STEPS; i++) encodeTable[i] = Math.round(encodeSrgb(i / ENCODE_STEPS));
  }
  return encodeTable;
}

/** The image's pixels in sRGB; colours outside sRGB's gamut are clipped channel by channel. */
export function convertToSrgb(image: RgbImage, conversion: SrgbConversion): RgbImage {
  const [lr, lg, lb] = conversion.toLinear;
  const m = conversion.matrix;
  const table = srgbEncodeTable();
  const src = image.data,
    out = new Uint8Array(src.length);
  const [m0, m1, m2, m3, m4, m5, m6, m7, m8] = m;
  const top = ENCODE_STEPS;
  for (let i = 0; i < src.length; i += 3) {
    const r = lr[src[i]!]!,
      g = lg[src[i + 1]!]!,
      b = lb[src[i + 2]!]!;
    // Scaled to the table and rounded; out-of-range indices clip to its ends.
    const x = (m0 * r + m1 * g + m2 * b) * top + 0.5,
      y = (m3 * r + m4 * g + m5 * b) * top + 0.5,
      z = (m6 * r + m7 * g + m8 * b) * top + 0.5;
    out[i] = table[x <= 0 ? 0 : x >= top ? top : x | 0]!;
    out[i + 1] = table[y <= 0 ? 0 : y >= top ? top : y | 0]!;
    out[i + 2] = table[z <= 0 ? 0 : z >= top ? top : z | 0]!;
  }
  return { width: image.width, height: image.height, data: out };
}

function det(m: Matrix3): number {
  return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6]) + m[2] * (m[3] * m[7] - m[4] * m[6]);
}

export function invert(m: Matrix3): Matrix3 {
  const d = det(m);
  return [
    (m[4] * m[8] - m[5] * m[7]) / d,
    (m[2] * m[7] - m[1] * m[8]) / d,
    (m[1] * m[5] - m[2] * m[4]) / d,
    (m[5] * m[6] - m[3] * m[8]) / d,
    (m[0] * m[8] - m[2] * m[6]) / d,
    (m[2] * m[3] - m[0] * m[5]) / d,
    (m[3] * m[7] - m[4] * m[6]) / d,
    (m[1] * m[6] - m[0] * m[7]) / d,
    (m[0] * m[4] - m[1] * m[3]) / d,
  ];
}

export function multiply(a: Matrix3, b: Matrix3): Matrix3 {
  const r = new Array<number>(9);
  for (let i = 0; i < 3; i++)
    for (let j = 0; j < 3; j++) r[i * 3 + j] = a[i * 3]! * b[j]! + a[i * 3 + 1]! * b[3 + j]! + a[i * 3 + 2]! * b[6 + j]!;
  return r as unknown as Matrix3;
}

/** Chromaticities (x, y) of the primaries and white of a colour space, as H.273 numbers them. */
const H273_PRIMARIES: Record<number, { r: [number, number]; g: [number, number]; b: [number, number]; w: [number, number] }> = {
  1: { r: [0.64, 0.33], g: [0.3, 0.6], b: [0.15, 0.06], w: [0.3127, 0.329] }, // BT.709, sRGB
  9: { r: [0.708, 0.292], g: [0.17, 0.797], b: [0.131, 0.046], w: [0.3127, 0.329] }, // BT.2020
  12: { r: [0.68, 0.32], g: [0.265, 0.69], b: [0.15, 0.06], w: [0.3127, 0.329] }, // Display P3 (SMPTE EG 432-1)
};

/** Bradford, for adapting a D65 space to the ICC connection space's D50. */
const BRADFORD: Matrix3 = [0.8951, 0.2664, -0.1614, -0.7502, 1.7135, 0.0367, 0.0389, -0.0685, 1.0296];
const D50: [number, number, number] = [0.9642, 1, 0.8249];

/**
 * A profile from a HEIF photo's nclx colour box (H.273 code points) instead of an ICC profile:
 * primaries BT.709, BT.2020 or Display P3 with the sRGB or BT.709 tone curve. Anything else
 * (an HDR transfer, other primaries) is a ProfileError.
 */
export function profileFromH273(primaries: number, transfer: number): RgbProfile {
  const p = H273_PRIMARIES[primaries === 2 ? 1 : primaries];
  if (!p) throw new ProfileError(`colour primaries ${primaries} (H.273) are not read`);
  // 13 is sRGB's curve; 1, 6, 14 and 15 are BT.709's camera curve, which phones pair with a display read as sRGB; 2 is unspecified.
  if (![1, 2, 6, 13, 14, 15].includes(transfer)) throw new ProfileError(`transfer characteristics ${transfer} (H.273) are not read`);
  const xyz = (xy: [number, number]) => [xy[0] / xy[1], 1, (1 - xy[0] - xy[1]) / xy[1]] as const;
  const [r, g, b, w] = [xyz(p.r), xyz(p.g), xyz(p.b), xyz(p.w)];
  const base: Matrix3 = [r[0], g[0], b[0], r[1], g[1], b[1], r[2], g[2], b[2]];
  const s = mulVec(invert(base), w);
  const toXyz: Matrix3 = [
    base[0] * s[0],
    base[1] * s[1],
    base[2] * s[2],
    base[3] * s[0],
    base[4] * s[1],
    base[5] * s[2],
    base[6] * s[0],
    base[7] * s[1],
    base[8] * s[2],
  ];
  const cw = mulVec(BRADFORD, w),
    cd = mulVec(BRADFORD, D50);
  const scale: Matrix3 = [cd[0] / cw[0], 0, 0, 0, cd[1] / cw[1], 0, 0, 0, cd[2] / cw[2]];
  const adapt = multiply(invert(BRADFORD), multiply(scale, BRADFORD));
  return { colorants: multiply(adapt, toXyz), curves: [SRGB_CURVE, SRGB_CURVE, SRGB_CURVE] };
}

function mulVec(m: Matrix3, v: readonly number[]): [number, number, number] {
  return [
    m[0] * v[0]! + m[1] * v[1]! + m[2] * v[2]!,
    m[3] * v[0]! + m[4] * v[1]! + m[5] * v[2]!,
    m[6] * v[0]! + m[7] * v[1]! + m[8] * v[2]!,
  ];
}
