import type { Context } from 'koa';
import type { ValidateFunction } from 'ajv';
import { bodyAjv, paramAjv } from './ajv.js';
import { Invalid, type FieldIssue, type FieldSource } from '../errors.js';
import type { Db } from '../db/database.js';
import type { Actor, Writer } from '../db/store.js';
import type { Principal } from '../auth/principal.js';
import type { Services } from '../services.js';
import type { ScopeName, Scopes } from './scope.js';

/**
 * A route is declared once, with its schemas; the same declaration validates
 * requests, authorizes, runs the handler and becomes its OpenAPI operation.
 */
export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/**
 * - none: no credential (health, docs, signing in)
 * - key: any active key of the organization in the path (or any org for org-less paths)
 * - admin: an admin-role key of the organization in the path
 * - admin-token: the appliance admin token
 * - header-key: like `key`, but only from a header (never the cookie or the query)
 */
export type AuthMode = 'none' | 'key' | 'admin' | 'admin-token' | 'header-key';

export type JsonSchema = Record<string, unknown>;

export interface ObjectSchema extends JsonSchema {
  type: 'object';
  properties: Record<string, JsonSchema>;
  required?: string[];
}

export interface ResponseSpec {
  description: string;
  schema?: JsonSchema;
  /** Defaults to application/json. */
  contentType?: string;
  headers?: Record<string, { description: string; schema: JsonSchema }>;
}

export interface MultipartSpec {
  /** Text fields, validated like a body. */
  fields: ObjectSchema;
  files: { name: string; maxCount: number; required: boolean; description: string }[];
  /** Cap per file, bytes, read from configuration at request time. */
  limitBytes: (ctx: Context) => number;
}

export interface RawBodySpec {
  contentTypes: string[];
  description: string;
  limitBytes: (ctx: Context) => number;
}

export interface UploadedFile {
  fieldname: string;
  originalname: string;
  path: string;
  size: number;
  mimetype: string;
}

/** What a route's handler gets: the validated request, its resolved scope, and the write transaction when it writes. */
export interface RouteCall<P = any, Q = any, B = any, S extends ScopeName = ScopeName, W extends boolean = boolean> {
  params: P;
  query: Q;
  body: B;
  /** How many bytes the JSON body had as received (limits on stored bodies count what was sent). */
  bodyBytes?: number;
  headers: Record<string, unknown>;
  files: UploadedFile[];
  rawFile?: UploadedFile;
  /** The record the path names, resolved by the pipeline (src/http/scope.ts): a path across parents or organizations was a 404 before the handler. */
  scope: Scopes[S];
  /** The Writer of the route's one transaction (`write: true`); the scope was read inside it. */
  w: W extends true ? Writer : undefined;
  /** Where to read: the transaction on a write route, the database otherwise. */
  db: Db;
  services: Services;
  actor: Actor;
  principal: Principal | undefined;
  /** The success status and headers of the answer, for the few routes that set them (202, Location). */
  reply: { status?: number; headers: Record<string, string> };
  /** Koa's context, for the routes whose answer is HTTP itself (the session cookie, a file streamed, the docs page). */
  http: Context;
}

/**
 * A route's declaration. `scope` and `write` are required exactly when the handler's types use
 * them: a handler typed for a cycle cannot be declared without `scope: 'cycle'`.
 */
export type RouteSpec<P = any, Q = any, B = any, S extends ScopeName = any, W extends boolean = any> = RouteFields<P, Q, B, S, W> &
  (ScopeName extends S ? unknown : S extends 'none' ? { scope?: 'none' } : { scope: S }) &
  (boolean extends W ? unknown : W extends true ? { write: true } : { write?: false });

interface RouteFields<P, Q, B, S extends ScopeName, W extends boolean> {
  method: HttpMethod;
  /** OpenAPI style, e.g. /api/organizations/{organization_id}/farms */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  auth: AuthMode;
  /** What the route works on: the pipeline resolves it from the path (and the key's organization) before the handler. Default none. */
  scope?: S;
  /** Whether the handler writes: the pipeline runs it in one write transaction with the caller as actor. Default false. */
  write?: W;
  params?: ObjectSchema;
  query?: ObjectSchema;
  headers?: ObjectSchema;
  body?: JsonSchema;
  multipart?: MultipartSpec;
  rawBody?: RawBodySpec;
  /**
   * Admission, after authentication and before the body is read: throws a domain error (Busy) to
   * turn the request away at the cost of its headers alone, or returns the release, called once
   * the answer is done or the connection gone.
   */
  admit?: (services: Services) => () => void;
  responses: Record<number, ResponseSpec>;
  /** Problem statuses this route can answer besides those implied by auth and validation. */
  errors?: number[];
  handler: (call: RouteCall<P, Q, B, S, W>) => Promise<unknown> | unknown;
}

export interface CompiledRoute extends RouteSpec {
  koaPath: string;
  successStatus: number;
  validators: {
    params?: ValidateFunction;
    query?: ValidateFunction;
    headers?: ValidateFunction;
    body?: ValidateFunction;
    fields?: ValidateFunction;
    responses: Map<number, ValidateFunction>;
  };
}

/**
 * A JSON answer already serialized (e.g. a cached registry tree): sent as is,
 * and still checked against the response schema when checking is on.
 */
export class JsonText {
  private encoded?: Buffer;

  constructor(
    readonly text: string,
    readonly etag?: string,
  ) {}

  /**
   * The text as UTF-8, made once: a cached answer is sent many times, and a string body
   * is measured and encoded again on every send (for the 3 MB tree of a large
   * organization, two thirds of the time it took to answer).
   */
  get bytes(): Buffer {
    return (this.encoded ??= Buffer.from(this.text, 'utf8'));
  }
}

export function defineRoute<
  P = Record<string, string>,
  Q = Record<string, unknown>,
  B = unknown,
  S extends ScopeName = 'none',
  W extends boolean = false,
>(spec: RouteSpec<P, Q, B, S, W>): RouteSpec<P, Q, B, S, W> {
  return spec;
}

export function toKoaPath(openApiPath: string): string {
  return openApiPath.replace(/\{([a-z_]+)\}/g, ':$1');
}

export function compileRoute(spec: RouteSpec): CompiledRoute {
  const success = Object.keys(spec.responses)
    .map(Number)
    .filter((s) => s >= 200 && s < 300)
    .sort()[0];
  if (!success) throw new Error(`route ${spec.operationId} declares no success response`);
  const responses = new Map<number, ValidateFunction>();
  for (const [status, r] of Object.entries(spec.responses)) {
    if (r.schema && (r.contentType ?? 'application/json') === 'application/json') responses.set(Number(status), bodyAjv.compile(r.schema));
  }
  return {
    ...spec,
    koaPath: toKoaPath(spec.path),
    successStatus: success,
    validators: {
      params: spec.params && paramAjv.compile(spec.params),
      query: spec.query && paramAjv.compile(spec.query),
      headers: spec.headers && paramAjv.compile(spec.headers),
      body: spec.body && bodyAjv.compile(spec.body),
      fields: spec.multipart && paramAjv.compile(spec.multipart.fields),
      responses,
    },
  };
}

/** Turns ajv's errors into one entry per failing field (docs/api-conventions.md, "Errors"). */
export function fieldErrors(where: FieldSource, validate: ValidateFunction): FieldIssue[] {
  const seen = new Map<string, FieldIssue>();
  for (const e of validate.errors ?? []) {
    let name = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
    let message = e.message ?? 'is invalid';
    if (e.keyword === 'required') {
      const missing = (e.params as { missingProperty: string }).missingProperty;
      name = name ? `${name}.${missing}` : missing;
      message = 'is required';
    } else if (e.keyword === 'additionalProperties') {
      const extra = (e.params as { additionalProperty: string }).additionalProperty;
      name = name ? `${name}.${extra}` : extra;
      message = 'is not an accepted field';
    } else if (e.keyword === 'enum') {
      message = `must be one of: ${(e.params as { allowedValues: unknown[] }).allowedValues.map(String).join(', ')}`;
    } else if (e.keyword === 'format' && (e.params as { format: string }).format === 'iana-zone') {
      message = 'must be an IANA time zone such as Europe/Amsterdam';
    }
    const key = `${where}:${name}`;
    if (!seen.has(key)) seen.set(key, { in: where, name: name || '(body)', message });
  }
  return [...seen.values()];
}

export function validatePart(where: FieldSource, validate: ValidateFunction | undefined, value: unknown): FieldIssue[] {
  if (!validate) return [];
  return validate(value) ? [] : fieldErrors(where, validate);
}

const DECIMAL_INTEGER = /^[+-]?\d+$/;
const DECIMAL_NUMBER = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/**
 * Path, query, header and form values arrive as text, and ajv's coercion reads text as
 * JavaScript does: "0x10" as 16, and "Infinity" or "1e309" as a number that then passes every
 * bound (the field ends up null). A field declared a number takes decimal text of a finite number
 * only; one declared an integer, digits only.
 */
export function numberTextIssues(where: FieldSource, schema: ObjectSchema | undefined, values: Record<string, unknown>): FieldIssue[] {
  if (!schema) return [];
  const issues: FieldIssue[] = [];
  for (const [name, prop] of Object.entries(schema.properties)) {
    const types = ([] as unknown[]).concat(prop.type ?? []);
    const integer = types.includes('integer') && !types.includes('number');
    if (!integer && !types.includes('number')) continue;
    const value = values[name];
    for (const text of Array.isArray(value) ? value : [value]) {
      if (typeof text !== 'string') continue;
      const ok = (integer ? DECIMAL_INTEGER : DECIMAL_NUMBER).test(text) && Number.isFinite(Number(text));
      if (!ok) {
        issues.push({
          in: where,
          name,
          message: integer ? 'must be a whole number in decimal digits, e.g. 16' : 'must be a finite number in decimal notation, e.g. 0.5',
        });
        break;
      }
    }
  }
  return issues;
}

/**
 * A part that arrives as text (path, query, headers, form fields), checked as numbers are
 * written, then against its schema; the values are coerced in place only when that check passed
 * (a request with a number written otherwise is refused whatever the rest says).
 */
export function validateTextPart(
  where: FieldSource,
  schema: ObjectSchema | undefined,
  validate: ValidateFunction | undefined,
  values: Record<string, unknown>,
): FieldIssue[] {
  const text = numberTextIssues(where, schema, values);
  if (text.length === 0) return validatePart(where, validate, values);
  const rest = { ...values };
  for (const issue of text) delete rest[issue.name];
  const named = new Set(text.map((i) => i.name));
  return [...text, ...validatePart(where, validate, rest).filter((i) => !named.has(i.name))];
}

export function assertValid(errors: FieldIssue[]): void {
  if (errors.length) throw new Invalid(errors);
}
