import type { LogLevel } from './config.js';

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** Field names whose values never reach a log line, whatever logs them. */
const SECRET_FIELDS = /^(api_key|apikey|x-api-key|authorization|x-admin-token|cookie|set-cookie|token|admin_token|password|secret)$/i;

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** The one line per HTTP request, at level info (see RequestLine). */
  request(fields: RequestLine): void;
  child(fields: Record<string, unknown>): Logger;
}

/** What is logged of every request; never a header, a query or a body. */
export interface RequestLine {
  /** A UUID made by the service. */
  request_id: string;
  /** As Node's HTTP parser accepted it: one of the known method tokens. */
  method: string;
  path: string;
  status: number;
  ms: number;
  /** The id of the key that authenticated the request (a UUID from the database), if any. */
  key_id?: string;
}

// Field names come from the code, so there are few: each is tested against SECRET_FIELDS
// once, not on every line (a request line has six).
const plainNames = new Set<string>();
function isPlainName(k: string): boolean {
  if (plainNames.has(k)) return true;
  if (SECRET_FIELDS.test(k)) return false;
  if (plainNames.size < 1000) plainNames.add(k);
  return true;
}

function redact(fields: Record<string, unknown>): Record<string, unknown> {
  // Most lines (one per request) hold only short scalars under plain names: nothing to copy.
  let plain = true;
  for (const k in fields) {
    const v = fields[k];
    if ((v !== null && typeof v === 'object') || !isPlainName(k)) {
      plain = false;
      break;
    }
  }
  if (plain) return fields;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (SECRET_FIELDS.test(k)) out[k] = '[redacted]';
    else if (v instanceof Error) out[k] = { name: v.name, message: v.message, stack: v.stack };
    else if (v && typeof v === 'object' && !Array.isArray(v)) out[k] = redact(v as Record<string, unknown>);
    else out[k] = v;
  }
  return out;
}

let isoMs = -1;
let isoText = '';
/** The current time as ISO 8601, formatted once per millisecond (many lines share one). */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}

/** One JSON line per event, on stdout (systemd's journal keeps it). */
export function createLogger(
  level: LogLevel,
  base: Record<string, unknown> = {},
  write: (line: string) => void = (l) => process.stdout.write(l + '\n'),
): Logger {
  const threshold = ORDER[level];
  const hasBase = Object.keys(base).length > 0;
  const emit = (lvl: Exclude<LogLevel, 'silent'>, msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[lvl] < threshold) return;
    const all = redact(hasBase ? { ...base, ...fields } : (fields ?? {}));
    // A line is written per request: the fields are serialized as they are, not first
    // copied under the three leading keys, unless they would override those keys.
    if ('time' in all || 'level' in all || 'msg' in all) {
      write(JSON.stringify({ time: isoNow(), level: lvl, msg, ...all }));
      return;
    }
    const rest = JSON.stringify(all);
    write(`{"time":"${isoNow()}","level":"${lvl}","msg":${JSON.stringify(msg)}${rest.length > 2 ? ',' + rest.slice(1) : '}'}`);
  };
  const request = (f: RequestLine) => {
    if (ORDER.info < threshold) return;
    if (hasBase) return emit('info', 'request', f as unknown as Record<string, unknown>);
    // Written by hand: this runs for every request, and the generic path (checking each
    // name for secrets, serializing an object) is most of a logged request's cost. Only the
    // path can hold characters JSON must escape; the rest are ids, a method token and numbers.
    write(
      `{"time":"${isoNow()}","level":"info","msg":"request","request_id":"${f.request_id}","method":"${f.method}","path":${JSON.stringify(f.path)},"status":${f.status},"ms":${f.ms}${f.key_id === undefined ? '' : `,"key_id":"${f.key_id}"`}}`,
    );
  };
  return {
    request,
    debug: (m, f) => emit('debug', m, f),
    info: (m, f) => emit('info', m, f),
    warn: (m, f) => emit('warn', m, f),
    error: (m, f) => emit('error', m, f),
    child: (fields) => createLogger(level, { ...base, ...fields }, write),
  };
}
