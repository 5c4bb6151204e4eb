import type { ValidateFunction } from 'ajv';
import { bodyAjv } from '../http/ajv.js';
import { fieldErrors, type JsonSchema } from '../http/route.js';

/** A field at fault in a change, named as the API names body fields (conventions.md, 422). */
export interface SyncFieldError {
  in?: string;
  name: string;
  message: string;
}

/**
 * A change the receiver will not apply: the status and code the API would answer for the same
 * write made there (422 invalid, 409 against a rule, 403 another organization, 404 a parent it
 * does not hold). The sending side quarantines it with this reason (docs/sync.md, "Refusals").
 */
export class SyncRefused extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    detail: string,
    readonly errors?: SyncFieldError[],
  ) {
    super(detail);
  }
}

export const invalid = (detail: string, errors?: SyncFieldError[]): SyncRefused =>
  new SyncRefused(422, 'validation_failed', detail, errors);

export const fieldInvalid = (name: string, message: string): SyncRefused =>
  new SyncRefused(422, 'validation_failed', `${name} ${message}`, [{ in: 'body', name, message }]);

/**
 * Any error a domain rule throws while a change is checked (the API's own 409/422/413 helpers)
 * as a refusal; null for an error that is not about the change (a bug, a full disk), which must
 * fail the batch rather than quarantine a good change.
 */
export function asRefusal(err: unknown): SyncRefused | null {
  if (err instanceof SyncRefused) return err;
  const e = err as { status?: unknown; code?: unknown; message?: unknown; extra?: { errors?: unknown }; errors?: unknown };
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500 && typeof e.code === 'string') {
    const errors = (e.extra?.errors ?? e.errors) as SyncFieldError[] | undefined;
    return new SyncRefused(e.status, e.code, String(e.message ?? e.code), Array.isArray(errors) ? errors : undefined);
  }
  return null;
}

const compiled = new WeakMap<JsonSchema, ValidateFunction>();

/** Checks a record's fields against the API's own field schemas; 422 naming each field at fault. */
export function checkFields(schema: JsonSchema, row: Record<string, unknown>, what: string): void {
  let validate = compiled.get(schema);
  if (!validate) compiled.set(schema, (validate = bodyAjv.compile(schema)));
  if (validate(row)) return;
  const errors = fieldErrors('body', validate);
  throw invalid(`The ${what} is invalid: ${errors.map((e) => `${e.name} ${e.message}`).join('; ')}.`, errors);
}

/** An object schema over some of a record's columns, each with the schema the API gives the field. */
export function rowSchema(properties: Record<string, JsonSchema>, required: string[]): JsonSchema {
  return { type: 'object', properties, required };
}
