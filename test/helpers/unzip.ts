import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { zipEntries } from '../../src/climate/exports-reader/zip-guard.js';

/** Every entry of a zip (stored or deflated) by name: for reading what the box exports. */
export function unzip(buf: Buffer): Map<string, Buffer> {
  const out = new Map<string, Buffer>();
  for (const e of zipEntries(buf)) {
    const lp = e.localHeaderOffset;
    const start = lp + 30 + buf.readUInt16LE(lp + 26) + buf.readUInt16LE(lp + 28);
    const data = buf.subarray(start, start + e.compressedSize);
    out.set(e.name, e.method === 0 ? Buffer.from(data) : inflateRawSync(data));
  }
  return out;
}

/** The zip written out under `dir` (names are the box's own: images/…, labels/…). */
export function unzipTo(buf: Buffer, dir: string): Map<string, Buffer> {
  const entries = unzip(buf);
  for (const [name, data] of entries) {
    const file = path.join(dir, name);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, data);
  }
  return entries;
}
