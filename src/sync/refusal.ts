import type { ValidateFunction } from 'ajv';
import { bodyAjv } from '../http/ajv.js';
import { fieldErrors, type JsonSchema } from '../http/route.js';
import {
  Conflict,
  DomainError,
  Forbidden,
  Gone,
  Invalid,
  NotFound,
  Refused,
  TooLarge,
  UnsupportedMedia,
  type FieldIssue,
} from '../errors.js';

/**
 * A change the receiver will not apply, as the wire tells it: the status and code the API
 * answers for the same write made there (422 invalid, 409 against a rule, 404 a parent not
 * held, 403 another organization). The sending side quarantines it with this reason
 * (docs/sync.md, "Refusals"). The kinds throw the domain's own errors (src/errors.ts); this is
 * the one place they become wire statuses, the same ones src/http/problem.ts `problemOf` gives
 * them (test/sync/refusal.test.ts keeps the two in step).
 */
export interface Refusal {
  status: number;
  code: string;
  detail: string;
  errors?: FieldIssue[];
}

/**
 * A domain error that says the change itself cannot be applied, as its refusal; null for
 * anything else (a bug, a full disk, a service unavailable), which must fail the batch rather
 * than quarantine a good change.
 */
export function refusalOf(err: unknown): Refusal | null {
  if (!(err instanceof DomainError)) return null;
  const status =
    err instanceof Invalid
      ? 422
      : err instanceof NotFound
        ? 404
        : err instanceof Conflict
          ? 409
          : err instanceof Gone
            ? 410
            : err instanceof TooLarge
              ? 413
              : err instanceof UnsupportedMedia
                ? 415
                : err instanceof Refused
                  ? 400
                  : err instanceof Forbidden
                    ? 403
                    : null;
  if (status === null) return null;
  return { status, code: err.code, detail: err.message, ...(err instanceof Invalid && err.issues.length ? { errors: err.issues } : {}) };
}

/** A record or parent this instance does not hold, said in a sentence (NotFound's own is "No such …"). */
export function notHeld(detail: string): NotFound {
  const e = new NotFound('record');
  e.message = detail;
  return e;
}

export const invalid = (detail: string, errors: FieldIssue[] = []): Invalid => new Invalid(errors, detail);

export const fieldInvalid = (name: string, message: string): Invalid => Invalid.field(name, message, 'body');

const compiled = new WeakMap<JsonSchema, ValidateFunction>();

function validatorOf(schema: JsonSchema): ValidateFunction {
  let validate = compiled.get(schema);
  if (!validate) compiled.set(schema, (validate = bodyAjv.compile(schema)));
  return validate;
}

/**
 * Compiles a record check now, when its module loads, as the routes' validators are
 * (src/http/route.ts), not at the first record it checks: a process's first pushed batch would
 * pay for it (the stored walk result's schema takes about 60 ms to compile). Only for schemas made
 * once: ajv keeps every schema it compiled.
 */
export function checkedAhead<T extends JsonSchema>(schema: T): T {
  validatorOf(schema);
  return schema;
}

/** Checks a record's fields against the API's own field schemas; 422 naming each field at fault. */
export function checkFields(schema: JsonSchema, row: Record<string, unknown>, what: string): void {
  const validate = validatorOf(schema);
  if (validate(row)) return;
  const errors = fieldErrors('body', validate);
  throw invalid(`The ${what} is invalid: ${errors.map((e) => `${e.name} ${e.message}`).join('; ')}.`, errors);
}

/** An object schema over some of a record's columns, each with the schema the API gives the field; its check compiled ahead. */
export function rowSchema(properties: Record<string, JsonSchema>, required: string[]): JsonSchema {
  return checkedAhead({ type: 'object', properties, required });
}
