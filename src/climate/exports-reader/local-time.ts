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

const DAY = 86_400_000;

interface DayOffsets {
  start: number;
  /** Offset at the day's start. */
  o0: number;
  /** Offset from `transition` on (equal to o0 when the day has none). */
  o1: number;
  transition: number;
}

export class ZoneClock {
  private readonly zone: IANAZone;
  private readonly days = new Map<number, DayOffsets>();
  private lastKey = Number.NaN;
  private lastDay: DayOffsets | null = null;

  constructor(readonly name: string) {
    if (!IANAZone.isValidZone(name)) throw new RangeError(`unknown IANA time zone '${name}'`);
    this.zone = IANAZone.create(name);
  }

  /**
   * Offset in minutes at an instant. luxon's offset lookup formats a date per call, so offsets
   * are asked once per UTC day, and a day whose start and end differ gets its transition found
   * by bisection to the minute (no zone changes more than once a day).
   */
  offsetAt(ms: number): number {
    const key = Math.floor(ms / DAY);
    // Rows come in time order: most calls fall on the day asked last.
    let d = key === this.lastKey ? this.lastDay! : this.days.get(key);
    if (!d) {
      const start = key * DAY;
      const o0 = this.zone.offset(start);
      const o1 = this.zone.offset(start + DAY);
      let transition = start + DAY;
      if (o0 !== o1) {
        let lo = start;
        let hi = start + DAY;
        while (hi - lo > 60_000) {
          const mid = lo + Math.floor((hi - lo) / 120_000) * 60_000;
          if (this.zone.offset(mid) === o0) lo = mid;
          else hi = mid;
        }
        transition = hi;
      }
      d = { start, o0, o1, transition };
      if (this.days.size > 50_000) this.days.clear();
      this.days.set(key, d);
    }
    this.lastKey = key;
    this.lastDay = d;
    return ms < d.transition ? d.o0 : d.o1;
  }

  resolve(w: WallClock): Resolved {
    const wallMs = Date.UTC(w.y, w.mo - 1, w.d, w.h, w.mi, w.s, w.ms);
    if (w.offset !== null) return { kind: 'ok', ms: wallMs - w.offset * 60_000, offset: w.offset };
    // The offsets that may apply: those in force 14 hours either side. A candidate holds when
    // the instant it gives has that offset itself: none in a spring gap, two in an autumn repeat.
    const a = this.offsetAt(wallMs - 14 * HOUR);
    const b = this.offsetAt(wallMs + 14 * HOUR);
    const msA = wallMs - a * 60_000;
    const okA = this.offsetAt(msA) === a;
    if (a === b) return okA ? { kind: 'ok', ms: msA, offset: a } : this.resolveSlow(wallMs);
    const msB = wallMs - b * 60_000;
    const okB = this.offsetAt(msB) === b;
    if (okA && okB) {
      return msA < msB ? { kind: 'repeated', ms: [msA, msB], offset: [a, b] } : { kind: 'repeated', ms: [msB, msA], offset: [b, a] };
    }
    if (okA) return { kind: 'ok', ms: msA, offset: a };
    if (okB) return { kind: 'ok', ms: msB, offset: b };
    return { kind: 'missing' };
  }

  /** Zones whose offset differs from both neighbours' (a one-off change): try that offset too. */
  private resolveSlow(wallMs: number): Resolved {
    const o = this.offsetAt(wallMs);
    const ms = wallMs - o * 60_000;
    return this.offsetAt(ms) === o ? { kind: 'ok', ms, offset: o } : { kind: 'missing' };
  }

  /** ISO 8601 with the zone's offset at that instant, e.g. 2020-10-25T02:30:00+01:00. */
  iso(ms: number): string {
    return isoWithOffset(ms, this.offsetAt(ms));
  }
}

const TWO = Array.from({ length: 60 }, (_, i) => (i < 10 ? '0' : '') + i);
let dayKey = Number.NaN;
let dayText = '';

/** ISO 8601 in the given offset; the date part is formatted once per local day. */
export function isoWithOffset(ms: number, offset: number): string {
  const local = ms + offset * 60_000;
  const day = Math.floor(local / 86_400_000);
  if (day !== dayKey) {
    dayKey = day;
    dayText = new Date(day * 86_400_000).toISOString().slice(0, 11);
  }
  let rem = local - day * 86_400_000;
  const msPart = rem % 1000;
  rem = (rem - msPart) / 1000;
  const sec = rem % 60;
  rem = (rem - sec) / 60;
  const min = rem % 60;
  const hr = (rem - min) / 60;
  const sign = offset < 0 ? '-' : '+';
  const a = Math.abs(offset);
  const frac = msPart === 0 ? '' : '.' + String(msPart).padStart(3, '0');
  return `${dayText}${TWO[hr]}:${TWO[min]}:${TWO[sec]}${frac}${sign}${TWO[Math.floor(a / 60)]}:${TWO[a % 60]}`;
}

function pad(n: number): string {
  return n < 10 ? '0' + n : String(n);
}

export function wallLabel(w: WallClock): string {
  return `${w.y}-${pad(w.mo)}-${pad(w.d)}T${pad(w.h)}:${pad(w.mi)}`;
}
