import { open, type FileHandle } from 'node:fs/promises';
import { inflateSync } from 'node:zlib';
import { jpegSegments } from './jpeg-segments.js';
import { conversionToSrgb, parseRgbProfile, profileFromH273, ProfileError, MAX_PROFILE_BYTES, type SrgbConversion } from '../image/icc.js';

/**
 * The colour space a photo was stored in, read from the file: an ICC profile embedded in a JPEG
 * (APP2 segments), PNG (iCCP), WebP (ICCP) or HEIF (colr box), or H.273 code points (a HEIF
 * photo's nclx, a PNG's cICP).
 * Only the headers are read, never the picture; every read is bounded, since the file is an upload.
 *
 * - `srgb`: no profile, an sRGB profile, or a grey one (no hue to get wrong): used as decoded.
 * - `convert`: another RGB space (an iPhone's Display P3, Adobe RGB): the frame is converted.
 * - `unreadable`: a profile the box cannot apply (LUT-based, CMYK, broken): used as decoded, and
 *   the walk says its colours are uncertain.
 */
export type PhotoColour = { kind: 'srgb' } | { kind: 'convert'; conversion: SrgbConversion } | { kind: 'unreadable'; reason: string };

/** Headers are near the start; a file whose profile is not found within this much is read as untagged. */
const MAX_SCAN_BYTES = 16 * 1024 * 1024;
/**
 * Segments, chunks or boxes looked at before the picture: a camera writes a few dozen. A file of
 * thousands of empty segments is not a photo's header, and each one costs a read.
 */
const MAX_STEPS = 1000;

function tooMany(steps: number, what: string): void {
  if (steps > MAX_STEPS) throw new ProfileError(`more than ${MAX_STEPS} ${what} before the picture`);
}

export async function photoColour(file: string): Promise<PhotoColour> {
  const fh = await open(file, 'r');
  try {
    const head = await readAt(fh, 0, 16);
    const { size } = await fh.stat();
    let found: Found;
    if (head[0] === 0xff && head[1] === 0xd8) found = await jpegProfile(fh, size);
    else if (ascii(head, 1, 3) === 'PNG') found = await pngProfile(fh);
    else if (ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 4) === 'WEBP') found = await webpProfile(fh);
    else if (ascii(head, 4, 4) === 'ftyp') found = await heifProfile(fh, size);
    else found = null;
    return interpret(found);
  } catch (err) {
    if (err instanceof ProfileError) return { kind: 'unreadable', reason: err.message };
    throw err;
  } finally {
    await fh.close();
  }
}

/** An ICC profile's bytes, nclx code points, a declaration of sRGB, or nothing. */
type Found = { icc: Uint8Array } | { nclx: { primaries: number; transfer: number } } | 'srgb' | null;

function interpret(found: Found): PhotoColour {
  if (found === null || found === 'srgb') return { kind: 'srgb' };
  if ('nclx' in found) {
    const conversion = conversionToSrgb(profileFromH273(found.nclx.primaries, found.nclx.transfer));
    return conversion ? { kind: 'convert', conversion } : { kind: 'srgb' };
  }
  const icc = found.icc;
  // A grey photo has no hue to get wrong; read as it is.
  if (icc.length >= 20 && ascii(icc, 16, 4) === 'GRAY') return { kind: 'srgb' };
  const conversion = conversionToSrgb(parseRgbProfile(icc));
  return conversion ? { kind: 'convert', conversion } : { kind: 'srgb' };
}

async function readAt(fh: FileHandle, position: number, length: number): Promise<Uint8Array> {
  const buf = new Uint8Array(length);
  const { bytesRead } = await fh.read(buf, 0, length, position);
  return buf.subarray(0, bytesRead);
}

function ascii(b: Uint8Array, at: number, n: number): string {
  return String.fromCharCode(...b.subarray(at, at + n));
}

const u16 = (b: Uint8Array, at: number) => (b[at]! << 8) | b[at + 1]!;
const u32 = (b: Uint8Array, at: number) => ((b[at]! << 24) >>> 0) + (b[at + 1]! << 16) + (b[at + 2]! << 8) + b[at + 3]!;

/** A JPEG's header is read this far first: its profile sits in the first few kB. */
const JPEG_HEAD_BYTES = 1024 * 1024;

/** JPEG: segments up to the start of the scan; the profile may be split over numbered APP2 segments. */
async function jpegProfile(fh: FileHandle, size: number): Promise<Found> {
  // A header longer than the first read (a large XMP, say) is read again, up to the scan bound.
  for (const limit of [JPEG_HEAD_BYTES, MAX_SCAN_BYTES]) {
    const bytes = await readAt(fh, 0, Math.min(size, limit));
    const found = jpegProfileIn(bytes);
    if (found !== 'cut') return found;
    if (bytes.length === size) break;
  }
  return null;
}

/** The profile in a JPEG's first bytes, or 'cut' when they end before its segments do. */
function jpegProfileIn(bytes: Uint8Array): Found | 'cut' {
  const chunks = new Map<number, Uint8Array>();
  let expected = 0,
    total = 0,
    steps = 0;
  const walk = jpegSegments(bytes);
  let step = walk.next();
  for (; !step.done; step = walk.next()) {
    tooMany(++steps, 'JPEG segments');
    const { marker, length, body } = step.value;
    if (marker !== 0xe2 || length < 14) continue;
    if (body.length < length) return 'cut';
    if (ascii(body, 0, 12) !== 'ICC_PROFILE\0') continue;
    const seq = body[12]!,
      count = body[13]!;
    if (seq < 1 || count < 1 || seq > count || (expected && count !== expected))
      throw new ProfileError('JPEG colour profile segments are numbered inconsistently');
    expected = count;
    total += length - 14;
    if (total > MAX_PROFILE_BYTES) throw new ProfileError('JPEG colour profile larger than any camera writes');
    if (chunks.has(seq)) throw new ProfileError('JPEG colour profile segment given twice');
    chunks.set(seq, body.subarray(14));
  }
  if (step.value === 'bad-length') throw new ProfileError('JPEG segment with a length under 2');
  if (step.value === 'cut' && chunks.size < expected) return 'cut';
  if (!expected) return step.value === 'cut' ? 'cut' : null;
  if (chunks.size !== expected) throw new ProfileError(`JPEG colour profile in ${expected} segments, ${chunks.size} found`);
  return { icc: concat(Array.from({ length: expected }, (_, i) => chunks.get(i + 1)!)) };
}

/**
 * PNG: chunks up to the first image data. The third edition of the PNG standard ranks them:
 * cICP (H.273 code points, which ffmpeg 6.1 and later write for a tagged frame) over iCCP (a
 * compressed ICC profile) over sRGB, wherever each sits before the data.
 */
async function pngProfile(fh: FileHandle): Promise<Found> {
  let at = 8,
    steps = 0;
  let iccp: { at: number; length: number } | null = null,
    srgb = false;
  while (at < MAX_SCAN_BYTES) {
    tooMany(++steps, 'PNG chunks');
    const h = await readAt(fh, at, 8);
    if (h.length < 8) break;
    const length = u32(h, 0),
      type = ascii(h, 4, 4);
    if (type === 'IDAT' || type === 'IEND') break;
    if (type === 'cICP') return pngCodePoints(await readAt(fh, at + 8, Math.min(length, 8)), length);
    if (type === 'sRGB') srgb = true;
    if (type === 'iCCP' && !iccp) {
      if (length > MAX_PROFILE_BYTES) throw new ProfileError('PNG colour profile larger than any camera writes');
      iccp = { at: at + 8, length };
    }
    at += 12 + length;
  }
  if (iccp) return pngIcc(await readAt(fh, iccp.at, iccp.length));
  return srgb ? 'srgb' : null;
}

function pngIcc(data: Uint8Array): Found {
  const nul = data.indexOf(0);
  if (nul < 1 || nul > 79 || data[nul + 1] !== 0) throw new ProfileError('PNG colour profile chunk is malformed');
  try {
    // Bounded: a small chunk that inflates to gigabytes is refused, not unpacked.
    return { icc: new Uint8Array(inflateSync(data.subarray(nul + 2), { maxOutputLength: MAX_PROFILE_BYTES })) };
  } catch (err) {
    throw new ProfileError(`PNG colour profile cannot be unpacked: ${(err as Error).message}`);
  }
}

/** cICP: primaries, transfer, matrix (0: PNG samples are RGB) and the full-range flag, a byte each. */
function pngCodePoints(data: Uint8Array, length: number): Found {
  if (length !== 4 || data.length < 4) throw new ProfileError(`PNG cICP chunk of ${length} bytes, not 4`);
  if (data[2] !== 0) throw new ProfileError(`PNG cICP chunk with matrix coefficients ${data[2]}: PNG samples are RGB`);
  // Narrow-range samples (16–235) would need stretching first; no camera writes a PNG that way.
  if (data[3] !== 1) throw new ProfileError('PNG cICP chunk declares narrow-range samples');
  return { nclx: { primaries: data[0]!, transfer: data[1]! } };
}

/** WebP: RIFF chunks (little-endian sizes, padded to even) up to the image data. */
async function webpProfile(fh: FileHandle): Promise<Found> {
  let at = 12,
    steps = 0;
  while (at < MAX_SCAN_BYTES) {
    tooMany(++steps, 'WebP chunks');
    const h = await readAt(fh, at, 8);
    if (h.length < 8) break;
    const type = ascii(h, 0, 4),
      size = (h[4]! | (h[5]! << 8) | (h[6]! << 16)) + h[7]! * 0x1000000;
    if (type === 'ICCP') {
      if (size > MAX_PROFILE_BYTES) throw new ProfileError('WebP colour profile larger than any camera writes');
      return { icc: await readAt(fh, at + 8, size) };
    }
    if (type === 'VP8 ' || type === 'VP8L' || type === 'ANIM') break;
    at += 8 + size + (size & 1);
  }
  return null;
}

interface Box {
  type: string;
  /** Content after the header. */
  body: Uint8Array;
}

/**
 * A box header at `at`: its type, whole size and header length (16 with a 64-bit size). Size 0
 * means "to the end of the parent", `rest` bytes from `at`. Null when the header itself is cut.
 */
function boxHeader(b: Uint8Array, at: number, rest: number): { type: string; size: number; header: number } | null {
  if (at + 8 > b.length) return null;
  const type = ascii(b, at + 4, 4);
  const size = u32(b, at);
  if (size === 0) return { type, size: rest, header: 8 };
  if (size !== 1) return { type, size, header: 8 };
  if (at + 16 > b.length) return null;
  return { type, size: u32(b, at + 8) * 0x100000000 + u32(b, at + 12), header: 16 };
}

function boxes(b: Uint8Array): Box[] {
  const out: Box[] = [];
  for (let at = 0, h = boxHeader(b, 0, b.length); h; at += h.size, h = boxHeader(b, at, b.length - at)) {
    if (h.size < h.header || at + h.size > b.length) throw new ProfileError(`HEIF box ${h.type} runs past its parent`);
    out.push({ type: h.type, body: b.subarray(at + h.header, at + h.size) });
  }
  return out;
}

/** HEIF: the meta box's colour property of the primary image (or the one colour every image shares). */
async function heifProfile(fh: FileHandle, fileSize: number): Promise<Found> {
  let at = 0,
    steps = 0;
  let meta: Uint8Array | null = null;
  while (at < MAX_SCAN_BYTES) {
    tooMany(++steps, 'HEIF boxes');
    const h = boxHeader(await readAt(fh, at, 16), 0, fileSize - at);
    if (!h || h.size < h.header) break;
    if (h.type === 'meta') {
      if (h.size < h.header + 4 || h.size > MAX_PROFILE_BYTES * 2) throw new ProfileError(`HEIF meta box of ${h.size} bytes`);
      meta = await readAt(fh, at + h.header + 4, h.size - h.header - 4); // a full box: version and flags first
      break;
    }
    at += h.size;
  }
  if (!meta) return null;
  const children = boxes(meta);
  const pitm = children.find((x) => x.type === 'pitm')?.body;
  const primary = pitm ? (pitm[0] === 0 ? u16(pitm, 4) : u32(pitm, 4)) : -1;
  const iprp = children.find((x) => x.type === 'iprp');
  if (!iprp) return null;
  const inner = boxes(iprp.body);
  const properties = boxes(inner.find((x) => x.type === 'ipco')?.body ?? new Uint8Array(0));
  const colours = properties.map((p, i) => (p.type === 'colr' ? i : -1)).filter((i) => i >= 0);
  if (colours.length === 0) return null;
  let chosen = -1;
  const ipma = inner.find((x) => x.type === 'ipma')?.body;
  if (ipma && primary >= 0) {
    const version = ipma[0]!,
      wide = (ipma[3]! & 1) === 1;
    let p = 8;
    for (let n = u32(ipma, 4); n > 0 && p < ipma.length; n--) {
      const item = version < 1 ? u16(ipma, p) : u32(ipma, p);
      p += version < 1 ? 2 : 4;
      const count = ipma[p++]!;
      for (let k = 0; k < count; k++) {
        const index = wide ? u16(ipma, p) & 0x7fff : ipma[p]! & 0x7f;
        p += wide ? 2 : 1;
        if (item === primary && index >= 1 && properties[index - 1]?.type === 'colr') chosen = index - 1;
      }
    }
  }
  if (chosen < 0) {
    // An iPhone's grid may carry the colour on its tiles only: taken when all of them agree.
    const first = properties[colours[0]!]!.body;
    if (!colours.every((i) => equal(properties[i]!.body, first)))
      throw new ProfileError('HEIF images carry different colour profiles, none on the primary image');
    chosen = colours[0]!;
  }
  const colr = properties[chosen]!.body;
  const kind = ascii(colr, 0, 4);
  if (kind === 'nclx') {
    if (colr.length < 11) throw new ProfileError('HEIF nclx colour box is cut short');
    return { nclx: { primaries: u16(colr, 4), transfer: u16(colr, 6) } };
  }
  if (kind === 'prof' || kind === 'rICC') return { icc: colr.subarray(4) };
  throw new ProfileError(`HEIF colour box of type ${kind.trim()}`);
}

function equal(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((s, p) => s + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
