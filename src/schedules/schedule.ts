import { Cron } from 'croner';
import { IANAZone } from 'luxon';
import type { Logger } from '../log.js';
import type { Services } from '../services.js';

/**
 * A piece of periodic work a feature registers (`schedules` on its Feature, src/feature.ts), run
 * by the service's scheduler (scheduler.ts). The feature says what and by default when; the
 * box's settings may turn it off or move it (SCHEDULE_<NAME>, docs/appliance.md).
 */
export interface Schedule {
  /** snake_case, stable: the setting is SCHEDULE_<NAME upper-cased>, the API lists it by this. */
  name: string;
  /** One line for a person: what a run does. */
  summary: string;
  /** A 5-field cron pattern (minute hour day month weekday), read in the zone below. */
  when: string;
  /**
   * 'box': the pattern is read in SCHEDULE_TIME_ZONE (the box's zone). 'target': once per target,
   * each in its own zone (Monday 06:00 in each greenhouse's zone). Default 'box'.
   */
  zone?: 'box' | 'target';
  /**
   * Whether it runs when the settings say neither on nor off; with the reason when not (sync:
   * "UPSTREAM_URL is not set"). Default: on.
   */
  enabledByDefault?(services: Services): true | { off: string };
  /**
   * For a job run once per thing (a greenhouse): the things, each with a stable key and, for
   * zone 'target', its IANA zone. Read again before every due check, so a greenhouse added or
   * given a location joins without a restart. Without it the schedule has one run for the box.
   */
  targets?(services: Services): Promise<ScheduleTarget[]>;
  /**
   * Does one run. Throwing marks the run failed (with the message); what it returns is shown as
   * the run's result (keep it small: counts, a file name). It should stop early when `signal`
   * aborts (the service is stopping).
   */
  run(ctx: ScheduleContext): Promise<Record<string, unknown> | void>;
}

export interface ScheduleTarget {
  key: string;
  /** For a person: "GH 1 (Farm)". */
  label: string;
  timeZone?: string;
}

export interface ScheduleContext {
  services: Services;
  /** The target of this run, for a per-target schedule; null otherwise. */
  target: ScheduleTarget | null;
  /** Epoch ms the run was due (the start, for a run made up at start). */
  dueAt: number;
  /** Epoch ms the run began, on the service clock. */
  startedAt: number;
  signal: AbortSignal;
  log: Logger;
}

/** What the settings say of one schedule. */
export type ScheduleSetting = { kind: 'default' } | { kind: 'off' } | { kind: 'on'; when?: string };

/** The setting's name for a schedule: SCHEDULE_BACKUP, SCHEDULE_MEDIA_RETENTION. */
export function settingName(schedule: string): string {
  return `SCHEDULE_${schedule.toUpperCase()}`;
}

/** `off`, `on`, or a cron pattern (which also turns the schedule on); throws on anything else. */
export function parseSetting(name: string, raw: string | undefined): ScheduleSetting {
  if (raw === undefined || raw.trim() === '') return { kind: 'default' };
  const text = raw.trim();
  if (/^(off|false|0|no)$/i.test(text)) return { kind: 'off' };
  if (/^(on|true|1|yes)$/i.test(text)) return { kind: 'on' };
  const problem = patternProblem(text);
  if (problem)
    throw new Error(`setting ${settingName(name)} must be on, off or a 5-field cron pattern (minute hour day month weekday): ${problem}`);
  return { kind: 'on', when: text };
}

/** Why a pattern is not a 5-field cron pattern croner accepts, or null when it is. */
export function patternProblem(pattern: string): string | null {
  if (pattern.trim().split(/\s+/).length !== 5) return `"${pattern}" does not have 5 fields`;
  try {
    new Cron(pattern, { paused: true, mode: '5-part' });
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

export function isZone(zone: string): boolean {
  return IANAZone.isValidZone(zone);
}

const patterns = new Map<string, Cron>();

/**
 * The first instant strictly after `after` (epoch ms) at which `pattern` is due in `zone`. croner
 * reads the pattern in the zone's wall-clock time: a daily 02:30 falls on 03:00 on the night the
 * clocks go forward, and once (the first 02:30) on the night they go back.
 */
export function nextDue(pattern: string, zone: string, after: number): number | null {
  const key = `${zone}\u0000${pattern}`;
  let cron = patterns.get(key);
  if (!cron) {
    cron = new Cron(pattern, { paused: true, timezone: zone, mode: '5-part' });
    patterns.set(key, cron);
  }
  return cron.nextRun(new Date(after))?.getTime() ?? null;
}
