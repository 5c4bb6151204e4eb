// Hand-built zip archives for hostile-upload tests: one deflated entry whose directory may
// lie about its size, and deflated filler made without holding it uncompressed.
import { createDeflateRaw } from 'node:zlib';

/** A zip with one deflated entry; `declared` is the uncompressed size written in its headers. */
export function zipOneEntry(name: string, deflated: Buffer, declared: number): Buffer {
  const nameBuf = Buffer.from(name);
  const local = Buffer.alloc(30);
  local.writeUInt32LE(0x04034b50, 0);
  local.writeUInt16LE(20, 4);
  local.writeUInt16LE(8, 8);
  local.writeUInt32LE(deflated.length, 18);
  local.writeUInt32LE(declared, 22);
  local.writeUInt16LE(nameBuf.length, 26);
  const cen = Buffer.alloc(46);
  cen.writeUInt32LE(0x02014b50, 0);
  cen.writeUInt16LE(20, 4);
  cen.writeUInt16LE(20, 6);
  cen.writeUInt16LE(8, 10);
  cen.writeUInt32LE(deflated.length, 20);
  cen.writeUInt32LE(declared, 24);
  cen.writeUInt16LE(nameBuf.length, 28);
  // The local header's offset (cen bytes 42-45) is 0: the entry is the archive's first.
  const eocd = Buffer.alloc(22);
  eocd.writeUInt32LE(0x06054b50, 0);
  eocd.writeUInt16LE(1, 8);
  eocd.writeUInt16LE(1, 10);
  eocd.writeUInt32LE(cen.length + nameBuf.length, 12);
  eocd.writeUInt32LE(local.length + nameBuf.length + deflated.length, 16);
  return Buffer.concat([local, nameBuf, deflated, cen, nameBuf, eocd]);
}

/** `total` bytes of spaces, deflated a megabyte at a time: a bomb's payload. */
export async function deflatedSpaces(total: number): Promise<Buffer> {
  const d = createDeflateRaw({ level: 9 });
  const parts: Buffer[] = [];
  d.on('data', (c: Buffer) => parts.push(c));
  const done = new Promise((r) => d.on('end', r));
  const block = Buffer.alloc(1 << 20, 0x20);
  for (let n = 0; n < total; n += block.length) if (!d.write(block)) await new Promise((r) => d.once('drain', r));
  d.end();
  await done;
  return Buffer.concat(parts);
}
