import type { Context } from 'koa';
import type { ValidateFunction } from 'ajv';
import { bodyAjv, paramAjv } from './ajv.js';
import { HttpProblem, validationFailed, type FieldError, type ProblemLocation } from './problem.js';

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

export interface RouteInput<P = Record<string, string>, Q = Record<string, unknown>, B = unknown> {
  params: P;
  query: Q;
  headers: Record<string, unknown>;
  body: B;
  files: UploadedFile[];
  /** The raw body spooled to disk, for `rawBody` routes. */
  rawFile?: UploadedFile;
}

export interface RouteSpec<P = any, Q = any, B = any> {
  method: HttpMethod;
  /** OpenAPI style, e.g. /api/organizations/{organization_id}/farms */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  auth: AuthMode;
  params?: ObjectSchema;
  query?: ObjectSchema;
  headers?: ObjectSchema;
  body?: JsonSchema;
  multipart?: MultipartSpec;
  rawBody?: RawBodySpec;
  responses: Record<number, ResponseSpec>;
  /** Problem statuses this route can answer besides those implied by auth and validation. */
  errors?: number[];
  handler: (ctx: Context, input: RouteInput<P, Q, B>) => Promise<unknown> | unknown;
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

export function defineRoute<P = Record<string, string>, Q = Record<string, unknown>, B = unknown>(
  spec: RouteSpec<P, Q, B>,
): RouteSpec<P, Q, B> {
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

/** Turns ajv's errors into one entry per failing field (conventions.md, 422). */
export function fieldErrors(where: ProblemLocation, validate: ValidateFunction): FieldError[] {
  const seen = new Map<string, FieldError>();
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

export function validatePart(where: ProblemLocation, validate: ValidateFunction | undefined, value: unknown): FieldError[] {
  if (!validate) return [];
  return validate(value) ? [] : fieldErrors(where, validate);
}

export function assertValid(errors: FieldError[]): void {
  if (errors.length) throw validationFailed(errors);
}

export function isProblem(err: unknown): err is HttpProblem {
  return err instanceof HttpProblem;
}
