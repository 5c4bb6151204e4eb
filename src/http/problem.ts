/**
 * The one place errors are shaped. Every failure the service answers is an
 * `HttpProblem`, rendered as application/problem+json (RFC 9457) with a stable
 * snake_case `code` (conventions.md, "Errors").
 */
export type ProblemLocation = 'path' | 'query' | 'header' | 'body';

export interface FieldError {
  in: ProblemLocation;
  name: string;
  message: string;
}

export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: FieldError[];
  [extra: string]: unknown;
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  409: 'Conflict',
  410: 'Gone',
  413: 'Payload Too Large',
  415: 'Unsupported Media Type',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  500: 'Internal Server Error',
  503: 'Service Unavailable',
  507: 'Insufficient Storage',
};

/** RFC 9457 members and our `code`: a problem's extra fields may not take these names. */
const STANDARD_MEMBERS = ['type', 'title', 'status', 'detail', 'instance', 'code'] as const;

export class HttpProblem extends Error {
  readonly status: number;
  readonly code: string;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(status: number, code: string, detail: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
    super(detail);
    // An extra `status` once carried a walk's state over the HTTP status; a client reading
    // `status` must always get the number it was answered with.
    const clash = STANDARD_MEMBERS.find((m) => m in extra);
    if (clash) throw new TypeError(`a problem's extra field may not be named "${clash}"`);
    this.status = status;
    this.code = code;
    this.extra = extra;
    this.headers = headers;
  }

  toBody(): ProblemBody {
    return {
      type: `https://cropwalk.local/problems/${this.code.replace(/_/g, '-')}`,
      title: TITLES[this.status] ?? 'Error',
      status: this.status,
      detail: this.message,
      code: this.code,
      ...this.extra,
    };
  }
}

export const validationFailed = (errors: FieldError[], detail = 'The request failed validation.') =>
  new HttpProblem(422, 'validation_failed', detail, { errors });

export const fieldError = (where: ProblemLocation, name: string, message: string) =>
  validationFailed([{ in: where, name, message }], `${name}: ${message}`);

export const unauthenticated = (detail = 'A valid API key is required.') => new HttpProblem(401, 'unauthenticated', detail);

export const forbidden = (detail: string) => new HttpProblem(403, 'forbidden', detail);

export const notFound = (what = 'resource') => new HttpProblem(404, 'not_found', `No such ${what}.`);

export const conflict = (detail: string, extra: Record<string, unknown> = {}) => new HttpProblem(409, 'conflict', detail, extra);

export const payloadTooLarge = (limitBytes: number) =>
  new HttpProblem(413, 'payload_too_large', `The upload is larger than the limit of ${limitBytes} bytes.`, { limit_bytes: limitBytes });

export const badRequest = (code: string, detail: string, extra: Record<string, unknown> = {}) => new HttpProblem(400, code, detail, extra);

export const unsupportedMediaType = (detail: string) => new HttpProblem(415, 'unsupported_media_type', detail);

/**
 * The box's disk (or the DATA_DIR quota) is full. That is the appliance's condition, not a fault
 * of the request, and growers must not be told their file is broken: a write that fails for it
 * answers 507 wherever it happens (an upload being spooled, a file moved, SQLite's SQLITE_FULL).
 */
export const insufficientStorage = () =>
  new HttpProblem(
    507,
    'insufficient_storage',
    "The appliance's disk is full, so nothing was stored. Free space on it (old walks' clips and frames take the most) and try again.",
  );

/** Whether an error is a write refused for want of space: ENOSPC, EDQUOT, or SQLite's SQLITE_FULL. */
export function isStorageFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL';
}
