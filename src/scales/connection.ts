import { SerialPortStream } from '@serialport/stream';
import { hangupAwareBinding } from './binding.js';
import { LineSplitter } from './frames.js';

/** How the serial line is set: SCALE_BAUD and SCALE_FRAMING (data bits, parity, stop bits: 8N1, 7E1...). */
export interface LineSettings {
  baudRate: number;
  dataBits: 5 | 6 | 7 | 8;
  parity: 'none' | 'even' | 'odd';
  stopBits: 1 | 2;
}

const PARITY: Record<string, LineSettings['parity']> = { N: 'none', E: 'even', O: 'odd' };

/** `8N1` → 8 data bits, no parity, 1 stop bit; null for anything else. */
export function parseFraming(text: string): Pick<LineSettings, 'dataBits' | 'parity' | 'stopBits'> | null {
  const m = /^([5-8])([NEO])([12])$/i.exec(text.trim());
  if (!m) return null;
  return {
    dataBits: Number(m[1]) as LineSettings['dataBits'],
    parity: PARITY[m[2]!.toUpperCase()]!,
    stopBits: Number(m[3]) as LineSettings['stopBits'],
  };
}

export type ConnectionState = 'connecting' | 'connected' | 'disconnected' | 'stopped';

export interface ConnectionOptions {
  /** First wait before reconnecting, ms; doubled after each failed try up to maxDelayMs. */
  minDelayMs: number;
  maxDelayMs: number;
  /** The service's clock (epoch ms), for the instants reported. */
  now(): number;
  onLine(line: string): void;
  /** Told of every connect and disconnect, with what went wrong. */
  onChange?(state: ConnectionState, error?: string): void;
}

/**
 * One serial port, kept open: read into lines, and reopened with backoff whenever it closes or
 * fails to open (a USB cable pulled, the adapter not plugged in yet). Never throws to the caller:
 * a scale that is away is a state to report, not a reason to stop the service.
 */
export class ScaleConnection {
  state: ConnectionState = 'disconnected';
  lastError: string | null = null;
  /** Epoch ms of the last open, and of the last loss of the port. */
  connectedAt: number | null = null;
  disconnectedAt: number | null = null;
  /** Failed tries since the port was last open. */
  failures = 0;
  /** Epoch ms of the next try, while waiting for it. */
  nextTryAt: number | null = null;

  private port: SerialPortStream | null = null;
  private timer: NodeJS.Timeout | null = null;
  private readonly splitter = new LineSplitter();

  constructor(
    readonly path: string,
    private readonly settings: LineSettings,
    private readonly options: ConnectionOptions,
  ) {}

  start(): void {
    if (this.state === 'stopped') return;
    this.open();
  }

  async stop(): Promise<void> {
    this.setState('stopped');
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const port = this.port;
    this.port = null;
    if (port?.isOpen) await new Promise<void>((resolve) => port.close(() => resolve()));
  }

  private open(): void {
    this.nextTryAt = null;
    this.setState('connecting');
    const port = new SerialPortStream({
      binding: hangupAwareBinding(),
      path: this.path,
      baudRate: this.settings.baudRate,
      dataBits: this.settings.dataBits,
      parity: this.settings.parity,
      stopBits: this.settings.stopBits,
      autoOpen: false,
      // A scale may hold DTR low or not wire it: never wait on modem lines.
      hupcl: false,
    });
    this.port = port;
    port.on('data', (chunk: Buffer) => {
      if (this.port !== port) return;
      for (const line of this.splitter.push(chunk)) this.options.onLine(line);
    });
    // Both can come for one loss (an error, then the close): the first one counts.
    const lost = (err: Error | null | undefined) => {
      if (this.port !== port || this.state === 'stopped') return;
      this.port = null;
      port.removeAllListeners('data');
      if (port.isOpen) port.close(() => undefined);
      this.lost(err?.message ?? 'the port closed');
    };
    port.on('close', lost);
    port.on('error', lost);
    port.open((err) => {
      if (this.port !== port) {
        if (!err) port.close(() => undefined);
        return;
      }
      if (err) {
        this.port = null;
        this.lost(err.message);
        return;
      }
      this.failures = 0;
      this.lastError = null;
      this.connectedAt = this.options.now();
      this.splitter.reset();
      this.setState('connected');
    });
  }

  private lost(message: string): void {
    if (this.state === 'stopped') return;
    // A partial line is never joined to the first bytes of the next connection.
    this.splitter.reset();
    this.lastError = message;
    if (this.state === 'connected') this.disconnectedAt = this.options.now();
    this.failures++;
    const delay = Math.min(this.options.maxDelayMs, this.options.minDelayMs * 2 ** Math.min(this.failures - 1, 20));
    this.nextTryAt = this.options.now() + delay;
    this.setState('disconnected', message);
    this.timer = setTimeout(() => {
      this.timer = null;
      if (this.state !== 'stopped') this.open();
    }, delay);
    // A scale waiting to come back must not keep a stopping process alive.
    this.timer.unref();
  }

  private setState(state: ConnectionState, error?: string): void {
    const changed = this.state !== state;
    this.state = state;
    if (changed) this.options.onChange?.(state, error);
  }
}
