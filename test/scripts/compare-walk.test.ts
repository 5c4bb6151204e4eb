// Countable fruit on a rendered walk (the measure the walk benchmark and scripts/compare-walk.ts use).
import t from 'tap';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Box } from '../../src/vision/types.js';
import type { TruthFruit, WalkTruth } from '../../scripts/render/truth.js';
import { compareCounts, countableFruit, renderedFramesOf, sampledEvery } from '../../scripts/compare/countable.js';
import { renderWalk } from '../../scripts/render/walk.js';
import { resolveFfmpeg } from '../../src/vision/media/index.js';

const run = promisify(execFile);
const ROOT = path.resolve(import.meta.dirname, '../..');
const BOX: Box = [0, 0, 10, 10];

function fruit(id: number, ripeness: TruthFruit['ripeness'], sightings: [clip: number, frame: number, visible: number][]): TruthFruit {
  return {
    id,
    ripeness,
    stage: 'green',
    plant: 0,
    x: 0,
    y: 0,
    diameterMm: 60,
    appearances: sightings.map(([clip, frame, visible]) => ({ clip, frame, box: BOX, visible })),
  };
}

function walk(fruits: TruthFruit[]): WalkTruth {
  return {
    version: 1,
    seed: 1,
    width: 640,
    height: 360,
    fps: 30,
    speed: 0.3,
    mmPerPixel: 2,
    clips: [
      { index: 0, file: 'w-1.mp4', startSeconds: 0, seconds: 1.0333, frames: 31 },
      { index: 1, file: 'w-2.mp4', startSeconds: 1.0333, seconds: 0.5, frames: 15 },
    ],
    fruit: fruits,
    stems: [],
    plants: [],
  };
}

t.test('a fruit is countable when seen well in two of the frames looked at', async (t) => {
  const truth = walk([
    fruit(1, 'red', [
      [0, 0, 0.9],
      [0, 15, 0.8],
    ]),
    fruit(2, 'green', [
      [0, 0, 0.34],
      [0, 15, 0.34],
      [0, 30, 0.34],
    ]),
    fruit(3, 'turning', [
      [0, 0, 0.35],
      [0, 30, 0.35],
    ]),
    fruit(4, 'green', [
      [0, 15, 1],
      [0, 16, 1],
      [0, 17, 1],
    ]),
    fruit(5, 'red', [
      [0, 30, 0.9],
      [1, 0, 0.9],
    ]),
  ]);
  const grid = sampledEvery(truth, 0.5);
  t.same(grid, [
    { clip: 0, frame: 0 },
    { clip: 0, frame: 15 },
    { clip: 0, frame: 30 },
    { clip: 1, frame: 0 },
  ]);
  t.same(
    countableFruit(truth, grid),
    { green: 0, turning: 1, red: 2, total: 3 },
    'fruit 2 never 35 % in view, fruit 4 seen well only in one looked-at frame; fruit 5 across the clip join',
  );
  t.same(
    countableFruit(truth, [{ clip: 0, frame: 15 }]),
    { green: 1, turning: 0, red: 1, total: 2 },
    'one frame (a photo): one sighting is enough',
  );
  t.same(countableFruit(truth, grid, { minVisible: 0.3, minSightings: 3 }), { green: 1, turning: 0, red: 0, total: 1 });
  t.same(countableFruit(truth, []), { green: 0, turning: 0, red: 0, total: 0 });
});

t.test('sampling grid and the rendered frames of scored frames', async (t) => {
  const truth = walk([]);
  t.same(
    sampledEvery(truth, 0.25)
      .filter((f) => f.clip === 1)
      .map((f) => f.frame),
    [0, 8],
    '0.25 s at 30 fps rounds to frames 0, 8 (15 is past the clip)',
  );
  t.throws(() => sampledEvery(truth, 0), RangeError);
  t.same(
    renderedFramesOf(truth, [
      { clip: 0, time_s: 0.5 },
      { clip: 0, time_s: 0.49 },
      { clip: 1, time_s: 9 },
      { clip: 1, time_s: -0.01 },
    ]),
    [
      { clip: 0, frame: 15 },
      { clip: 0, frame: 15 },
      { clip: 1, frame: 14 },
      { clip: 1, frame: 0 },
    ],
    'nearest frame, kept inside its clip',
  );
  t.throws(() => renderedFramesOf(truth, [{ clip: 2, time_s: 0 }]), /render has 2 clip/);
});

t.test('counts against countable, class by class', async (t) => {
  const rows = compareCounts({ green: 11, turning: 0, red: 9, total: 20 }, { green: 10, turning: 0, red: 10, total: 20 });
  t.same(
    rows.map((r) => [r.class, r.error]),
    [
      ['green', 0.1],
      ['turning', null],
      ['red', -0.1],
      ['total', 0],
    ],
  );
});

const ffmpeg = await resolveFfmpeg();
t.test(
  'the CLI reads a render and a finished job',
  { skip: ffmpeg.available ? false : `ffmpeg is not available here: ${ffmpeg.reason}` },
  async (t) => {
    const dir = t.testdir();
    const r = await renderWalk({ out: dir, seconds: 2, fps: 15, width: 640, height: 360, speed: 0.3, seed: 5, name: 'w' });
    const frames = [0, 0.5, 1, 1.5].map((time_s, index) => ({ index, clip: 0, time_s }));
    const countable = countableFruit(r.truth, renderedFramesOf(r.truth, frames));
    t.ok(countable.total > 5, `${countable.total} fruit countable in 2 s`);
    const counted = { ...countable, red: countable.red + 1, total: countable.total + 1 };
    const jobFile = path.join(dir, 'job.json');
    await writeFile(jobFile, JSON.stringify({ status: 'done', counts: counted, result: { frames } }));
    const cli = (job: string) =>
      run(process.execPath, ['--import', 'tsx', 'scripts/compare-walk.ts', '--truth', r.truthFile, '--job', job], { cwd: ROOT });
    const { stdout } = await cli(jobFile);
    t.match(stdout, `4 frames scored; ${r.truth.fruit.length} fruit rendered`);
    t.match(stdout, new RegExp(`total +${counted.total} +${countable.total} +\\+${((1 / countable.total) * 100).toFixed(1)} %`));
    t.match(stdout, new RegExp(`green +${countable.green} +${countable.green} +${countable.green ? '\\+0\\.0 %' : '—'}`));

    await writeFile(jobFile, JSON.stringify({ status: 'running', counts: null, result: null }));
    const failed = await cli(jobFile).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    t.equal(failed?.code, 1, 'an unfinished job is refused');
    t.match(failed?.stderr, 'the job is running');
  },
);

t.test('render-walk.ts says how it is called: --help, and an unknown option', async (t) => {
  const cli = (...args: string[]) => run(process.execPath, ['--import', 'tsx', 'scripts/render-walk.ts', ...args], { cwd: ROOT });
  const help = await cli('--help');
  t.match(help.stdout, /^usage: render-walk\.ts --out DIR/, '--help prints the usage');
  await t.rejects(
    cli('--no-such-option'),
    { code: 2, stderr: /Unknown option '--no-such-option'\nusage: render-walk\.ts/ },
    'an unknown option names it and exits 2, without a stack trace',
  );
  await t.rejects(cli(), { code: 2, stderr: /^usage: / }, 'no --out: the usage');
});
