// Edits a real HEIF file's boxes (ISO/IEC 23008-12) to make the variants phones and attackers send:
// a rotation property, as an iPhone writes for a portrait photo, a colour property (Display P3), or a
// declared size far larger than the picture. heif-enc writes none of them.
import { children, find, readBoxes, type Box } from './iso-boxes.js';

function layout(b: Buffer) {
  const top = readBoxes(b, 0, b.length);
  const meta = find(top, 'meta');
  const inMeta = children(b, meta, 4);
  const iprp = find(inMeta, 'iprp');
  const inIprp = children(b, iprp);
  return {
    top,
    meta,
    inMeta,
    iloc: find(inMeta, 'iloc'),
    pitm: find(inMeta, 'pitm'),
    iprp,
    ipco: find(inIprp, 'ipco'),
    ipma: find(inIprp, 'ipma'),
  };
}

function grow(b: Buffer, box: Box, by: number): void {
  if (box.header !== 8) throw new Error('64-bit box sizes are not edited here');
  b.writeUInt32BE(box.size + by, box.start);
}

/** Every iloc offset into the file moved by `delta` (data after the meta box shifts when it grows). */
function shiftIloc(b: Buffer, iloc: Box, delta: number): void {
  let at = iloc.start + iloc.header;
  const version = b[at]!;
  at += 4;
  const offsetSize = b[at]! >> 4,
    lengthSize = b[at]! & 15;
  const baseSize = b[at + 1]! >> 4,
    indexSize = version >= 1 ? b[at + 1]! & 15 : 0;
  at += 2;
  const count = version < 2 ? b.readUInt16BE(at) : b.readUInt32BE(at);
  at += version < 2 ? 2 : 4;
  const read = (n: number, p: number) => (n === 0 ? 0 : n === 4 ? b.readUInt32BE(p) : Number(b.readBigUInt64BE(p)));
  const write = (n: number, p: number, v: number) => (n === 4 ? b.writeUInt32BE(v, p) : b.writeBigUInt64BE(BigInt(v), p));
  for (let i = 0; i < count; i++) {
    at += version < 2 ? 2 : 4;
    let method = 0;
    if (version >= 1) {
      method = b.readUInt16BE(at) & 15;
      at += 2;
    }
    at += 2;
    const base = read(baseSize, at);
    if (baseSize && method === 0 && base) write(baseSize, at, base + delta);
    at += baseSize;
    const extents = b.readUInt16BE(at);
    at += 2;
    for (let e = 0; e < extents; e++) {
      at += indexSize;
      if (!baseSize && method === 0) write(offsetSize, at, read(offsetSize, at) + delta);
      at += offsetSize + lengthSize;
    }
  }
}

/**
 * The file with an `irot` property on its primary image: the decoder turns the picture
 * `quarterTurns` × 90° anticlockwise, as an iPhone's portrait photo is stored.
 */
export function withRotation(file: Buffer, quarterTurns: 1 | 2 | 3): Buffer {
  return withProperty(file, Buffer.from([0, 0, 0, 9, 0x69, 0x72, 0x6f, 0x74, quarterTurns]), true);
}

/**
 * The file with a `colr` property on its primary image, as phones write it: `nclx` code points
 * (H.273 primaries and transfer; BT.601 matrix and full range, as heif-enc encoded the picture),
 * or an ICC profile (`prof`). libheif decodes the same pixels either way; the box reads the colour.
 */
export function withColour(file: Buffer, colour: { primaries: number; transfer: number } | { icc: Uint8Array }): Buffer {
  const body =
    'icc' in colour
      ? Buffer.concat([Buffer.from('prof', 'latin1'), Buffer.from(colour.icc)])
      : Buffer.from([
          0x6e,
          0x63,
          0x6c,
          0x78,
          colour.primaries >> 8,
          colour.primaries & 255,
          colour.transfer >> 8,
          colour.transfer & 255,
          0,
          6,
          0x80,
        ]);
  const box = Buffer.alloc(8 + body.length);
  box.writeUInt32BE(box.length, 0);
  box.write('colr', 4, 'latin1');
  body.copy(box, 8);
  return withProperty(file, box, false);
}

/** The file with one more property in ipco, associated with the primary image. */
function withProperty(file: Buffer, property: Buffer, essential: boolean): Buffer {
  const b = Buffer.from(file);
  const l = layout(b);
  const primary = b.readUInt16BE(l.pitm.start + l.pitm.header + 4);
  const properties = children(b, l.ipco).length;

  // ipma: find the primary item's entry and add one association (index of the new property).
  let at = l.ipma.start + l.ipma.header;
  const version = b[at]!,
    wide = (b.readUInt32BE(at) & 1) === 1;
  at += 4;
  const entries = b.readUInt32BE(at);
  at += 4;
  let insertAt = -1,
    countAt = -1;
  for (let i = 0; i < entries; i++) {
    const item = version < 1 ? b.readUInt16BE(at) : b.readUInt32BE(at);
    at += version < 1 ? 2 : 4;
    const n = b[at]!;
    if (item === primary) countAt = at;
    at += 1 + n * (wide ? 2 : 1);
    if (item === primary) insertAt = at;
  }
  if (insertAt < 0) throw new Error('primary item has no property associations');
  const flag = essential ? 0x80 : 0;
  const assoc = wide ? Buffer.from([flag | ((properties + 1) >> 8), (properties + 1) & 255]) : Buffer.from([flag | (properties + 1)]);
  const delta = property.length + assoc.length;

  grow(b, l.meta, delta);
  grow(b, l.iprp, delta);
  grow(b, l.ipco, property.length);
  grow(b, l.ipma, assoc.length);
  b[countAt] = b[countAt]! + 1;
  shiftIloc(b, l.iloc, delta);
  const ipcoEnd = l.ipco.start + l.ipco.size;
  return Buffer.concat([b.subarray(0, ipcoEnd), property, b.subarray(ipcoEnd, insertAt), assoc, b.subarray(insertAt)]);
}

/** The file with its image spatial extent (`ispe`) claiming width × height, the picture itself unchanged. */
export function withDeclaredSize(file: Buffer, width: number, height: number): Buffer {
  const b = Buffer.from(file);
  const ispe = find(children(b, layout(b).ipco), 'ispe');
  b.writeUInt32BE(width, ispe.start + ispe.header + 4);
  b.writeUInt32BE(height, ispe.start + ispe.header + 8);
  return b;
}
