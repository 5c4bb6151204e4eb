import type { Clock } from '../clock.js';
import type { Services } from '../services.js';
import { scheduled } from '../db/engine.js';
import { nextDue, parseSetting, settingName, type Schedule, type ScheduleSetting, type ScheduleTarget } from './schedule.js';
import './tables.js';

/**
 * Runs the schedules features register, on the service clock. A run is due at the first time the
 * pattern matches after the slot's anchor (its last run's start, or when the slot was first
 * seen); so a run missed while the box was off, however many, is made up once at start, and a
 * run the service was stopped in the middle of is run again at start. A slot never runs twice at
 * once: a run due while the previous one is still going is skipped and said so in the log.
 *
 * `tick()` checks every slot against the clock and starts what is due; a timer calls it in the
 * service, tests call it after setting the clock (so nothing waits on real time).
 */

/** The longest the timer sleeps: a box's clock that jumps (NTP after boot) is noticed within it. */
const MAX_SLEEP_MS = 60_000;

export interface RunRecord {
  started_at: string;
  finished_at: string | null;
  duration_ms: number | null;
  outcome: 'ok' | 'failed' | 'interrupted' | 'running';
  error: string | null;
  result: Record<string, unknown> | null;
}

interface Slot {
  schedule: Schedule;
  target: ScheduleTarget | null;
  zone: string;
  anchor: number;
  /** The run under way, if any. */
  running: Promise<void> | null;
  abort: AbortController | null;
  /** Stopped in the middle of a run last time: run again at start. */
  interrupted: boolean;
  last: RunRecord | null;
  skipped: number;
}

export interface ScheduleView {
  name: string;
  summary: string;
  enabled: boolean;
  /** Why it does not run, when it is off. */
  off_reason: string | null;
  when: string;
  setting: string;
  per_target: boolean;
  time_zone: string | null;
  next_run_at: string | null;
  running: boolean;
  last_run: RunRecord | null;
  /** Due times skipped because the previous run was still going (since the service started). */
  skipped_overlaps: number;
  targets?: { key: string; label: string; time_zone: string; next_run_at: string | null; running: boolean; last_run: RunRecord | null }[];
}

/** The scheduler of each running service (src/schedules/feature.ts attaches it). */
export const schedulers = new WeakMap<Services, Scheduler>();

export function schedulerOf(services: Services): Scheduler {
  const s = schedulers.get(services);
  if (!s) throw new Error('the scheduler is not attached to these services (src/app.ts attaches it)');
  return s;
}

/**
 * Throws, naming the setting, on a schedule name that is not snake_case or twice, a setting that
 * names no schedule, or a pattern croner rejects (which would otherwise fail at the first due check).
 */
export function checkSchedules(schedules: Schedule[], settings: Record<string, string | undefined>): void {
  const names = new Set<string>();
  for (const s of schedules) {
    if (!/^[a-z][a-z0-9_]*$/.test(s.name)) throw new Error(`schedule name ${s.name} must be snake_case`);
    if (names.has(s.name)) throw new Error(`two schedules are called ${s.name}`);
    names.add(s.name);
    const setting = parseSetting(s.name, settings[s.name]);
    nextDue(setting.kind === 'on' && setting.when ? setting.when : s.when, 'UTC', 0);
  }
  for (const name of Object.keys(settings)) {
    if (!names.has(name)) throw new Error(`setting ${settingName(name)} names no schedule; there are: ${[...names].join(', ')}`);
  }
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export class Scheduler {
  private readonly slots = new Map<string, Slot>();
  private readonly settings = new Map<string, ScheduleSetting>();
  private timer: NodeJS.Timeout | null = null;
  private scanning: Promise<unknown> = Promise.resolve();
  private stopped = false;
  private started = false;

  constructor(
    private readonly services: Services,
    private readonly clock: Clock,
    readonly schedules: Schedule[],
    private readonly options: { boxZone: string; settings: Record<string, string | undefined>; timer?: boolean },
  ) {
    for (const s of schedules) this.settings.set(s.name, parseSetting(s.name, options.settings[s.name]));
    checkSchedules(schedules, options.settings);
  }

  private patternOf(s: Schedule): string {
    const setting = this.settings.get(s.name);
    return setting?.kind === 'on' && setting.when ? setting.when : s.when;
  }

  /** Whether the schedule runs, or why not. */
  private enabled(s: Schedule): true | { off: string } {
    const setting = this.settings.get(s.name)!;
    if (setting.kind === 'off') return { off: `turned off (${settingName(s.name)}=off)` };
    if (setting.kind === 'on') return true;
    return s.enabledByDefault?.(this.services) ?? true;
  }

  /** Loads what was remembered, makes up missed and interrupted runs, and starts the timer. */
  async start(): Promise<void> {
    const rows = await this.services.db.selectFrom('schedule_state').selectAll().execute();
    for (const r of rows) {
      const key = `${r.schedule}\u0000${r.target}`;
      const interrupted = r.last_started_at !== null && r.last_finished_at === null;
      this.remembered.set(key, {
        anchor: Date.parse(r.anchor_at),
        interrupted,
        last:
          r.last_started_at === null
            ? null
            : {
                started_at: r.last_started_at,
                finished_at: r.last_finished_at,
                duration_ms: r.last_duration_ms,
                outcome: interrupted ? 'interrupted' : ((r.last_outcome as RunRecord['outcome']) ?? 'ok'),
                error: r.last_error,
                result: r.last_result ? (JSON.parse(r.last_result) as Record<string, unknown>) : null,
              },
      });
    }
    this.started = true;
    await this.tick();
  }

  private readonly remembered = new Map<string, { anchor: number; interrupted: boolean; last: RunRecord | null }>();

  /** Brings the slots in line with the schedules' targets, remembering the ones first seen now. */
  private async refresh(now: number): Promise<void> {
    const seen = new Set<string>();
    for (const s of this.schedules) {
      let targets: (ScheduleTarget | null)[] = [null];
      if (s.targets) {
        try {
          targets = await s.targets(this.services);
        } catch (err) {
          this.services.log.error('schedule targets failed', { schedule: s.name, error: err as Error });
          // Keep the slots it had: a failing query must not forget their state.
          for (const key of this.slots.keys()) if (key.startsWith(`${s.name}\u0000`)) seen.add(key);
          continue;
        }
      }
      for (const target of targets) {
        const key = `${s.name}\u0000${target?.key ?? ''}`;
        seen.add(key);
        const zone = (s.zone === 'target' ? target?.timeZone : undefined) ?? this.options.boxZone;
        const slot = this.slots.get(key);
        if (slot) {
          slot.target = target;
          slot.zone = zone;
          continue;
        }
        const mem = this.remembered.get(key);
        this.slots.set(key, {
          schedule: s,
          target,
          zone,
          anchor: mem?.anchor ?? now,
          running: null,
          abort: null,
          interrupted: mem?.interrupted ?? false,
          last: mem?.last ?? null,
          skipped: 0,
        });
        if (!mem) await this.saveAnchor(s.name, target?.key ?? '', now);
      }
    }
    for (const [key, slot] of this.slots) {
      if (seen.has(key) || slot.running) continue;
      this.slots.delete(key);
      await this.services.db
        .deleteFrom('schedule_state')
        .where('schedule', '=', slot.schedule.name)
        .where('target', '=', slot.target?.key ?? '')
        .execute();
    }
  }

  private async saveAnchor(schedule: string, target: string, at: number): Promise<void> {
    await this.services.db
      .insertInto('schedule_state')
      .values({
        schedule,
        target,
        anchor_at: new Date(at).toISOString(),
        last_started_at: null,
        last_finished_at: null,
        last_outcome: null,
        last_duration_ms: null,
        last_error: null,
        last_result: null,
      })
      .onConflict((oc) => oc.columns(['schedule', 'target']).doUpdateSet({ anchor_at: new Date(at).toISOString() }))
      .execute();
  }

  private dueOf(slot: Slot): number | null {
    if (this.enabled(slot.schedule) !== true) return null;
    return nextDue(this.patternOf(slot.schedule), slot.zone, slot.anchor);
  }

  /**
   * Starts every run due at the clock's time; resolves when those runs have ended (a test's
   * `await tick()` sees their outcome). Runs of different schedules go side by side.
   */
  async tick(): Promise<void> {
    if (this.stopped || !this.started) return;
    const started: Promise<void>[] = [];
    const scan = this.scanning.then(async () => {
      if (this.stopped) return;
      const now = this.clock.now();
      await this.refresh(now);
      for (const slot of this.slots.values()) {
        const due = this.dueOf(slot);
        const makeUp = slot.interrupted && this.enabled(slot.schedule) === true;
        if (!makeUp && (due === null || due > now)) continue;
        if (slot.running) {
          // Never two runs of one slot at once; the due time passes without a run.
          slot.skipped++;
          slot.anchor = now;
          this.services.log.warn('schedule run skipped', {
            schedule: slot.schedule.name,
            target: slot.target?.key,
            due_at: iso(due),
            why: 'the previous run is still going',
          });
          continue;
        }
        slot.interrupted = false;
        started.push(this.runSlot(slot, makeUp ? now : (due ?? now), now));
      }
    });
    this.scanning = scan.catch((err: unknown) => this.services.log.error('schedule check failed', { error: err as Error }));
    await this.scanning;
    this.arm();
    await Promise.all(started);
  }

  private runSlot(slot: Slot, dueAt: number, now: number): Promise<void> {
    const s = slot.schedule;
    const abort = new AbortController();
    slot.abort = abort;
    slot.anchor = now;
    const startedAt = now;
    const t0 = performance.now();
    const log = this.services.log.child({ schedule: s.name, ...(slot.target ? { target: slot.target.key } : {}) });
    slot.last = { started_at: iso(startedAt)!, finished_at: null, duration_ms: null, outcome: 'running', error: null, result: null };
    const body = async () => {
      await this.services.db
        .insertInto('schedule_state')
        .values({
          schedule: s.name,
          target: slot.target?.key ?? '',
          anchor_at: iso(now)!,
          last_started_at: iso(startedAt),
          last_finished_at: null,
          last_outcome: null,
          last_duration_ms: null,
          last_error: null,
          last_result: null,
        })
        .onConflict((oc) =>
          oc.columns(['schedule', 'target']).doUpdateSet({ anchor_at: iso(now)!, last_started_at: iso(startedAt), last_finished_at: null }),
        )
        .execute();
      log.info('schedule run started', { due_at: iso(dueAt) });
      let outcome: RunRecord['outcome'] = 'ok';
      let error: string | null = null;
      let result: Record<string, unknown> | null = null;
      try {
        result = (await s.run({ services: this.services, target: slot.target, dueAt, startedAt, signal: abort.signal, log })) ?? null;
      } catch (err) {
        outcome = abort.signal.aborted ? 'interrupted' : 'failed';
        error = err instanceof Error ? err.message : String(err);
        log.error('schedule run failed', { error: err as Error });
      }
      const duration = Math.round(performance.now() - t0);
      const finishedAt = this.clock.now();
      slot.last = { started_at: iso(startedAt)!, finished_at: iso(finishedAt), duration_ms: duration, outcome, error, result };
      if (outcome === 'ok') log.info('schedule run done', { duration_ms: duration, result });
      // An interrupted run leaves no finish: the next start runs it again.
      if (outcome === 'interrupted') return;
      await this.services.db
        .updateTable('schedule_state')
        .set({
          last_finished_at: iso(finishedAt),
          last_outcome: outcome,
          last_duration_ms: duration,
          last_error: error,
          last_result: result ? JSON.stringify(result) : null,
        })
        .where('schedule', '=', s.name)
        .where('target', '=', slot.target?.key ?? '')
        .execute();
    };
    const run = this.once(slot, dueAt, log, body)
      .catch((err: unknown) => log.error('schedule state not saved', { error: err as Error }))
      .finally(() => {
        slot.running = null;
        slot.abort = null;
      });
    slot.running = run;
    return run;
  }

  /**
   * Runs `body` for one due time of a slot, once across the processes that share a PostgreSQL
   * database (on SQLite there is one process, and this is `body()`). Each process has a scheduler
   * and finds the same runs due; the slot's advisory lock lets one at a time in, and the one let
   * in after another has started this due time (schedule_state.last_started_at at or after it)
   * leaves it, as does one that finds the lock held: that run is another process's.
   */
  private async once(slot: Slot, dueAt: number, log: ReturnType<Services['log']['child']>, body: () => Promise<void>): Promise<void> {
    const target = slot.target?.key ?? '';
    const ran = await scheduled(this.services.engine, `schedule:${slot.schedule.name}:${target}`, async () => {
      if (this.services.engine.kind === 'postgres') {
        const state = await this.services.db
          .selectFrom('schedule_state')
          .select(['last_started_at', 'last_finished_at', 'last_outcome', 'last_duration_ms', 'last_error', 'last_result'])
          .where('schedule', '=', slot.schedule.name)
          .where('target', '=', target)
          .executeTakeFirst();
        if (state?.last_started_at && Date.parse(state.last_started_at) >= dueAt) {
          slot.last = {
            started_at: state.last_started_at,
            finished_at: state.last_finished_at,
            duration_ms: state.last_duration_ms,
            outcome: (state.last_outcome as RunRecord['outcome'] | null) ?? 'running',
            error: state.last_error,
            result: state.last_result ? (JSON.parse(state.last_result) as Record<string, unknown>) : null,
          };
          return false;
        }
      }
      await body();
      return true;
    });
    if (ran !== true) log.info('schedule run left to another process', { due_at: iso(dueAt) });
  }

  /** Sleeps until the next due time (at most a minute), then checks again. */
  private arm(): void {
    if (this.options.timer === false || this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    const now = this.clock.now();
    let next = Infinity;
    for (const slot of this.slots.values()) next = Math.min(next, this.dueOf(slot) ?? Infinity);
    const delay = Math.max(1000, Math.min(MAX_SLEEP_MS, next - now));
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.tick();
    }, delay);
    this.timer.unref();
  }

  /**
   * Stops starting runs, asks the running ones to stop (their signal aborts), and waits for them
   * at most `timeoutMs`; what still runs then is left to end with the process.
   */
  async stop(timeoutMs = 10_000): Promise<{ unfinished: string[] }> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const running = [...this.slots.values()].filter((s) => s.running);
    for (const s of running) s.abort?.abort();
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(running.map((s) => s.running)),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs))),
    ]);
    clearTimeout(timer);
    const unfinished = running.filter((s) => s.running).map((s) => s.schedule.name);
    if (unfinished.length) this.services.log.warn('schedule runs still going at stop', { schedules: unfinished });
    return { unfinished };
  }

  /** Every schedule with its next and last run, for GET /api/schedules and health. */
  async list(): Promise<ScheduleView[]> {
    if (!this.stopped && this.started) {
      await (this.scanning = this.scanning.then(() => this.refresh(this.clock.now())).catch(() => undefined));
    }
    return this.schedules.map((s) => {
      const slots = [...this.slots.values()].filter((slot) => slot.schedule === s);
      const on = this.enabled(s);
      const views = slots.map((slot) => ({ slot, next: this.dueOf(slot) }));
      const nexts = views.map((v) => v.next).filter((n): n is number => n !== null);
      const lasts = slots.map((slot) => slot.last).filter((l): l is RunRecord => l !== null);
      lasts.sort((a, b) => b.started_at.localeCompare(a.started_at));
      const view: ScheduleView = {
        name: s.name,
        summary: s.summary,
        enabled: on === true,
        off_reason: on === true ? null : on.off,
        when: this.patternOf(s),
        setting: settingName(s.name),
        per_target: Boolean(s.targets),
        time_zone: s.zone === 'target' ? null : this.options.boxZone,
        next_run_at: nexts.length ? iso(Math.min(...nexts)) : null,
        running: slots.some((slot) => slot.running),
        last_run: lasts[0] ?? null,
        skipped_overlaps: slots.reduce((n, slot) => n + slot.skipped, 0),
      };
      if (s.targets) {
        view.targets = views.map(({ slot, next }) => ({
          key: slot.target!.key,
          label: slot.target!.label,
          time_zone: slot.zone,
          next_run_at: iso(next),
          running: slot.running !== null,
          last_run: slot.last,
        }));
      }
      return view;
    });
  }
}
