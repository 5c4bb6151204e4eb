/** A marker segment of a JPEG's header (APPn, DQT, SOF…). */
export interface JpegSegment {
  marker: number;
  /** Payload length the segment declares (its length field less the field itself). */
  length: number;
  /** The payload; shorter than `length` when the bytes given end inside it. */
  body: Uint8Array;
}

/**
 * Why the walk ended: the start of the picture data (or end of image), the end of the bytes given,
 * a byte where a marker should be, or a segment whose length field is under 2.
 */
export type JpegWalkEnd = 'scan' | 'cut' | 'not-a-marker' | 'bad-length';

/**
 * The marker segments of a JPEG from SOI to the start of scan, read from the file's first bytes.
 * Hostile input ends the walk with its reason; nothing is read outside `bytes`.
 */
export function* jpegSegments(bytes: Uint8Array): Generator<JpegSegment, JpegWalkEnd> {
  if (bytes.length < 2 || bytes[0] !== 0xff || bytes[1] !== 0xd8) return 'not-a-marker';
  let at = 2;
  while (at + 2 <= bytes.length) {
    if (bytes[at] !== 0xff) return 'not-a-marker';
    const marker = bytes[at + 1]!;
    if (marker === 0xff) {
      at++; // fill byte
      continue;
    }
    if (marker === 0xda || marker === 0xd9) return 'scan';
    // Markers that stand alone, without a length.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2;
      continue;
    }
    if (at + 4 > bytes.length) break;
    const length = (bytes[at + 2]! << 8) | bytes[at + 3]!;
    if (length < 2) return 'bad-length';
    yield { marker, length: length - 2, body: bytes.subarray(at + 4, Math.min(bytes.length, at + 2 + length)) };
    at += 2 + length;
  }
  return 'cut';
}
