// CLI: render a synthetic walk along a tomato row into mp4 clip(s) plus a JSON ground truth.
//   node --import tsx scripts/render-walk.ts --out dir --seconds 10 --fps 30 --width 1280 --height 720 --speed 0.3 --seed 1 [--clips 3]
//   [--gap 0] [--spacing 0.4] [--view-width 1.2] [--dark] [--lighting studio|greenhouse] [--blur 0.5] [--noise 2] [--name walk]
//   --still N renders N example photos (example-<seed>.jpg + .json) instead of a walk.
import { writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { parseCli } from './cli.js';
import { renderStill, renderWalk } from './render/walk.js';
import type { FruitLighting } from './render/raster.js';
import { countableFruit, sampledEvery } from './compare/countable.js';

const USAGE =
  'usage: render-walk.ts --out DIR [--seconds 10 --fps 30 --width 1280 --height 720 --speed 0.3 --seed 1 --clips 1 --gap 0 ' +
  '--spacing 0.4 --view-width 1.2 --dark --lighting studio|greenhouse --blur 0.5 --noise 2 --name walk] | [--out DIR --still N]';

const values = parseCli(
  {
    options: {
      out: { type: 'string' },
      seconds: { type: 'string', default: '10' },
      fps: { type: 'string', default: '30' },
      width: { type: 'string', default: '1280' },
      height: { type: 'string', default: '720' },
      speed: { type: 'string', default: '0.3' },
      seed: { type: 'string', default: '1' },
      clips: { type: 'string', default: '1' },
      gap: { type: 'string' },
      spacing: { type: 'string' },
      'view-width': { type: 'string' },
      dark: { type: 'boolean', default: false },
      lighting: { type: 'string', default: 'studio' },
      blur: { type: 'string' },
      noise: { type: 'string' },
      name: { type: 'string' },
      still: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  },
  USAGE,
);

const num = (s: string | undefined) => (s === undefined ? undefined : Number(s));
function lightingOf(s: string | undefined): FruitLighting {
  if (s === 'studio' || s === 'greenhouse') return s;
  console.error(`--lighting must be studio or greenhouse\n${USAGE}`);
  process.exit(2);
}
if (!values.out) {
  console.error(USAGE);
  process.exit(2);
}

const started = performance.now();
if (values.still) {
  await mkdir(values.out, { recursive: true });
  const seed0 = Number(values.seed);
  for (let k = 0; k < Number(values.still); k++) {
    const seed = seed0 + k;
    const { jpeg, truth } = await renderStill({
      seed,
      width: Number(values.width),
      height: Number(values.height),
      dark: values.dark,
      viewWidth: num(values['view-width']),
    });
    await writeFile(path.join(values.out, `example-${seed}.jpg`), jpeg);
    await writeFile(path.join(values.out, `example-${seed}.json`), JSON.stringify(truth));
    console.log(`example-${seed}.jpg: ${truth.fruit.length} fruit`);
  }
} else {
  const r = await renderWalk({
    out: values.out,
    seconds: Number(values.seconds),
    fps: Number(values.fps),
    width: Number(values.width),
    height: Number(values.height),
    speed: Number(values.speed),
    seed: Number(values.seed),
    clips: Number(values.clips),
    clipGapSeconds: num(values.gap),
    plantSpacing: num(values.spacing),
    viewWidth: num(values['view-width']),
    dark: values.dark,
    lighting: lightingOf(values.lighting),
    blur: num(values.blur),
    noise: num(values.noise),
    name: values.name,
  });
  const byClass = { green: 0, turning: 0, red: 0 };
  for (const f of r.truth.fruit) byClass[f.ripeness]++;
  // What a walk sampled every 0.5 s (the box's pace for a walking speed) can count; the exact
  // figure for a scored walk comes from scripts/compare-walk.ts with the frames it scored.
  const countable = countableFruit(r.truth, sampledEvery(r.truth, 0.5));
  console.log(
    JSON.stringify({
      files: r.files,
      truth: r.truthFile,
      fruit: r.truth.fruit.length,
      ...byClass,
      countable_at_0_5_s: countable,
      stems: r.truth.stems.length,
      plants: r.truth.plants.length,
      seconds: ((performance.now() - started) / 1000).toFixed(1),
    }),
  );
}
