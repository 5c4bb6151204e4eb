import type { StoredResult } from '../../src/walks/jobs/result.js';

/**
 * A scored walk's result as scoring stores it (src/walks/jobs/result.ts), for walks made without
 * scoring (pushed by hand in sync tests, written by the sync benchmarks): `fruit` fruit, green,
 * turning and red in turn, spread over `frames` frames of one clip. Typed, so that it keeps the
 * shape an upstream checks a received walk against (src/walks/jobs/presenters.ts storedResultSchema).
 */
export function storedResult(fruit: number, frames: number, size = { width: 640, height: 480 }): StoredResult {
  const ripeness = ['green', 'turning', 'red'] as const;
  const counts = { green: 0, turning: 0, red: 0, total: fruit };
  for (let k = 0; k < fruit; k++) counts[ripeness[k % 3]!]++;
  return {
    detector: { name: 'builtin', kind: 'builtin', fallback_reason: null },
    counts,
    frames: Array.from({ length: frames }, (_, i) => ({
      index: i,
      clip: 0,
      time_s: i,
      detections: Math.ceil(fruit / frames),
      ...size,
      quality: { sharpness: 0.6, brightness: 0.5, dark_fraction: 0.01, bright_fraction: 0.01, motion_px_per_s: null, score: 0.8 },
    })),
    fruit: Array.from({ length: fruit }, (_, k) => ({
      track_id: k,
      ripeness: ripeness[k % 3]!,
      votes: { green: 1, turning: 0, red: 0 },
      box: [10, 10, 40, 40],
      frame: k % frames,
      first_frame: k % frames,
      last_frame: k % frames,
      frames_seen: 1,
      score: 0.9,
      diameter_mm: null,
    })),
    stems: { count: null, reason: 'the built-in detector does not see stems' },
    plants: { count: null, reason: 'the built-in detector does not see plants' },
    quality: { score: 0.8, warnings: [] },
    clips: [{ position: 0, frames }],
  };
}
