import { createHash } from 'node:crypto';

// A climate reading is one metric at one instant in one crop cycle, and its
// point_id is made from exactly that: a UUIDv7 whose 48-bit time field is the
// reading's instant and whose 74 random bits are the first bits of
// sha256(cycle id, metric). Storing a year of hourly values then needs no id
// column and no id index (a third of an import's cost), the id of a reading is
// the same on every box that stores it (a re-import upstream cannot double it),
// and two readings of different cycles or metrics still never share an id, as
// the conventions ask (a collision needs two 74-bit hashes to agree).
//
// The id follows the reading's key: a reading moved to another instant gets the
// id of its new instant (PATCH answers it).

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
const tails = new Map<string, string>();
const TAIL_CACHE = 4096;

/** The part of an id after the time field (`7xxx-yxxx-xxxxxxxxxxxx`), fixed per cycle and metric. */
function tailOf(cycleId: string, metric: string): string {
  const k = `${cycleId}\u0000${metric}`;
  let t = tails.get(k);
  if (t === undefined) {
    const h = createHash('sha256').update(k).digest();
    t = `${HEX[0x70 | (h[0]! & 0x0f)]}${HEX[h[1]!]}-${HEX[0x80 | (h[2]! & 0x3f)]}${HEX[h[3]!]}-${HEX[h[4]!]}${HEX[h[5]!]}${HEX[h[6]!]}${HEX[h[7]!]}${HEX[h[8]!]}${HEX[h[9]!]}`;
    if (tails.size >= TAIL_CACHE) tails.clear();
    tails.set(k, t);
  }
  return t;
}

/** The point_id of the reading of `metric` at `atMs` (epoch ms, 0 to 2^48) in the cycle. */
export function pointId(cycleId: string, metric: string, atMs: number): string {
  const hex = atMs.toString(16).padStart(12, '0');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${tailOf(cycleId, metric)}`;
}

const SHAPE = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

/** The instant a point_id names, or null when the text is no UUIDv7 (such an id names no reading). */
export function pointInstant(id: string): number | null {
  const lower = id.toLowerCase();
  if (!SHAPE.test(lower)) return null;
  return Number.parseInt(lower.slice(0, 8) + lower.slice(9, 13), 16);
}
