/**
 * The ASCII lines industrial scales send over a serial port, read into one shape. Pure: no port,
 * no database. The formats (docs/appliance.md, "Connecting a scale"):
 *
 * - The common indicator format: `ST,GS,+0012.34kg`. The header says whether the weight is
 *   stable (`ST`), unstable (`US`) or over the range (`OL`); the second field gross (`GS`), net
 *   (`NT`) or tare (`TR`). Some indicators put a space or a device number in between
 *   (`ST,GS, +12.34 kg`, `ST,01,GS,+12.34kg`).
 * - Mettler Toledo SICS: `S S      12.34 kg` (stable), `S D      12.34 kg` (dynamic, unstable),
 *   `S +` / `S -` (over / under the range), `S I` (busy), and `SI`/`SIR` answers of the same shape.
 * - A plain weight: `12.34 kg`, `+ 12.34kg`, `12.34` with no unit is not taken (kilograms or
 *   pounds cannot be guessed). A plain line says nothing of stability: the reader deems it
 *   stable once the same weight has come several times in a row (see StabilityFilter).
 */

export type WeightUnit = 'kg' | 'g' | 'lb' | 'oz';

export interface WeightFrame {
  kind: 'weight';
  /** true or false when the scale says so; null for a plain line that does not. */
  stable: boolean | null;
  /** The weight in kilograms (canonical unit), rounded to the gram. */
  kg: number;
  /** As sent, before conversion. */
  value: number;
  unit: WeightUnit;
  /** gross, net or tare, when the format says; a tare is not a weight to record. */
  mode: 'gross' | 'net' | 'tare' | null;
  format: 'indicator' | 'sics' | 'plain';
}

export interface RangeFrame {
  kind: 'overload' | 'underload' | 'busy';
  format: 'indicator' | 'sics';
}

export type ScaleFrame = WeightFrame | RangeFrame;

/** A line longer than this is noise (a scale's frame is under 30 characters); it is never parsed. */
export const MAX_LINE = 80;

const TO_KG: Record<WeightUnit, number> = { kg: 1, g: 0.001, lb: 0.45359237, oz: 0.028349523125 };

const UNIT_NAMES: Record<string, WeightUnit> = { kg: 'kg', g: 'g', lb: 'lb', lbs: 'lb', oz: 'oz' };

/** `+0012.34kg`, `- 1.5 lb`, `12,34 kg` (a decimal comma), the unit required. */
const NUMBER_UNIT = /^([+-]?)\s*(\d{1,7}(?:[.,]\d{1,4})?)\s*(kg|lbs|lb|g|oz)$/i;

function weightOf(text: string): { value: number; unit: WeightUnit; kg: number } | null {
  const m = NUMBER_UNIT.exec(text.trim());
  if (!m) return null;
  const value = Number(m[2]!.replace(',', '.')) * (m[1] === '-' ? -1 : 1);
  const unit = UNIT_NAMES[m[3]!.toLowerCase()];
  if (!unit || !Number.isFinite(value)) return null;
  // Rounded to the gram: a harvest is weighed in crates, and lb to kg leaves long fractions.
  const kg = Math.round(value * TO_KG[unit] * 1000) / 1000;
  return { value, unit, kg: Object.is(kg, -0) ? 0 : kg };
}

const MODES: Record<string, WeightFrame['mode']> = { GS: 'gross', NT: 'net', TR: 'tare', TW: 'tare' };

const STX = 2;
const ETX = 3;

/** Without the spaces, and the STX and ETX some indicators put around a frame. */
function trimFrame(line: string): string {
  let a = 0;
  let b = line.length;
  while (a < b && (line.charCodeAt(a) === STX || line.charCodeAt(a) === 32 || line.charCodeAt(a) === 9)) a++;
  while (b > a && (line.charCodeAt(b - 1) === ETX || line.charCodeAt(b - 1) === 32 || line.charCodeAt(b - 1) === 9)) b--;
  return line.slice(a, b);
}

/** One line (without its line end) to a frame, or null for anything that is not one. */
export function parseFrame(line: string): ScaleFrame | null {
  if (line.length > MAX_LINE) return null;
  // Some indicators start a frame with STX or end it with ETX; anything else not printable is noise.
  const text = trimFrame(line);
  if (!text || /[^\x20-\x7e]/.test(text)) return null;

  // The indicator format: header, mode, optional device number, weight.
  const ind = /^(ST|US|OL)\s*,\s*(?:(\d{1,2})\s*,\s*)?(GS|NT|TR|TW)\s*,\s*(.*)$/i.exec(text);
  if (ind) {
    const header = ind[1]!.toUpperCase();
    if (header === 'OL') return { kind: 'overload', format: 'indicator' };
    const w = weightOf(ind[4]!);
    if (!w) return null;
    return { kind: 'weight', stable: header === 'ST', ...w, mode: MODES[ind[3]!.toUpperCase()] ?? null, format: 'indicator' };
  }

  // SICS: `S S <weight> <unit>`, `S D ...`, `S +`, `S -`, `S I`; SI/SIR answers are the same.
  const sics = /^S\s+([SD+\-I])(?:\s+(.*))?$/.exec(text);
  if (sics) {
    const status = sics[1]!;
    if (status === '+') return { kind: 'overload', format: 'sics' };
    if (status === '-') return { kind: 'underload', format: 'sics' };
    if (status === 'I') return { kind: 'busy', format: 'sics' };
    const w = sics[2] === undefined ? null : weightOf(sics[2]);
    if (!w) return null;
    return { kind: 'weight', stable: status === 'S', ...w, mode: null, format: 'sics' };
  }

  // A plain weight with its unit, optionally with a G/N (gross/net) mark before or after.
  const plain = /^(?:(G|N|GS|NT)\s+)?(.*?)(?:\s+(G|N|GS|NT))?$/i.exec(text)!;
  const w = weightOf(plain[2]!);
  if (!w) return null;
  const mark = (plain[1] ?? plain[3])?.toUpperCase();
  return {
    kind: 'weight',
    stable: null,
    ...w,
    mode: mark === undefined ? null : mark.startsWith('G') ? 'gross' : 'net',
    format: 'plain',
  };
}

/**
 * Splits the bytes of a serial line into lines: CR, LF or CRLF end one. A line that grows past
 * MAX_LINE without an end is dropped whole (up to its end), so a stream of garbage never grows
 * the buffer. `reset()` forgets a partial line: after a disconnect, its first half must not be
 * joined to whatever comes first on the next connection.
 */
export class LineSplitter {
  private partial = '';
  private overlong = false;

  push(chunk: Buffer | string): string[] {
    const text = typeof chunk === 'string' ? chunk : chunk.toString('latin1');
    const lines: string[] = [];
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c !== 10 && c !== 13) continue;
      const piece = this.partial + text.slice(start, i);
      this.partial = '';
      start = i + 1;
      if (this.overlong) {
        this.overlong = false;
        continue;
      }
      if (piece.length) lines.push(piece);
    }
    const rest = text.slice(start);
    if (this.overlong) return lines;
    this.partial += rest;
    if (this.partial.length > MAX_LINE) {
      this.partial = '';
      this.overlong = true;
    }
    return lines;
  }

  reset(): void {
    this.partial = '';
    this.overlong = false;
  }
}
