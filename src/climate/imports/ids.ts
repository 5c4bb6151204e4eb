import { randomFillSync } from 'node:crypto';

// UUIDv7 ids for the readings of an import, the same layout as db/ids.ts (the uuid package's
// v7: 48-bit milliseconds, a 32-bit counter seeded at random each millisecond, random rest),
// made without its cost per id: uuid draws 16 random bytes per id from a 256-byte pool, so an
// import of a year's hourly values called randomFillSync 15,000 times. Here the pool is 16 KiB
// and the text is made from a byte table.

const HEX = Array.from({ length: 256 }, (_, i) => (i < 16 ? '0' : '') + i.toString(16));
const POOL = 16 * 1024;
/** Random bytes used per id: 4 to seed the counter, 6 for the tail. */
const PER_ID = 10;
const pool = new Uint8Array(POOL);
let ptr = POOL;
let msecs = -Infinity;
let seq = 0;

export function fastId(): string {
  if (ptr > POOL - PER_ID) {
    randomFillSync(pool);
    ptr = 0;
  }
  const p = ptr;
  ptr += PER_ID;
  const now = Date.now();
  if (now > msecs) {
    seq = (pool[p]! << 23) | (pool[p + 1]! << 16) | (pool[p + 2]! << 8) | pool[p + 3]!;
    msecs = now;
  } else {
    seq = (seq + 1) | 0;
    if (seq === 0) msecs++;
  }
  const hi = Math.floor(msecs / 0x100000000);
  const lo = msecs >>> 0;
  return (
    HEX[(hi >>> 8) & 0xff]! + HEX[hi & 0xff]! + HEX[lo >>> 24]! + HEX[(lo >>> 16) & 0xff]! + '-' +
    HEX[(lo >>> 8) & 0xff]! + HEX[lo & 0xff]! + '-' +
    HEX[0x70 | ((seq >>> 28) & 0x0f)]! + HEX[(seq >>> 20) & 0xff]! + '-' +
    HEX[0x80 | ((seq >>> 14) & 0x3f)]! + HEX[(seq >>> 6) & 0xff]! + '-' +
    HEX[((seq << 2) & 0xff) | (pool[p + 4]! & 0x03)]! + HEX[pool[p + 5]!]! + HEX[pool[p + 6]!]! + HEX[pool[p + 7]!]! + HEX[pool[p + 8]!]! + HEX[pool[p + 9]!]!
  );
}
