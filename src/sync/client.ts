import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import type { HelloAnswer, PullAnswer, PushAnswer, WireChange } from './wire.js';
import type { UploadState } from './upstream.js';

/**
 * The box's side of the wire: plain HTTP to the upstream's /api/sync/v1 routes, with the
 * organization's admin key (UPSTREAM_KEY) in a header. Every call has a deadline; what went
 * wrong is sorted into what the agent does about it (docs/sync.md, "Offline and backoff").
 */

export type Failure =
  /** No answer, a cut answer, a deadline passed, a 5xx: try again later. */
  | 'offline'
  /** 401: the key is unknown or revoked upstream; syncing stops. */
  | 'unauthorized'
  /** 403/404 on the link itself: the key's organization is not this one's. */
  | 'forbidden'
  /** 409 cursor_unknown: the upstream is another (reset) one; pull from the start. */
  | 'cursor'
  /** Another 4xx: the request itself was refused. */
  | 'refused';

export class UpstreamError extends Error {
  constructor(
    readonly failure: Failure,
    message: string,
    readonly status?: number,
    readonly code?: string,
    readonly body?: unknown,
  ) {
    super(message);
  }
}

export interface Traffic {
  bytesSent: number;
  bytesReceived: number;
  requests: number;
}

const TIMEOUT_MS = 60_000;
const FILE_TIMEOUT_MS = 30 * 60_000;

export class UpstreamClient {
  readonly traffic: Traffic = { bytesSent: 0, bytesReceived: 0, requests: 0 };
  private readonly base: string;

  constructor(
    url: string,
    private readonly key: string,
    private readonly node: string,
  ) {
    this.base = url.replace(/\/+$/, '');
  }

  private async call(
    method: string,
    path: string,
    init: { body?: Buffer | Readable; headers?: Record<string, string>; timeoutMs?: number } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { 'x-api-key': this.key, 'accept-encoding': 'gzip', ...(init.headers ?? {}) };
    let res: Response;
    this.traffic.requests++;
    try {
      res = await fetch(this.base + path, {
        method,
        headers,
        ...(init.body
          ? { body: init.body instanceof Readable ? (Readable.toWeb(init.body) as ReadableStream) : init.body, duplex: 'half' }
          : {}),
        signal: AbortSignal.timeout(init.timeoutMs ?? TIMEOUT_MS),
      } as RequestInit);
    } catch (err) {
      throw new UpstreamError(
        'offline',
        `no answer from the upstream: ${(err as Error).cause ? String((err as Error & { cause: Error }).cause.message ?? (err as Error).cause) : (err as Error).message}`,
      );
    }
    if (init.body instanceof Buffer) this.traffic.bytesSent += init.body.length;
    const length = Number(res.headers.get('content-length') ?? 0);
    if (Number.isFinite(length)) this.traffic.bytesReceived += length;
    if (res.ok) return res;
    let body: { code?: string; detail?: string } | undefined;
    try {
      body = (await res.json()) as { code?: string; detail?: string };
    } catch {
      body = undefined;
    }
    const detail = body?.detail ?? res.statusText;
    if (res.status === 401) throw new UpstreamError('unauthorized', `the upstream refused the key: ${detail}`, 401, body?.code, body);
    if (res.status === 409 && body?.code === 'cursor_unknown') throw new UpstreamError('cursor', detail, 409, body.code, body);
    if (res.status >= 500 || res.status === 429)
      throw new UpstreamError('offline', `the upstream answered ${res.status}: ${detail}`, res.status, body?.code, body);
    if (res.status === 403) throw new UpstreamError('forbidden', `the upstream refused: ${detail}`, 403, body?.code, body);
    throw new UpstreamError('refused', `the upstream answered ${res.status}: ${detail}`, res.status, body?.code, body);
  }

  private async json<T>(res: Response): Promise<T> {
    try {
      return (await res.json()) as T;
    } catch (err) {
      // An answer cut mid-body: nothing is known of what the upstream did, which is safe to retry.
      throw new UpstreamError('offline', `the upstream's answer was cut: ${(err as Error).message}`);
    }
  }

  async hello(): Promise<HelloAnswer> {
    return this.json(await this.call('GET', `/api/sync/v1/hello?node=${encodeURIComponent(this.node)}`));
  }

  async push(changes: WireChange[]): Promise<PushAnswer> {
    const body = gzipSync(Buffer.from(JSON.stringify({ changes })), { level: 6 });
    return this.json(
      await this.call('POST', '/api/sync/v1/push', { body, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } }),
    );
  }

  async pull(cursor: string | null, limit: number): Promise<PullAnswer> {
    const q = new URLSearchParams({ limit: String(limit), node: this.node });
    if (cursor) q.set('cursor', cursor);
    return this.json(await this.call('GET', `/api/sync/v1/changes?${q}`));
  }

  async uploadStatus(sha: string): Promise<UploadState> {
    return this.json(await this.call('GET', `/api/sync/v1/uploads/${sha}`));
  }

  /** Sends a content from byte `offset` of `file` to its end; answers what the upstream holds after. */
  async upload(sha: string, file: string, offset: number, size: number): Promise<UploadState> {
    const body = createReadStream(file, { start: offset });
    const res = await this.call('PATCH', `/api/sync/v1/uploads/${sha}`, {
      body,
      headers: { 'content-type': 'application/offset+octet-stream', 'upload-offset': String(offset) },
      timeoutMs: FILE_TIMEOUT_MS,
    });
    this.traffic.bytesSent += size - offset;
    return this.json(res);
  }

  /** Fetches a content from byte `from` and appends it to `file`; answers the bytes the file holds after. */
  async download(sha: string, file: string, from: number): Promise<number> {
    const res = await this.call('GET', `/api/sync/v1/files/${sha}`, {
      headers: { range: `bytes=${from}-`, 'accept-encoding': 'identity' },
      timeoutMs: FILE_TIMEOUT_MS,
    });
    const start = res.status === 206 ? from : 0;
    // Counted as it arrives, not from the header: a cut download counts what came.
    this.traffic.bytesReceived -= Number(res.headers.get('content-length') ?? 0);
    const out = createWriteStream(file, { flags: start === 0 ? 'w' : 'a' });
    let n = start;
    try {
      for await (const chunk of Readable.fromWeb(res.body as never)) {
        n += (chunk as Buffer).length;
        this.traffic.bytesReceived += (chunk as Buffer).length;
        if (!out.write(chunk)) await once(out, 'drain');
      }
    } catch (err) {
      // Bytes before the cut stay: the next try goes on from there.
      throw new UpstreamError('offline', `a download was cut: ${(err as Error).message}`);
    } finally {
      out.end();
      await once(out, 'close').catch(() => undefined);
    }
    return n;
  }
}
