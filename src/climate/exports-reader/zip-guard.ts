// A small reader of a zip's central directory, so that an .xlsx is checked before SheetJS
// inflates it: declared sizes first, then each entry inflated to nowhere with a byte cap,
// which also catches an archive that lies about its sizes.
import { createInflateRaw } from 'node:zlib';
import { ReaderError } from './source.js';

export interface ZipEntry {
  name: string;
  method: number;
  compressedSize: number;
  uncompressedSize: number;
  localHeaderOffset: number;
}

const EOCD_SIG = 0x06054b50;
const CEN_SIG = 0x02014b50;
const LOC_SIG = 0x04034b50;
const MAX_ENTRIES = 10_000;

export function zipEntries(buf: Uint8Array): ZipEntry[] {
  const view = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  const min = Math.max(0, view.length - 22 - 0xffff);
  let eocd = -1;
  for (let i = view.length - 22; i >= min; i--) {
    if (view.readUInt32LE(i) === EOCD_SIG) {
      eocd = i;
      break;
    }
  }
  if (eocd === -1) throw new ReaderError('not_a_table', 'the file starts like a zip archive (.xlsx) but has no zip directory');
  const count = view.readUInt16LE(eocd + 10);
  const cdSize = view.readUInt32LE(eocd + 12);
  const cdOffset = view.readUInt32LE(eocd + 16);
  if (count === 0xffff || cdOffset === 0xffffffff) {
    throw new ReaderError('xlsx_too_large', 'a ZIP64 archive: larger than any climate export this box accepts');
  }
  if (count > MAX_ENTRIES) throw new ReaderError('xlsx_too_large', `the archive holds ${count} entries`);
  if (cdOffset + cdSize > view.length) throw new ReaderError('not_a_table', 'the zip directory points past the end of the file');
  const entries: ZipEntry[] = [];
  let p = cdOffset;
  for (let n = 0; n < count; n++) {
    if (p + 46 > view.length || view.readUInt32LE(p) !== CEN_SIG) throw new ReaderError('not_a_table', 'damaged zip directory');
    const method = view.readUInt16LE(p + 10);
    const compressedSize = view.readUInt32LE(p + 20);
    const uncompressedSize = view.readUInt32LE(p + 24);
    const nameLen = view.readUInt16LE(p + 28);
    const extraLen = view.readUInt16LE(p + 30);
    const commentLen = view.readUInt16LE(p + 32);
    const localHeaderOffset = view.readUInt32LE(p + 42);
    const name = view.toString('utf8', p + 46, p + 46 + nameLen);
    if (compressedSize === 0xffffffff || uncompressedSize === 0xffffffff) {
      throw new ReaderError('xlsx_too_large', 'a ZIP64 entry: larger than any climate export this box accepts');
    }
    entries.push({ name, method, compressedSize, uncompressedSize, localHeaderOffset });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
}

/** Refuses an archive that declares, or actually inflates to, more than maxInflated bytes in all. */
export async function checkZip(buf: Uint8Array, maxInflated: number): Promise<ZipEntry[]> {
  const entries = zipEntries(buf);
  const declared = entries.reduce((s, e) => s + e.uncompressedSize, 0);
  if (declared > maxInflated) {
    throw new ReaderError(
      'xlsx_too_large',
      `the workbook declares ${mib(declared)} MiB uncompressed; at most ${mib(maxInflated)} MiB is read`,
    );
  }
  const view = Buffer.from(buf.buffer, buf.byteOffset, buf.byteLength);
  let total = 0;
  for (const e of entries) {
    const lp = e.localHeaderOffset;
    if (lp + 30 > view.length || view.readUInt32LE(lp) !== LOC_SIG) throw new ReaderError('not_a_table', 'damaged zip entry');
    const start = lp + 30 + view.readUInt16LE(lp + 26) + view.readUInt16LE(lp + 28);
    const data = view.subarray(start, start + e.compressedSize);
    if (e.method === 0) {
      total += data.length;
    } else if (e.method === 8) {
      // Whatever the entry declares, it may not inflate past it (nor past the total cap).
      const cap = Math.min(e.uncompressedSize, maxInflated - total);
      total += await inflatedSize(data, cap, e.name);
    } else {
      throw new ReaderError('not_a_table', `zip entry ${e.name} uses compression method ${e.method}, which an .xlsx never does`);
    }
    if (total > maxInflated) throw new ReaderError('xlsx_too_large', `the workbook inflates past ${mib(maxInflated)} MiB`);
  }
  return entries;
}

function inflatedSize(data: Uint8Array, cap: number, name: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const inflate = createInflateRaw();
    let n = 0;
    let done = false;
    inflate.on('data', (chunk: Buffer) => {
      n += chunk.length;
      if (n > cap && !done) {
        done = true;
        inflate.destroy();
        reject(new ReaderError('xlsx_too_large', `zip entry ${name} inflates past the size it declares: a zip bomb`));
      }
    });
    inflate.on('error', (err) => {
      if (!done) {
        done = true;
        reject(new ReaderError('not_a_table', `zip entry ${name} is damaged: ${err.message}`));
      }
    });
    inflate.on('end', () => {
      if (!done) {
        done = true;
        resolve(n);
      }
    });
    inflate.end(data);
  });
}

function mib(n: number): string {
  return (n / 1048576).toFixed(n < 1048576 ? 2 : 0);
}
