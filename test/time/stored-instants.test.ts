import t from 'tap';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readInstant } from '../../src/time/instants.js';

/**
 * The reading of wall-clock times must not depend on the process zone: the
 * same cases run here and in child processes under TZ=UTC and
 * TZ=America/New_York, and must give the same fixed answers.
 */
const CASES: [string, string, string | null][] = [
  ['2026-03-01T12:00', 'Europe/Amsterdam', '2026-03-01T11:00:00.000Z'],
  ['2026-07-01T12:00', 'Europe/Amsterdam', '2026-07-01T10:00:00.000Z'],
  // Autumn: 02:30 happens twice; the first (summer, +02:00) is taken.
  ['2026-10-25T02:30', 'Europe/Amsterdam', '2026-10-25T00:30:00.000Z'],
  ['2026-10-25T02:30:00+01:00', 'Europe/Amsterdam', '2026-10-25T01:30:00.000Z'],
  ['2026-10-25T03:00', 'Europe/Amsterdam', '2026-10-25T02:00:00.000Z'],
  // Spring: 02:30 does not exist.
  ['2026-03-29T02:30', 'Europe/Amsterdam', null],
  ['2026-03-29T03:00', 'Europe/Amsterdam', '2026-03-29T01:00:00.000Z'],
  ['2026-11-01T01:30', 'America/New_York', '2026-11-01T05:30:00.000Z'],
  ['2026-03-08T02:30', 'America/New_York', null],
  // Lord Howe shifts by 30 minutes: 01:45 happens at +11:00 first.
  ['2026-04-05T01:45', 'Australia/Lord_Howe', '2026-04-04T14:45:00.000Z'],
  ['2026-03-01', 'Europe/Amsterdam', '2026-02-28T23:00:00.000Z'],
  ['2026-03-01T12:00:00Z', 'Asia/Tokyo', '2026-03-01T12:00:00.000Z'],
  ['1969-12-31T23:00:00Z', 'UTC', null],
  ['nonsense', 'UTC', null],
];

function run(): (string | null)[] {
  return CASES.map(([text, zone]) => {
    const r = readInstant(text, zone);
    return r.ok ? r.utc : null;
  });
}

if (process.env.CLIMATE_TIME_CHILD) {
  process.stdout.write(JSON.stringify(run()));
} else {
  const expected = CASES.map((c) => c[2]);
  t.same(run(), expected, `in this process (TZ=${process.env.TZ ?? 'unset'})`);
  for (const TZ of ['UTC', 'America/New_York', 'Asia/Kolkata']) {
    const out = execFileSync(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url)], {
      env: { ...process.env, TZ, CLIMATE_TIME_CHILD: '1', TAP: '0' },
      encoding: 'utf8',
    });
    const json = out.slice(out.indexOf('['), out.lastIndexOf(']') + 1);
    t.same(JSON.parse(json), expected, `TZ=${TZ}`);
  }
}
