import { listOf } from '../http/schemas.js';
import type { JsonSchema } from '../http/route.js';

const instantOrNull = (description: string): JsonSchema => ({ type: ['string', 'null'], format: 'date-time', description });

export const runSchema: JsonSchema = {
  type: ['object', 'null'],
  description: 'The last run, or null when it never ran on this box.',
  required: ['started_at', 'finished_at', 'duration_ms', 'outcome', 'error', 'result'],
  additionalProperties: false,
  properties: {
    started_at: { type: 'string', format: 'date-time', description: 'When it began (UTC).' },
    finished_at: instantOrNull('When it ended (UTC); null while running or when interrupted.'),
    duration_ms: { type: ['integer', 'null'], description: 'How long it took, milliseconds.' },
    outcome: {
      enum: ['ok', 'failed', 'interrupted', 'running'],
      description: 'interrupted: the service stopped while it ran; it is run again at the next start.',
    },
    error: { type: ['string', 'null'], description: 'What went wrong, for a failed run.' },
    result: { type: ['object', 'null'], description: 'What the run reported (counts, a file name).' },
  },
};

export const scheduleSchema: JsonSchema = {
  type: 'object',
  required: [
    'name',
    'summary',
    'enabled',
    'off_reason',
    'when',
    'setting',
    'per_target',
    'time_zone',
    'next_run_at',
    'running',
    'last_run',
    'skipped_overlaps',
  ],
  additionalProperties: false,
  properties: {
    name: { type: 'string', description: 'The schedule (backup, media_retention, weather, forecast, sync...).' },
    summary: { type: 'string', description: 'What a run does.' },
    enabled: { type: 'boolean' },
    off_reason: { type: ['string', 'null'], description: 'Why it does not run, when it is off.' },
    when: { type: 'string', description: 'The 5-field cron pattern (minute hour day month weekday) it runs on.' },
    setting: { type: 'string', description: 'The setting that turns it on or off or moves it: on, off or a cron pattern.' },
    per_target: { type: 'boolean', description: 'true when it runs once per greenhouse (see targets).' },
    time_zone: {
      type: ['string', 'null'],
      description: 'IANA zone the pattern is read in (SCHEDULE_TIME_ZONE); null when each target has its own.',
    },
    next_run_at: instantOrNull('The next due time (UTC); for a per-greenhouse schedule the earliest; null when off.'),
    running: { type: 'boolean' },
    last_run: runSchema,
    skipped_overlaps: {
      type: 'integer',
      description: 'Due times skipped since the service started because the previous run was still going.',
    },
    targets: {
      type: 'array',
      description: 'For a per-greenhouse schedule: each greenhouse it runs for.',
      items: {
        type: 'object',
        required: ['key', 'label', 'time_zone', 'next_run_at', 'running', 'last_run'],
        additionalProperties: false,
        properties: {
          key: { type: 'string', description: 'The greenhouse id.' },
          label: { type: 'string' },
          time_zone: { type: 'string', description: 'IANA zone its pattern is read in.' },
          next_run_at: instantOrNull('Next due time (UTC).'),
          running: { type: 'boolean' },
          last_run: runSchema,
        },
      },
    },
  },
};

export const scheduleListSchema = listOf(scheduleSchema);
