import { createReadStream, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { gunzipSync, gzipSync } from 'node:zlib';
import type { HelloAnswer, PullAnswer, PushAnswer, WireChange } from './wire.js';
import type { UploadState } from './upstream.js';

/**
 * The box's side of the wire: plain HTTP to the upstream's /api/sync/v1 routes, with the
 * organization's admin key (UPSTREAM_KEY) in a header. node:http rather than fetch: fetch
 * quietly sends an idempotent request again when a connection is reset, so a link that accepts
 * and drops connections would hold a round until its deadline; here every failure is seen at
 * once and the round backs off. Every call has a deadline, and a connection that goes quiet is
 * dropped; what went wrong is sorted into what the agent does about it (docs/sync.md, "Offline
 * and backoff").
 */

export type Failure =
  /** No answer, a cut answer, a deadline passed, a 5xx: try again later. */
  | 'offline'
  /** 401: the key is unknown or revoked upstream; syncing stops. */
  | 'unauthorized'
  /** 403 on the link itself: the key's organization is not this one's. */
  | 'forbidden'
  /** 409 cursor_unknown: the upstream is another (reset) one; pull from the start. */
  | 'cursor'
  /** Another 4xx: the request itself was refused. */
  | 'refused'
  /** 503 with Retry-After: the upstream is up but full; the same request again after `retryAfterMs`. */
  | 'busy';

export class UpstreamError extends Error {
  constructor(
    readonly failure: Failure,
    message: string,
    readonly status?: number,
    readonly code?: string,
    readonly body?: unknown,
    readonly retryAfterMs?: number,
  ) {
    super(message);
  }
}

/** Retry-After as delay-seconds or an HTTP date (RFC 9110 10.2.3), in ms from `now`; null when absent or unreadable. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return null;
  if (/^\d+$/.test(v.trim())) return Number(v.trim()) * 1000;
  // An HTTP date names its day and month ("Sat, 28 Nov 2026 12:00:05 GMT"); Date.parse alone would take "-1" for a year.
  const at = /[a-z]{3}/i.test(v) ? Date.parse(v) : NaN;
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

export interface Traffic {
  bytesSent: number;
  bytesReceived: number;
  requests: number;
}

/** A call with no byte either way for this long is dead. */
const IDLE_MS = 30_000;
/** Most time for a call that moves records (a pulled page of 4 MiB on a slow link included). */
const CALL_MS = 120_000;
/** Most time for one file. */
const FILE_MS = 60 * 60_000;

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export class UpstreamClient {
  readonly traffic: Traffic = { bytesSent: 0, bytesReceived: 0, requests: 0 };
  private readonly url: URL;
  private readonly agent: http.Agent;

  constructor(
    url: string,
    private readonly key: string,
    private readonly node: string,
  ) {
    this.url = new URL(url.replace(/\/+$/, '') + '/');
    this.agent =
      this.url.protocol === 'https:'
        ? new https.Agent({ keepAlive: true, maxSockets: 2 })
        : new http.Agent({ keepAlive: true, maxSockets: 2 });
  }

  close(): void {
    this.agent.destroy();
  }

  /** Sends one request; the answer's body is read whole (decompressed), or streamed to `sink`. */
  private send(
    method: string,
    path: string,
    init: {
      body?: Buffer | Readable;
      headers?: Record<string, string>;
      timeoutMs?: number;
      sink?: (res: http.IncomingMessage) => Promise<void>;
    } = {},
  ): Promise<Answer> {
    const target = new URL(path.replace(/^\//, ''), this.url);
    const lib = target.protocol === 'https:' ? https : http;
    this.traffic.requests++;
    return new Promise<Answer>((resolve, reject) => {
      let settled = false;
      const fail = (message: string) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        req.destroy();
        reject(new UpstreamError('offline', message));
      };
      const req = lib.request(
        target,
        {
          method,
          agent: this.agent,
          headers: { 'x-api-key': this.key, 'accept-encoding': 'gzip', ...(init.headers ?? {}) },
        },
        (res) => {
          res.on('error', (err) => fail(`the upstream's answer was cut: ${err.message}`));
          res.on('aborted', () => fail("the upstream's answer was cut"));
          const ok = (res.statusCode ?? 0) < 300;
          if (ok && init.sink) {
            init.sink(res).then(
              () => {
                if (settled) return;
                settled = true;
                clearTimeout(deadline);
                resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.alloc(0) });
              },
              (err: Error) => fail(`a download was cut: ${err.message}`),
            );
            return;
          }
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => {
            this.traffic.bytesReceived += d.length;
            chunks.push(d);
          });
          res.on('end', () => {
            if (settled) return;
            if (!res.complete) return fail("the upstream's answer was cut");
            settled = true;
            clearTimeout(deadline);
            let body = Buffer.concat(chunks);
            try {
              if (res.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
            } catch {
              return reject(new UpstreamError('offline', "the upstream's answer was cut (bad gzip)"));
            }
            resolve({ status: res.statusCode!, headers: res.headers, body });
          });
        },
      );
      const deadline = setTimeout(
        () => fail(`no answer from the upstream in ${(init.timeoutMs ?? CALL_MS) / 1000} s`),
        init.timeoutMs ?? CALL_MS,
      );
      req.setTimeout(IDLE_MS, () => fail(`the upstream went quiet for ${IDLE_MS / 1000} s`));
      req.on('error', (err: NodeJS.ErrnoException) => fail(`no answer from the upstream: ${err.code ?? err.message}`));
      const body = init.body;
      if (body instanceof Readable) {
        body.on('data', (d: Buffer) => (this.traffic.bytesSent += d.length));
        body.on('error', (err) => fail(`reading the file to send failed: ${err.message}`));
        body.pipe(req);
      } else {
        // Counted once the body went out, not for a request that found no one to send it to.
        if (body) req.on('finish', () => (this.traffic.bytesSent += body.length));
        req.end(body);
      }
    }).then((answer) => this.check(answer));
  }

  private check(res: Answer): Answer {
    if (res.status < 300) return res;
    let body: { code?: string; detail?: string } | undefined;
    try {
      body = JSON.parse(res.body.toString('utf8')) as { code?: string; detail?: string };
    } catch {
      body = undefined;
    }
    const detail = body?.detail ?? `status ${res.status}`;
    if (res.status === 401) throw new UpstreamError('unauthorized', `the upstream refused the key: ${detail}`, 401, body?.code, body);
    if (res.status === 409 && body?.code === 'cursor_unknown') throw new UpstreamError('cursor', detail, 409, body.code, body);
    const retry = res.status === 503 ? retryAfterMs(res.headers['retry-after']) : null;
    if (retry !== null) throw new UpstreamError('busy', `the upstream is busy: ${detail}`, 503, body?.code, body, retry);
    if (res.status >= 500 || res.status === 429)
      throw new UpstreamError('offline', `the upstream answered ${res.status}: ${detail}`, res.status, body?.code, body);
    if (res.status === 403) throw new UpstreamError('forbidden', `the upstream refused: ${detail}`, 403, body?.code, body);
    throw new UpstreamError('refused', `the upstream answered ${res.status}: ${detail}`, res.status, body?.code, body);
  }

  private json<T>(res: Answer): T {
    try {
      return JSON.parse(res.body.toString('utf8')) as T;
    } catch (err) {
      // An answer that is not whole: nothing is known of what the upstream did, which is safe to do again.
      throw new UpstreamError('offline', `the upstream's answer was cut: ${(err as Error).message}`);
    }
  }

  async hello(): Promise<HelloAnswer> {
    return this.json(await this.send('GET', `/api/sync/v1/hello?node=${encodeURIComponent(this.node)}`));
  }

  async push(changes: WireChange[]): Promise<PushAnswer> {
    const body = gzipSync(Buffer.from(JSON.stringify({ changes })), { level: 6 });
    return this.json(
      await this.send('POST', '/api/sync/v1/push', { body, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } }),
    );
  }

  async pull(cursor: string | null, limit: number): Promise<PullAnswer> {
    const q = new URLSearchParams({ limit: String(limit), node: this.node });
    if (cursor) q.set('cursor', cursor);
    return this.json(await this.send('GET', `/api/sync/v1/changes?${q}`));
  }

  async uploadStatus(sha: string): Promise<UploadState> {
    return this.json(await this.send('GET', `/api/sync/v1/uploads/${sha}`));
  }

  /** What the upstream holds of many contents, in one call. */
  async uploadStatuses(shas: string[]): Promise<(UploadState & { wanted: boolean })[]> {
    const body = Buffer.from(JSON.stringify({ contents: shas }));
    return this.json<{ items: (UploadState & { wanted: boolean })[] }>(
      await this.send('POST', '/api/sync/v1/uploads/status', { body, headers: { 'content-type': 'application/json' } }),
    ).items;
  }

  /** Sends a content from byte `offset` of `file` to its end; answers what the upstream holds after. */
  async upload(sha: string, file: string, offset: number, size: number): Promise<UploadState> {
    return this.json(
      await this.send('PATCH', `/api/sync/v1/uploads/${sha}`, {
        body: createReadStream(file, { start: offset }),
        headers: {
          'content-type': 'application/offset+octet-stream',
          'upload-offset': String(offset),
          'content-length': String(size - offset),
        },
        timeoutMs: FILE_MS,
      }),
    );
  }

  /** Fetches a content from byte `from` and appends it to `file`; answers the bytes the file holds after (a cut keeps what came). */
  async download(sha: string, file: string, from: number): Promise<number> {
    let n = from;
    await this.send('GET', `/api/sync/v1/files/${sha}`, {
      headers: { range: `bytes=${from}-`, 'accept-encoding': 'identity' },
      timeoutMs: FILE_MS,
      sink: async (res) => {
        const start = res.statusCode === 206 ? from : 0;
        n = start;
        const out = createWriteStream(file, { flags: start === 0 ? 'w' : 'a' });
        try {
          for await (const chunk of res) {
            n += (chunk as Buffer).length;
            this.traffic.bytesReceived += (chunk as Buffer).length;
            if (!out.write(chunk)) await once(out, 'drain');
          }
          if (!res.complete) throw new Error('the answer ended early');
        } finally {
          out.end();
          await once(out, 'close').catch(() => undefined);
        }
      },
    });
    return n;
  }
}
