import path from 'node:path';
import { DateTime } from 'luxon';
import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';
import type { Store } from '../db/store.js';
import type { Logger } from '../log.js';
import { createHarvest } from '../records/harvests/commands.js';
import type { CycleScope } from '../registry/scope.js';
import { ScaleConnection, type ConnectionState, type LineSettings } from './connection.js';
import { parseFrame } from './frames.js';
import { Weighing, type WeighingOptions, type WeighingState } from './weighing.js';
import type { Services } from '../services.js';
import './tables.js';

/** The settings of the scales (config.ts: SCALE_PORT, SCALE_BAUD, SCALE_FRAMING, SCALE_CYCLE_ID, SCALE_ZERO_KG...). */
export interface ScaleSettings extends LineSettings, WeighingOptions {
  /** Device paths, e.g. /dev/ttyUSB0 or /dev/serial/by-id/usb-FTDI_...-port0. */
  ports: string[];
  /** The crop cycle a scale records into until one is set with PUT /api/scales/{port}. */
  defaultCycleId: string | undefined;
  reconnectMinMs: number;
  reconnectMaxMs: number;
}

/** A scale's name in the API: its device file's name (ttyUSB0). */
export function scaleName(devicePath: string): string {
  return path.basename(devicePath);
}

export interface ScaleStatus {
  port: string;
  path: string;
  connection: ConnectionState;
  state: WeighingState;
  cycle_id: string | null;
  assigned_by: 'api' | 'config' | null;
  last_reading: { kg: number; stable: boolean; format: string; at: string } | null;
  last_harvest: { harvest_id: string; kg: number; cycle_id: string; at: string } | null;
  harvests_recorded: number;
  /** Stable weights that found no crop cycle to go to (no assignment, or it was removed). */
  weights_not_recorded: number;
  last_error: string | null;
  connected_since: string | null;
  disconnected_since: string | null;
  next_try_at: string | null;
  /** Plain words for a person, when something needs attention. */
  warning: string | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The scales of each running service (src/scales/feature.ts starts them when SCALE_PORT is set). */
export const scaleServices = new WeakMap<Services, ScaleService>();

export function scalesOf(services: Services): ScaleService | undefined {
  return scaleServices.get(services);
}

class Scale {
  readonly weighing: Weighing;
  readonly connection: ScaleConnection;
  lastReadingAt: number | null = null;
  lastHarvest: ScaleStatus['last_harvest'] = null;
  harvests = 0;
  notRecorded = 0;
  recordError: string | null = null;

  constructor(
    readonly name: string,
    readonly devicePath: string,
    settings: ScaleSettings,
    clock: Clock,
    onWeight: (scale: Scale, kg: number) => void,
    onChange: (scale: Scale, state: ConnectionState, error?: string) => void,
  ) {
    this.weighing = new Weighing(settings);
    this.connection = new ScaleConnection(devicePath, settings, {
      minDelayMs: settings.reconnectMinMs,
      maxDelayMs: settings.reconnectMaxMs,
      now: () => clock.now(),
      onLine: (line) => {
        const frame = parseFrame(line);
        if (!frame) return;
        this.lastReadingAt = clock.now();
        const kg = this.weighing.feed(frame);
        if (kg !== null) onWeight(this, kg);
      },
      onChange: (state, error) => {
        if (state === 'disconnected') this.weighing.disconnected();
        onChange(this, state, error);
      },
    });
  }
}

/**
 * The scales on the box's serial ports: each read, each stable weight after a return to zero
 * recorded as a harvest of the crop cycle the scale is assigned to, through the records' own
 * harvest command (so the change log, and sync, get it like any other harvest).
 */
export class ScaleService {
  private readonly scales = new Map<string, Scale>();
  /** Harvests are written one after another, in the order they were weighed. */
  private writes: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly deps: { db: Db; store: Store; log: Logger; clock: Clock },
    private readonly settings: ScaleSettings,
  ) {
    for (const p of settings.ports) {
      const name = scaleName(p);
      if (this.scales.has(name)) throw new Error(`SCALE_PORT names two ports called ${name}: give each scale its own device name`);
      this.scales.set(
        name,
        new Scale(
          name,
          p,
          settings,
          deps.clock,
          (s, kg) => this.record(s, kg),
          (s, state, error) => this.changed(s, state, error),
        ),
      );
    }
  }

  has(name: string): boolean {
    return this.scales.has(name);
  }

  names(): string[] {
    return [...this.scales.keys()];
  }

  start(): void {
    for (const s of this.scales.values()) s.connection.start();
  }

  async stop(): Promise<void> {
    for (const s of this.scales.values()) await s.connection.stop();
    await this.writes;
  }

  /** Resolves once every weight read so far is stored (or failed to be). */
  settled(): Promise<unknown> {
    return this.writes;
  }

  private changed(scale: Scale, state: ConnectionState, error?: string): void {
    if (state === 'connected') this.deps.log.info('scale connected', { port: scale.devicePath });
    else if (state === 'disconnected')
      this.deps.log.warn('scale disconnected', {
        port: scale.devicePath,
        error,
        retry_at: iso(scale.connection.nextTryAt),
        failures: scale.connection.failures,
      });
  }

  /**
   * The crop cycle a scale records into: its stored assignment, else SCALE_CYCLE_ID. Read with `db`,
   * the transaction when the caller is inside one (services.db would refuse there, src/db/store.ts).
   */
  async assignment(name: string, db: Db = this.deps.db): Promise<{ cycleId: string | null; by: 'api' | 'config' | null }> {
    const row = await db.selectFrom('scale_assignments').selectAll().where('port', '=', name).executeTakeFirst();
    if (row) return { cycleId: row.cycle_id, by: row.cycle_id ? 'api' : null };
    const fallback = this.settings.defaultCycleId;
    return fallback ? { cycleId: fallback, by: 'config' } : { cycleId: null, by: null };
  }

  private record(scale: Scale, kg: number): void {
    const weighedAt = this.deps.clock.now();
    const run = this.writes.then(async () => {
      // The assignment and the crop cycle are read in the harvest's own transaction: a cycle
      // removed in between is a weight not recorded, never a harvest of a cycle that is gone.
      const done = await this.deps.store.write({ keyId: null, label: `scale:${scale.name}` }, async (w) => {
        const { cycleId } = await this.assignment(scale.name, w.trx);
        const scope = cycleId ? await cycleScope(w.trx, cycleId) : null;
        if (!scope) return { cycleId, scope: null, harvest: null };
        // The harvest day is the greenhouse's local calendar day at the moment of weighing.
        const day = DateTime.fromMillis(weighedAt, { zone: scope.zone }).toISODate()!;
        const harvest = await createHarvest(w, scope, { kg, harvested_on: day, note: `Weighed on scale ${scale.name}` });
        return { cycleId, scope, harvest };
      });
      const { scope, harvest } = done;
      if (!scope || !harvest) {
        scale.notRecorded++;
        this.deps.log.warn('scale weight not recorded', {
          port: scale.devicePath,
          kg,
          why: done.cycleId
            ? `crop cycle ${done.cycleId} no longer exists`
            : 'the scale is not assigned to a crop cycle (PUT /api/scales/{port})',
        });
        return;
      }
      scale.harvests++;
      scale.recordError = null;
      scale.lastHarvest = { harvest_id: harvest.id, kg, cycle_id: scope.cycle.id, at: new Date(weighedAt).toISOString() };
      this.deps.log.info('harvest weighed', { port: scale.devicePath, kg, harvest_id: harvest.id, cycle_id: scope.cycle.id });
    });
    this.writes = run.catch((err: unknown) => {
      scale.notRecorded++;
      scale.recordError = err instanceof Error ? err.message : String(err);
      this.deps.log.error('scale weight not recorded', { port: scale.devicePath, kg, error: err as Error });
    });
  }

  async status(name: string, db: Db = this.deps.db): Promise<ScaleStatus | undefined> {
    const s = this.scales.get(name);
    if (!s) return undefined;
    const { cycleId, by } = await this.assignment(name, db);
    const c = s.connection;
    const last = s.weighing.last;
    return {
      port: s.name,
      path: s.devicePath,
      connection: c.state,
      state: s.weighing.state,
      cycle_id: cycleId,
      assigned_by: by,
      last_reading: last && s.lastReadingAt !== null ? { ...last, at: iso(s.lastReadingAt)! } : null,
      last_harvest: s.lastHarvest,
      harvests_recorded: s.harvests,
      weights_not_recorded: s.notRecorded,
      last_error: c.lastError ?? s.recordError,
      connected_since: c.state === 'connected' ? iso(c.connectedAt) : null,
      disconnected_since: c.state === 'connected' ? null : iso(c.disconnectedAt),
      next_try_at: c.state === 'disconnected' ? iso(c.nextTryAt) : null,
      warning: warningOf(s, cycleId, this.settings),
    };
  }

  async statuses(db: Db = this.deps.db): Promise<ScaleStatus[]> {
    const out: ScaleStatus[] = [];
    for (const name of this.scales.keys()) out.push((await this.status(name, db))!);
    return out;
  }
}

function warningOf(s: Scale, cycleId: string | null, settings: ScaleSettings): string | null {
  const c = s.connection;
  if (c.state !== 'connected') {
    const since = c.disconnectedAt === null ? 'since the service started' : `since ${new Date(c.disconnectedAt).toISOString()}`;
    return `The scale on ${s.devicePath} is not connected ${since} (${c.lastError ?? 'not opened yet'}). Check its USB cable and that it is switched on; the box tries again by itself, at most every ${Math.round(settings.reconnectMaxMs / 1000)} s.`;
  }
  if (!cycleId)
    return `The scale ${s.name} is not assigned to a crop cycle, so its weights are not recorded. Assign it with PUT /api/scales/${s.name}.`;
  if (s.recordError) return `The last weight from scale ${s.name} could not be recorded: ${s.recordError}`;
  if (s.weighing.state === 'out_of_range')
    return `The scale ${s.name} reads over or under its range, or a negative weight: check its tare.`;
  return null;
}

/** A crop cycle by id, with its greenhouse's zone; null when it is gone. */
export async function cycleScope(db: Db, cycleId: string): Promise<CycleScope | null> {
  const cycle = await db.selectFrom('cycles').selectAll().where('id', '=', cycleId).executeTakeFirst();
  if (!cycle) return null;
  const greenhouse = await db.selectFrom('greenhouses').selectAll().where('id', '=', cycle.greenhouse_id).executeTakeFirstOrThrow();
  return { cycle, greenhouse, zone: greenhouse.time_zone };
}
