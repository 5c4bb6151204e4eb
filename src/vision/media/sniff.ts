import { HEIC_BRANDS } from './heif.js';

/**
 * Recognise an upload by its first bytes, before anything is handed to
 * ffprobe, so that a renamed text file or an executable is refused at once.
 * Only the containers the product scores are recognised.
 */
export type MediaFormat = 'jpeg' | 'png' | 'webp' | 'heic' | 'mp4' | 'mov' | 'mkv' | 'webm' | 'avi';

export interface SniffedMedia {
  kind: 'image' | 'video';
  format: MediaFormat;
  mime: string;
}

/** How many leading bytes `sniffMediaType` wants to see (fewer is fine, it just knows less). */
export const SNIFF_BYTES = 4096;

const MIME: Record<MediaFormat, string> = {
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
  heic: 'image/heic',
  mp4: 'video/mp4',
  mov: 'video/quicktime',
  mkv: 'video/x-matroska',
  webm: 'video/webm',
  avi: 'video/x-msvideo',
};

function found(format: MediaFormat): SniffedMedia {
  const kind = format === 'jpeg' || format === 'png' || format === 'webp' || format === 'heic' ? 'image' : 'video';
  return { kind, format, mime: MIME[format] };
}

function ascii(b: Uint8Array, at: number, len: number): string {
  if (at + len > b.length) return '';
  let s = '';
  for (let i = at; i < at + len; i++) s += String.fromCharCode(b[i]!);
  return s;
}

function startsWith(b: Uint8Array, sig: number[], at = 0): boolean {
  if (at + sig.length > b.length) return false;
  for (let i = 0; i < sig.length; i++) if (b[at + i] !== sig[i]) return false;
  return true;
}

/** The media type the bytes start as, or null when they are none we accept. */
export function sniffMediaType(firstBytes: Uint8Array): SniffedMedia | null {
  const b = firstBytes;
  if (startsWith(b, [0xff, 0xd8, 0xff])) return found('jpeg');
  if (startsWith(b, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return found('png');
  if (ascii(b, 0, 4) === 'RIFF') {
    const form = ascii(b, 8, 4);
    if (form === 'WEBP') return found('webp');
    if (form === 'AVI ') return found('avi');
    return null;
  }
  if (startsWith(b, [0x1a, 0x45, 0xdf, 0xa3])) return matroskaFlavour(b);
  return isoBmff(b);
}

/** EBML header: the DocType element (0x42 0x82) says "webm" or "matroska". */
function matroskaFlavour(b: Uint8Array): SniffedMedia | null {
  const limit = Math.min(b.length, 64);
  for (let i = 4; i + 3 < limit; i++) {
    if (b[i] === 0x42 && b[i + 1] === 0x82) {
      const sizeByte = b[i + 2]!;
      // One-byte EBML size: high bit set, low 7 bits are the length.
      const len = sizeByte & 0x80 ? sizeByte & 0x7f : 0;
      const docType = ascii(b, i + 3, len);
      if (docType === 'webm') return found('webm');
      if (docType === 'matroska') return found('mkv');
      return null;
    }
  }
  // EBML magic without a readable DocType: treat as Matroska, ffprobe decides.
  return found('mkv');
}

const QUICKTIME_BRANDS = new Set(['qt  ']);
const MP4_BRANDS = new Set([
  'isom',
  'iso2',
  'iso4',
  'iso5',
  'iso6',
  'mp41',
  'mp42',
  'avc1',
  'dash',
  'M4V ',
  'M4VP',
  'MSNV',
  'mmp4',
  'f4v ',
  '3gp4',
  '3gp5',
  '3gp6',
  '3g2a',
  'XAVC',
]);

/**
 * ISO base media (MP4/MOV, and HEIF photos): a box of type ftyp first; old QuickTime files may
 * open with moov/mdat/wide/free. A HEIC photo's major brand is heic (or mif1 with heic among the
 * compatible ones).
 */
function isoBmff(b: Uint8Array): SniffedMedia | null {
  const type = ascii(b, 4, 4);
  if (type === 'ftyp') {
    const size = ((b[0]! << 24) >>> 0) + (b[1]! << 16) + (b[2]! << 8) + b[3]!;
    if (size < 8) return null;
    const major = ascii(b, 8, 4);
    if (HEIC_BRANDS.has(major)) return found('heic');
    if (QUICKTIME_BRANDS.has(major)) return found('mov');
    if (MP4_BRANDS.has(major)) return found('mp4');
    // Unknown major brand: look at the compatible brands.
    const end = Math.min(size, b.length);
    const compatible: string[] = [];
    for (let at = 16; at + 4 <= end; at += 4) compatible.push(ascii(b, at, 4));
    if (compatible.some((brand) => HEIC_BRANDS.has(brand))) return found('heic');
    for (const brand of compatible) {
      if (QUICKTIME_BRANDS.has(brand)) return found('mov');
      if (MP4_BRANDS.has(brand)) return found('mp4');
    }
    return null;
  }
  if (type === 'moov' || type === 'mdat' || type === 'wide' || type === 'free' || type === 'skip') return found('mov');
  return null;
}
