// ISO 8601 weeks (Monday to Sunday) in the greenhouse's zone, as the API labels them: 2026-W07.

const DAY = 86_400_000;

/** Today's local date in `zone` as [year, month, day]. */
export function localDate(zone: string, at = new Date()): [number, number, number] {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(at);
  const n = (t: string) => Number(parts.find((p) => p.type === t)!.value);
  return [n('year'), n('month'), n('day')];
}

export function todayIn(zone: string): string {
  const [y, m, d] = localDate(zone);
  return `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

/** The ISO week label of a calendar date. */
export function weekOfDate(y: number, m: number, d: number): string {
  const date = Date.UTC(y, m - 1, d);
  const dow = (new Date(date).getUTCDay() + 6) % 7; // Monday 0
  const thursday = date + (3 - dow) * DAY;
  const wy = new Date(thursday).getUTCFullYear();
  const week = 1 + Math.floor((thursday - Date.UTC(wy, 0, 1)) / (7 * DAY));
  return `${wy}-W${String(week).padStart(2, '0')}`;
}

export function thisWeek(zone: string): string {
  return weekOfDate(...localDate(zone));
}

const LABEL = /^(\d{4})-W(\d{2})$/;

export function isWeekLabel(s: string): boolean {
  const m = LABEL.exec(s);
  return !!m && Number(m[2]) >= 1 && Number(m[2]) <= 53 && weekOfDate(...mondayParts(s)) === s;
}

function mondayParts(label: string): [number, number, number] {
  const m = LABEL.exec(label)!;
  const y = Number(m[1]);
  const jan4 = Date.UTC(y, 0, 4);
  const monday = jan4 - ((new Date(jan4).getUTCDay() + 6) % 7) * DAY + (Number(m[2]) - 1) * 7 * DAY;
  const d = new Date(monday);
  return [d.getUTCFullYear(), d.getUTCMonth() + 1, d.getUTCDate()];
}

/** Monday of a week as YYYY-MM-DD. */
export function mondayOf(label: string): string {
  const [y, m, d] = mondayParts(label);
  return `${y}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

export function addWeeks(label: string, n: number): string {
  const [y, m, d] = mondayParts(label);
  const t = new Date(Date.UTC(y, m - 1, d) + n * 7 * DAY);
  return weekOfDate(t.getUTCFullYear(), t.getUTCMonth() + 1, t.getUTCDate());
}

/** A short grower's name for a week: "week 7, 2026". */
export function weekName(label: string): string {
  const m = LABEL.exec(label);
  return m ? `week ${Number(m[2])}, ${m[1]}` : label;
}
