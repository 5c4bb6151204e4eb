// CLI: a walk the box scored against the render it came from.
//   curl -s -H "X-API-Key: $KEY" "$BOX/api/observations/$JOB_ID" > job.json
//   node --import tsx scripts/compare-walk.ts --truth walk.json --job job.json
// Countable fruit are those at least 35 % in view in two of the frames the box scored (the walk
// benchmark's measure); the render's full fruit list also holds fruit never seen well twice.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { WalkTruth } from './render/truth.js';
import { compareCounts, countableFruit, renderedFramesOf, type ClassCounts, type ScoredFrame } from './compare/countable.js';

const { values } = parseArgs({ options: { truth: { type: 'string' }, job: { type: 'string' } } });
if (!values.truth || !values.job) {
  console.error('usage: compare-walk.ts --truth walk.json --job job.json   (job.json: GET /api/observations/{id})');
  process.exit(2);
}

const truth = JSON.parse(await readFile(values.truth, 'utf8')) as WalkTruth;
const job = JSON.parse(await readFile(values.job, 'utf8')) as {
  status?: string;
  counts?: ClassCounts | null;
  result?: { frames?: ScoredFrame[] } | null;
};
if (job.status !== 'done' || !job.counts || !job.result?.frames) {
  console.error(`the job is ${job.status ?? 'not a job'}: only a finished walk (status done) can be compared`);
  process.exit(1);
}

const frames = renderedFramesOf(truth, job.result.frames);
const rows = compareCounts(job.counts, countableFruit(truth, frames));
const pct = (e: number | null) => (e === null ? '—' : `${e >= 0 ? '+' : ''}${(e * 100).toFixed(1)} %`);
console.log(`${frames.length} frames scored; ${truth.fruit.length} fruit rendered`);
console.log('class      counted  countable  error');
for (const r of rows)
  console.log(`${r.class.padEnd(10)} ${String(r.counted).padStart(7)}  ${String(r.countable).padStart(9)}  ${pct(r.error)}`);
