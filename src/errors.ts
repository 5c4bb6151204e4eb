/**
 * Errors of the domain. Commands, queries, models, the import engine and the folder watcher
 * throw these; they say what went wrong in the grower's terms and carry what a caller needs to
 * act on it (the ids in conflict, the fields at fault). None of them knows HTTP: the HTTP layer
 * alone turns each kind into its problem+json answer (src/http/problem.ts, `problemOf`), and
 * code that runs outside a request (the watcher, jobs) reads the same errors as plain failures.
 *
 * `code` is the stable snake_case code clients branch on (docs/api-conventions.md, "Errors");
 * `extra` holds the fields the answer carries besides the standard ones.
 */

/** Where a field of the request came from; a domain function that reads one field of the query says so. */
export type FieldSource = 'path' | 'query' | 'header' | 'body';

export interface FieldIssue {
  in: FieldSource;
  name: string;
  message: string;
}

export type Extra = Record<string, unknown>;

export abstract class DomainError extends Error {
  constructor(
    detail: string,
    readonly code: string,
    readonly extra: Extra = {},
  ) {
    super(detail);
  }
}

/** No such record here (or it belongs to another organization, which must not be told apart). */
export class NotFound extends DomainError {
  constructor(readonly what = 'resource') {
    super(`No such ${what}.`, 'not_found');
  }
}

/** Input that cannot be accepted, field by field. */
export class Invalid extends DomainError {
  constructor(
    readonly issues: FieldIssue[],
    detail = 'The request failed validation.',
    code = 'validation_failed',
    extra: Extra = {},
  ) {
    super(detail, code, extra);
  }

  /** One field at fault; the detail names it. */
  static field(name: string, message: string, where: FieldSource = 'body'): Invalid {
    return new Invalid([{ in: where, name, message }], `${name}: ${message}`);
  }
}

/** The request collides with what is stored (a delete of a level that holds records, a second correction). */
export class Conflict extends DomainError {
  constructor(detail: string, extra: Extra = {}, code = 'conflict') {
    super(detail, code, extra);
  }
}

/** What was asked for existed and has been removed for good (a walk's frames past their keep time). */
export class Gone extends DomainError {
  constructor(detail: string, code: string, extra: Extra = {}) {
    super(detail, code, extra);
  }
}

/** Larger than the limit for it; `limitBytes` null where the limit is not a size (too many form fields). */
export class TooLarge extends DomainError {
  constructor(
    readonly limitBytes: number | null,
    detail = `The upload is larger than the limit of ${limitBytes} bytes.`,
    extra: Extra = {},
  ) {
    super(detail, 'payload_too_large', limitBytes === null ? extra : { limit_bytes: limitBytes, ...extra });
  }
}

/** A file or body of a kind this operation does not take. */
export class UnsupportedMedia extends DomainError {
  constructor(detail: string, extra: Extra = {}) {
    super(detail, 'unsupported_media_type', extra);
  }
}

/** Readable input that cannot be used as it is (a climate file with blocking problems, a broken multipart body). */
export class Refused extends DomainError {
  constructor(code: string, detail: string, extra: Extra = {}) {
    super(detail, code, extra);
  }
}

/** The caller may not do this (a role, or an organization that is not the caller's). */
export class Forbidden extends DomainError {
  constructor(detail: string, code = 'forbidden', extra: Extra = {}) {
    super(detail, code, extra);
  }
}

/** A part the box needs is not available now (ffmpeg missing, a service that does not answer in time). */
export class Unavailable extends DomainError {
  constructor(code: string, detail: string, extra: Extra = {}) {
    super(detail, code, extra);
  }
}

/** Too much is under way to take this now; nothing of it was done. Sending it again after `retryAfterSeconds` is expected. */
export class Busy extends DomainError {
  constructor(
    code: string,
    detail: string,
    readonly retryAfterSeconds: number,
  ) {
    super(detail, code, { retry_after_seconds: retryAfterSeconds });
  }
}

/** Another service answered, but not with something usable (an upstream or a weather service answering garbage). */
export class UpstreamFailed extends DomainError {
  constructor(code: string, detail: string, extra: Extra = {}) {
    super(detail, code, extra);
  }
}

/**
 * The box's disk (or the DATA_DIR quota) is full. That is the appliance's condition, not a fault
 * of the request, and growers must not be told their file is broken.
 */
export class StorageFull extends DomainError {
  constructor() {
    super(
      "The appliance's disk is full, so nothing was stored. Free space on it (old walks' clips and frames take the most) and try again.",
      'insufficient_storage',
    );
  }
}

/** Whether an error is a write refused for want of space: ENOSPC, EDQUOT, or SQLite's SQLITE_FULL. */
export function isStorageFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL';
}

/**
 * An error that says the PostgreSQL server cannot be had now, not that the request was wrong: the
 * server refusing or closing connections (a restart, connections disallowed, an administrator's
 * terminate), or the connection lost mid-statement. Answered 503 `database_unavailable`, never
 * 500. (No connection at all is already that answer: src/db/postgres.ts, `readerPool`, and
 * Store.write.) Read by shape, a SQLSTATE in `code` beside a `severity`, or the driver's message
 * for a lost connection, so that this module needs no driver.
 */
export function isDatabaseUnreachable(err: unknown): boolean {
  const e = err as { message?: unknown; code?: unknown; severity?: unknown } | null;
  const code = typeof e?.code === 'string' ? e.code : '';
  const message = typeof e?.message === 'string' ? e.message : '';
  if (typeof e?.severity === 'string' && /^[0-9A-Z]{5}$/.test(code))
    // 08: connection exception; 57P: operator intervention (shutdown, terminate, cannot connect now);
    // 55000 saying so: a database closed to connections.
    return code.startsWith('08') || code.startsWith('57P') || (code === '55000' && /accepting connections/.test(message));
  return /^Connection terminated|is not queryable/.test(message);
}
