import {
  Conflict,
  DomainError,
  Forbidden,
  Gone,
  Invalid,
  NotFound,
  Refused,
  StorageFull,
  TooLarge,
  Unavailable,
  Busy,
  UnsupportedMedia,
  UpstreamFailed,
  isDatabaseUnreachable,
  isStorageFull,
  type FieldIssue,
  type FieldSource,
} from '../errors.js';

/**
 * The one place answers to failures are shaped. Every failure the service answers is an
 * `HttpProblem`, rendered as application/problem+json (RFC 9457) with a stable snake_case `code`
 * (docs/api-conventions.md, "Errors"). Domain code throws the errors of src/errors.ts, and
 * `problemOf` turns each kind into its answer here; the pipeline's own refusals (no key, too
 * many failures, no route) are built by the factories below, one per kind.
 */
export type ProblemLocation = FieldSource;
export type FieldError = FieldIssue;

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
  502: 'Bad Gateway',
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

/** 422: one entry per failing field (docs/api-conventions.md). */
export const validationFailed = (
  errors: FieldError[],
  detail = 'The request failed validation.',
  code = 'validation_failed',
  extra: Record<string, unknown> = {},
) => new HttpProblem(422, code, detail, { errors, ...extra });

export const unauthenticated = (detail = 'A valid API key is required.') => new HttpProblem(401, 'unauthenticated', detail);

export const forbidden = (detail: string, code = 'forbidden', extra: Record<string, unknown> = {}) =>
  new HttpProblem(403, code, detail, extra);

export const notFound = (detail: string) => new HttpProblem(404, 'not_found', detail);

export const methodNotAllowed = (detail: string) => new HttpProblem(405, 'method_not_allowed', detail);

export const conflict = (detail: string, extra: Record<string, unknown> = {}, code = 'conflict') =>
  new HttpProblem(409, code, detail, extra);

export const gone = (detail: string, code: string, extra: Record<string, unknown> = {}) => new HttpProblem(410, code, detail, extra);

export const payloadTooLarge = (detail: string, extra: Record<string, unknown>) => new HttpProblem(413, 'payload_too_large', detail, extra);

export const unsupportedMediaType = (detail: string, extra: Record<string, unknown> = {}) =>
  new HttpProblem(415, 'unsupported_media_type', detail, extra);

export const badRequest = (code: string, detail: string, extra: Record<string, unknown> = {}) => new HttpProblem(400, code, detail, extra);

export const tooManyRequests = (detail: string, retryAfterSeconds: number) =>
  new HttpProblem(
    429,
    'too_many_requests',
    detail,
    { retry_after_seconds: retryAfterSeconds },
    { 'Retry-After': String(retryAfterSeconds) },
  );

/** 5xx answers never show what went wrong inside: the log has it, under the request id the answer carries. */
export const internalError = (requestId: string) =>
  new HttpProblem(500, 'internal_error', `Something went wrong on the box. Quote request id ${requestId} when reporting it.`, {
    request_id: requestId,
  });

export const badGateway = (code: string, detail: string, extra: Record<string, unknown> = {}) => new HttpProblem(502, code, detail, extra);

export const serviceUnavailable = (code: string, detail: string, extra: Record<string, unknown> = {}) =>
  new HttpProblem(503, code, detail, extra);

export const insufficientStorage = (detail: string) => new HttpProblem(507, 'insufficient_storage', detail);

/**
 * The answer to an error thrown below the HTTP layer: each kind of domain error has one status.
 * A write refused for want of space answers 507 wherever it happened (an upload being spooled, a
 * file moved, SQLite's SQLITE_FULL). Anything else is not a problem of the request: null, and the
 * caller answers 500.
 */
export function problemOf(err: unknown): HttpProblem | null {
  if (err instanceof HttpProblem) return err;
  if (err instanceof DomainError) {
    if (err instanceof Invalid) return validationFailed(err.issues, err.message, err.code, err.extra);
    if (err instanceof NotFound) return notFound(err.message);
    if (err instanceof Conflict) return conflict(err.message, err.extra, err.code);
    if (err instanceof Gone) return gone(err.message, err.code, err.extra);
    if (err instanceof TooLarge) return payloadTooLarge(err.message, err.extra);
    if (err instanceof UnsupportedMedia) return unsupportedMediaType(err.message, err.extra);
    if (err instanceof Refused) return badRequest(err.code, err.message, err.extra);
    if (err instanceof Forbidden) return forbidden(err.message, err.code, err.extra);
    if (err instanceof Unavailable) return serviceUnavailable(err.code, err.message, err.extra);
    if (err instanceof Busy)
      return new HttpProblem(503, err.code, err.message, err.extra, { 'Retry-After': String(err.retryAfterSeconds) });
    if (err instanceof UpstreamFailed) return badGateway(err.code, err.message, err.extra);
    if (err instanceof StorageFull) return insufficientStorage(err.message);
  }
  if (isStorageFull(err)) return insufficientStorage(new StorageFull().message);
  if (isDatabaseUnreachable(err))
    return serviceUnavailable('database_unavailable', 'The database cannot be reached now; nothing was changed. Try again shortly.');
  return null;
}
