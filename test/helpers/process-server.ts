// The real entry point (src/main.ts) as a process of its own, for what an in-process server cannot
// play: a `kill -9` of the box. Answers the same `request` as test/helpers/server.ts, so
// createTree and the upload helpers work against it.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { ADMIN_TOKEN, type TestResponse, type TestServer } from './server.js';

export interface ProcessServer {
  base: string;
  dataDir: string;
  child: ChildProcess;
  /** Everything the process printed so far (its JSON log lines). */
  output(): string;
  request: TestServer['request'];
  /** SIGKILL, as a power cut or the OOM killer would; resolves once the process is gone. */
  kill9(): Promise<void>;
}

const MAIN = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

export async function startProcessServer(
  t: { teardown(fn: () => unknown): void },
  dataDir: string,
  env: Record<string, string> = {},
  startTimeoutMs = 60_000,
): Promise<ProcessServer> {
  const child = spawn(process.execPath, ['--import', 'tsx', MAIN], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ADMIN_TOKEN, DISK_RESERVE: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  t.teardown(async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGKILL');
      await exited;
    }
  });
  const address = await new Promise<string>((resolve, reject) => {
    const deadline = Date.now() + startTimeoutMs;
    const timer = setInterval(() => {
      const m = /"msg":"cropwalk listening","address":"([^"]+)"/.exec(out);
      if (m) {
        clearInterval(timer);
        resolve(m[1]!);
      } else if (Date.now() > deadline) {
        clearInterval(timer);
        reject(new Error(`the server did not start in ${startTimeoutMs} ms: ${out.slice(-2000)}`));
      }
    }, 50);
    void exited.then(() => {
      clearInterval(timer);
      reject(new Error(`the server exited before listening: ${out.slice(-2000)}`));
    });
  });
  const base = `http://${address}`;
  return {
    base,
    dataDir,
    child,
    output: () => out,
    async request(method, url, opts = {}): Promise<TestResponse> {
      const headers: Record<string, string> = { ...(opts.headers ?? {}) };
      if (opts.key) headers['x-api-key'] = opts.key;
      if (opts.admin) headers.authorization = `Bearer ${ADMIN_TOKEN}`;
      let body: RequestInit['body'] = opts.raw;
      if (opts.body !== undefined) {
        headers['content-type'] ??= 'application/json';
        body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
      }
      const res = await fetch(base + url, { method, headers, body });
      const text = await res.text();
      const parsed: unknown = (res.headers.get('content-type') ?? '').includes('json') && text ? JSON.parse(text) : text;
      return { status: res.status, headers: res.headers, body: parsed, text };
    },
    async kill9() {
      child.kill('SIGKILL');
      await exited;
    },
  };
}
