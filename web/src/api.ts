// The app's one way to the box: the documented routes of /openapi.json, with the session cookie
// (service_key, HttpOnly) that POST /api/session sets. No key is kept by the app itself.

export interface FieldProblem {
  in?: string;
  name: string;
  message: string;
}

/** An answer that is not 2xx, with the problem+json the box sent (conventions.md, "Errors"). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly detail: string,
    readonly errors: FieldProblem[] = [],
    readonly body: Record<string, unknown> = {},
  ) {
    super(detail);
  }
}

/** Called when an answer says the session is gone (401 on a route that needs a key). */
let onUnauthenticated: (() => void) | undefined;
export function whenSignedOut(fn: () => void) {
  onUnauthenticated = fn;
}

function problemOf(status: number, text: string, contentType: string | null): ApiError {
  if (contentType?.includes('json') && text) {
    try {
      const p = JSON.parse(text) as Record<string, unknown>;
      const detail = typeof p.detail === 'string' ? p.detail : `The box answered ${status}.`;
      return new ApiError(status, String(p.code ?? 'error'), detail, Array.isArray(p.errors) ? (p.errors as FieldProblem[]) : [], p);
    } catch {
      /* not JSON after all: the plain message below */
    }
  }
  if (status === 0) return new ApiError(0, 'network', 'The box did not answer. Check the wifi and try again; nothing you typed is lost.');
  return new ApiError(status, 'error', `The box answered ${status}${text && text.length < 200 ? `: ${text}` : ''}.`);
}

export type Query = Record<string, string | number | boolean | undefined | null>;

export function withQuery(path: string, query?: Query): string {
  if (!query) return path;
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `${path}${path.includes('?') ? '&' : '?'}${s}` : path;
}

export interface RequestOptions {
  query?: Query;
  json?: unknown;
  form?: FormData;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Answer the raw Response (for CSV downloads). */
  raw?: boolean;
}

export async function api<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  let body: BodyInit | undefined;
  if (options.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.json);
  } else if (options.form) body = options.form;
  let res: Response;
  try {
    res = await fetch(withQuery(path, options.query), { method, headers, body, credentials: 'same-origin', signal: options.signal });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw problemOf(0, '', null);
  }
  if (options.raw && res.ok) return res as T;
  const text = await res.text();
  if (!res.ok) {
    const problem = problemOf(res.status, text, res.headers.get('content-type'));
    if (res.status === 401 && path !== '/api/session') onUnauthenticated?.();
    throw problem;
  }
  return (text && res.headers.get('content-type')?.includes('json') ? JSON.parse(text) : text) as T;
}

export const get = <T = any>(path: string, query?: Query, signal?: AbortSignal) => api<T>('GET', path, { query, signal });

/**
 * A multipart upload through XMLHttpRequest, the one browser API that reports upload progress.
 * `onProgress` gets the share sent, 0 to 1.
 */
export function upload<T = any>(
  path: string,
  form: FormData,
  onProgress: (share: number) => void,
  headers: Record<string, string> = {},
): { done: Promise<T>; abort: () => void } {
  const xhr = new XMLHttpRequest();
  const done = new Promise<T>((resolve, reject) => {
    xhr.open('POST', path);
    xhr.setRequestHeader('accept', 'application/json');
    for (const [k, v] of Object.entries(headers)) xhr.setRequestHeader(k, v);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      const type = xhr.getResponseHeader('content-type');
      if (xhr.status >= 200 && xhr.status < 300) {
        onProgress(1);
        resolve((type?.includes('json') ? JSON.parse(xhr.responseText) : xhr.responseText) as T);
      } else {
        if (xhr.status === 401) onUnauthenticated?.();
        reject(problemOf(xhr.status, xhr.responseText, type));
      }
    };
    xhr.onerror = () => reject(problemOf(0, '', null));
    xhr.onabort = () => reject(new ApiError(0, 'aborted', 'The upload was stopped.'));
    xhr.send(form);
  });
  return { done, abort: () => xhr.abort() };
}

/** A random id for Idempotency-Key: crypto.randomUUID needs a secure context, which a box on http is not. */
export function randomId(): string {
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

export interface Counts {
  green: number;
  turning: number;
  red: number;
  total: number;
}

export interface Session {
  key_id: string;
  organization_id: string;
  role: 'admin' | 'member';
  name: string;
}

export interface Paged<T> {
  items: T[];
  total: number;
  limit: number;
  offset: number;
}
