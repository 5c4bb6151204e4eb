import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { gunzipSync } from 'node:zlib';

/**
 * An HTTP proxy between a box and its upstream that breaks the link the ways real links break:
 * it drops requests, cuts them mid-body, lets the upstream act and then loses the answer, cuts
 * answers mid-body, sends requests twice, sends an old request again later (a duplicate that
 * arrives out of order), and delays. Every choice comes from a seeded generator, so a failing
 * run is repeated by its seed. `heal()` makes it a plain proxy; `cut()` refuses everything.
 */

export interface FaultPlan {
  /** Close the connection without forwarding. */
  drop: number;
  /** Forward part of the request body, then close both sides. */
  cutRequest: number;
  /** Forward the request, let the upstream answer, then close without answering. */
  dropResponse: number;
  /** Answer only part of the upstream's answer, then close. */
  cutResponse: number;
  /** Forward the request twice; answer the second answer. */
  duplicate: number;
  /** Keep a copy and send it to the upstream again before some later request. */
  replayLater: number;
  /** Wait before forwarding (delayMs). */
  delay: number;
  delayMs: [number, number];
}

export const CHAOS: FaultPlan = {
  drop: 0.08,
  cutRequest: 0.08,
  dropResponse: 0.1,
  cutResponse: 0.08,
  duplicate: 0.08,
  replayLater: 0.08,
  delay: 0.1,
  delayMs: [1, 40],
};

export interface Captured {
  method: string;
  path: string;
  headers: http.OutgoingHttpHeaders;
  body: Buffer;
}

export interface ProxyCounters {
  requests: number;
  dropped: number;
  cutRequests: number;
  droppedResponses: number;
  cutResponses: number;
  duplicated: number;
  replayed: number;
  delayed: number;
  refused: number;
}

/** mulberry32: a small seeded generator, enough to choose faults reproducibly. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export class FaultProxy {
  readonly counters: ProxyCounters = {
    requests: 0,
    dropped: 0,
    cutRequests: 0,
    droppedResponses: 0,
    cutResponses: 0,
    duplicated: 0,
    replayed: 0,
    delayed: 0,
    refused: 0,
  };
  /** Every request forwarded in full, in order: pushes can be replayed after the run. */
  readonly forwarded: Captured[] = [];
  /** Every answer the upstream gave, decoded (what a box received, or would have). */
  readonly answers: Buffer[] = [];
  /** File uploads forwarded (in full or cut): content, offset sent from, bytes that reached the upstream. */
  readonly uploads: { sha: string; offset: number; bytes: number; cut: boolean }[] = [];
  private plan: FaultPlan | null;
  /** Faults apply only to the requests this accepts (all by default). */
  only: (c: Captured) => boolean = () => true;
  private down = false;
  private readonly later: Captured[] = [];
  private readonly sockets = new Set<Socket>();
  private server!: http.Server;
  url = '';

  constructor(
    public target: string,
    private readonly random: () => number,
    plan: FaultPlan | null = CHAOS,
  ) {
    this.plan = plan;
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    this.server.on('connection', (s) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', () => resolve()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** Faults on, with this plan. */
  chaos(plan: FaultPlan = CHAOS): void {
    this.plan = plan;
    this.down = false;
  }

  /** A plain proxy from now on; copies kept for later are dropped. */
  heal(): void {
    this.plan = null;
    this.down = false;
    this.later.length = 0;
  }

  /** The network is cut: every connection is closed at once. */
  cut(): void {
    this.down = true;
    for (const s of this.sockets) s.destroy();
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private roll(faulty: boolean, p: number): boolean {
    return faulty && this.random() < p;
  }

  private forward(c: Captured, onRequest?: (req: http.ClientRequest) => boolean): Promise<Answer | null> {
    const url = new URL(c.path, this.target);
    return new Promise((resolve) => {
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname + url.search,
          method: c.method,
          headers: { ...c.headers, host: url.host },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (d: Buffer) => chunks.push(d));
          res.on('end', () => resolve({ status: res.statusCode ?? 502, headers: res.headers, body: Buffer.concat(chunks) }));
          res.on('error', () => resolve(null));
        },
      );
      req.on('error', () => resolve(null));
      if (onRequest && !onRequest(req)) return;
      req.end(c.body);
    });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    this.counters.requests++;
    const chunks: Buffer[] = [];
    try {
      for await (const d of req) chunks.push(d as Buffer);
    } catch {
      return;
    }
    const headers: http.OutgoingHttpHeaders = { ...req.headers };
    delete headers['content-length'];
    delete headers['transfer-encoding'];
    delete headers.connection;
    const body = Buffer.concat(chunks);
    if (body.length) headers['content-length'] = String(body.length);
    const c: Captured = { method: req.method ?? 'GET', path: req.url ?? '/', headers, body };
    const upload = /\/uploads\/([0-9a-f]{64})$/.exec(c.path.split('?')[0]!);
    const faulty = this.plan !== null && this.only(c);

    if (this.down) {
      this.counters.refused++;
      res.socket?.destroy();
      return;
    }
    // An old request arrives again before this one: late, and out of order.
    if (this.later.length && this.roll(faulty, 0.5)) {
      const old = this.later.shift()!;
      this.counters.replayed++;
      await this.forward(old);
    }
    if (this.roll(faulty, this.plan?.delay ?? 0)) {
      this.counters.delayed++;
      const [lo, hi] = this.plan!.delayMs;
      await new Promise((r) => setTimeout(r, lo + this.random() * (hi - lo)));
    }
    if (this.roll(faulty, this.plan?.drop ?? 0)) {
      this.counters.dropped++;
      res.socket?.destroy();
      return;
    }
    if (body.length > 1 && this.roll(faulty, this.plan?.cutRequest ?? 0)) {
      this.counters.cutRequests++;
      const part = Math.floor(this.random() * body.length);
      if (upload && c.method === 'PATCH')
        this.uploads.push({ sha: upload[1]!, offset: Number(c.headers['upload-offset'] ?? 0), bytes: part, cut: true });
      await new Promise<void>((resolve) => {
        const url = new URL(c.path, this.target);
        const up = http.request({
          host: url.hostname,
          port: url.port,
          path: url.pathname + url.search,
          method: c.method,
          headers: { ...c.headers, host: url.host },
        });
        up.on('error', () => resolve());
        up.write(body.subarray(0, part), () => {
          // Let the bytes reach the upstream before the line goes dead.
          setTimeout(() => {
            up.destroy();
            resolve();
          }, 20);
        });
      });
      res.socket?.destroy();
      return;
    }
    if (this.roll(faulty, this.plan?.replayLater ?? 0)) this.later.push(c);
    let answer = await this.forward(c);
    if (upload && c.method === 'PATCH')
      this.uploads.push({ sha: upload[1]!, offset: Number(c.headers['upload-offset'] ?? 0), bytes: body.length, cut: false });
    this.forwarded.push(c);
    if (answer && this.roll(faulty, this.plan?.duplicate ?? 0)) {
      this.counters.duplicated++;
      answer = (await this.forward(c)) ?? answer;
    }
    if (!answer) {
      res.socket?.destroy();
      return;
    }
    this.answers.push(answer.headers['content-encoding'] === 'gzip' ? gunzipSync(answer.body) : answer.body);
    if (this.roll(faulty, this.plan?.dropResponse ?? 0)) {
      this.counters.droppedResponses++;
      res.socket?.destroy();
      return;
    }
    const out: http.OutgoingHttpHeaders = { ...answer.headers };
    delete out['transfer-encoding'];
    delete out.connection;
    out['content-length'] = String(answer.body.length);
    if (answer.body.length > 1 && this.roll(faulty, this.plan?.cutResponse ?? 0)) {
      this.counters.cutResponses++;
      res.writeHead(answer.status, out);
      res.write(answer.body.subarray(0, Math.floor(this.random() * answer.body.length)), () => res.socket?.destroy());
      return;
    }
    res.writeHead(answer.status, out);
    res.end(answer.body);
  }
}
