// Wall-clock times of an export, read in the greenhouse's IANA zone with luxon's zone
// rules. The process zone never enters: every computation is on UTC milliseconds.
import { IANAZone } from 'luxon';
import type { WallClock } from './dates.js';

export type Resolved =
  | { kind: 'ok'; ms: number; offset: number }
  /** The wall time happens twice (autumn): both instants, earlier (summer offset) first. */
  | { kind: 'repeated'; ms: [number, number]; offset: [number, number] }
  /** The wall time never happens (spring). */
  | { kind: 'missing' };

const HOUR = 3600_000;

export class ZoneClock {
  private readonly zone: IANAZone;
  private readonly hourCache = new Map<number, { offsets: number[] }>();
  private readonly offsetCache = new Map<number, number>();

  constructor(readonly name: string) {
    if (!IANAZone.isValidZone(name)) throw new RangeError(`unknown IANA time zone '${name}'`);
    this.zone = IANAZone.create(name);
  }

  /** Offset in minutes at an instant, cached per UTC quarter hour (zones change on quarter hours at the finest). */
  offsetAt(ms: number): number {
    const key = Math.floor(ms / 900_000);
    let o = this.offsetCache.get(key);
    if (o === undefined) {
      o = this.zone.offset(key * 900_000);
      if (this.offsetCache.size > 200_000) this.offsetCache.clear();
      this.offsetCache.set(key, o);
    }
    return o;
  }

  resolve(w: WallClock): Resolved {
    const wallMs = Date.UTC(w.y, w.mo - 1, w.d, w.h, w.mi, w.s, w.ms);
    if (w.offset !== null) return { kind: 'ok', ms: wallMs - w.offset * 60_000, offset: w.offset };
    // The offsets that may apply to this wall hour: those in force half a day either side.
    // A candidate offset holds when the instant it gives has that offset itself.
    const hourKey = Math.floor(wallMs / HOUR);
    let entry = this.hourCache.get(hourKey);
    if (!entry) {
      const around = new Set([this.zone.offset(wallMs - 14 * HOUR), this.zone.offset(wallMs + 14 * HOUR), this.zone.offset(wallMs)]);
      entry = { offsets: [...around] };
      if (this.hourCache.size > 100_000) this.hourCache.clear();
      this.hourCache.set(hourKey, entry);
    }
    const valid: { ms: number; offset: number }[] = [];
    for (const o of entry.offsets) {
      const ms = wallMs - o * 60_000;
      if (this.offsetAt(ms) === o) valid.push({ ms, offset: o });
    }
    if (valid.length === 0) return { kind: 'missing' };
    if (valid.length === 1) return { kind: 'ok', ms: valid[0]!.ms, offset: valid[0]!.offset };
    valid.sort((x, y) => x.ms - y.ms);
    return { kind: 'repeated', ms: [valid[0]!.ms, valid[1]!.ms], offset: [valid[0]!.offset, valid[1]!.offset] };
  }

  /** ISO 8601 with the zone's offset at that instant, e.g. 2020-10-25T02:30:00+01:00. */
  iso(ms: number): string {
    return isoWithOffset(ms, this.offsetAt(ms));
  }
}

export function isoWithOffset(ms: number, offset: number): string {
  const local = new Date(ms + offset * 60_000).toISOString();
  const base = local.endsWith('.000Z') ? local.slice(0, 19) : local.slice(0, 23);
  const sign = offset < 0 ? '-' : '+';
  const a = Math.abs(offset);
  return `${base}${sign}${pad(Math.floor(a / 60))}:${pad(a % 60)}`;
}

function pad(n: number): string {
  return n < 10 ? '0' + n : String(n);
}

export function wallLabel(w: WallClock): string {
  return `${w.y}-${pad(w.mo)}-${pad(w.d)}T${pad(w.h)}:${pad(w.mi)}`;
}
