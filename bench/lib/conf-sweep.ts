// Sweeps of a model's video threshold (bench/scoring-photo-walk.ts and bench/scoring-walk.ts `--sweep`):
// one pass of the model per frame however many thresholds are tried, and the rule that chooses one.
import { createHash } from 'node:crypto';
import type { Detection, Detector } from '../../src/vision/types.js';
import type { CountBreakdown } from '../../test/helpers/walk-oracle.js';

/**
 * The model asked once per frame, at the lowest score any threshold of a sweep reads (`floor`), and every
 * later ask of that frame answered from it: the detections at or above the asked conf. That is what asking
 * the model at that conf answers, since its suppression is greedy by score (nmsByClass in
 * src/vision/onnx/decode.ts: a box is only ever dropped for a better one, and the cap keeps the best).
 * Frames are known by their pixels, so a walk that samples other frames at another threshold still gets
 * each frame's own detections.
 */
export function reusingDetector(inner: Detector, floor: number): Detector {
  const seen = new Map<string, Detection[]>();
  return {
    info: inner.info,
    async detect(image, options) {
      if (options.conf < floor) throw new Error(`asked for conf ${options.conf}, below the sweep's floor ${floor}`);
      const key = `${image.width}x${image.height}:${createHash('sha1').update(image.data).digest('hex')}`;
      let found = seen.get(key);
      if (!found) seen.set(key, (found = await inner.detect(image, { conf: floor })));
      return found.filter((d) => d.score >= options.conf);
    },
    close: () => inner.close?.() ?? Promise.resolve(),
  };
}

export interface SweepWalk {
  /** Which walk: a wall's fruit size, or a rendered walk's seed and speed. */
  name: string;
  truth: number;
  counted: number;
  /** (counted − truth) / truth, after tracking. */
  error: number;
  breakdown: CountBreakdown;
}
export interface SweepRow {
  conf: number;
  walks: SweepWalk[];
  within5: number;
  meanAbsError: number;
}

export function sweepRow(conf: number, walks: SweepWalk[]): SweepRow {
  return {
    conf,
    walks,
    within5: walks.filter((w) => Math.abs(w.error) <= 0.05).length,
    meanAbsError: walks.reduce((s, w) => s + Math.abs(w.error), 0) / Math.max(1, walks.length),
  };
}

/**
 * The rule the video threshold was first chosen by (on rendered tuning walks): the most walks counted
 * within 5 %, then the least mean |count error|; a tie after that goes to the higher threshold (fewer
 * tracks started on what is not fruit).
 */
export function chooseConf(rows: readonly SweepRow[]): SweepRow {
  return [...rows].sort((a, b) => b.within5 - a.within5 || a.meanAbsError - b.meanAbsError || b.conf - a.conf)[0]!;
}

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
export function formatSweep(rows: readonly SweepRow[]): string {
  const names = rows[0]?.walks.map((w) => w.name) ?? [];
  const lines = [
    `video conf | ${names.map((n) => `${n}: counted/truth, error (duplicates, no fruit, missed)`).join(' | ')} | within 5 % | mean |error|`,
  ];
  for (const r of rows)
    lines.push(
      [
        r.conf.toFixed(2),
        ...r.walks.map(
          (w) => `${w.counted}/${w.truth} ${pct(w.error)} (${w.breakdown.duplicates}, ${w.breakdown.unmatched}, ${w.breakdown.missed})`,
        ),
        `${r.within5} of ${r.walks.length}`,
        `${(r.meanAbsError * 100).toFixed(1)} %`,
      ].join(' | '),
    );
  if (rows.length)
    lines.push(`chosen: ${chooseConf(rows).conf} (most walks within 5 %, then least mean |error|, then the higher threshold)`);
  return lines.join('\n');
}
