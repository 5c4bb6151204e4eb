// CLI: rendered photos of the crop as a YOLO dataset, for training/ to mix into the tomato tiles (the issue allows
// the project's renders for augmentation, never as the only tomato data).
//   node --import tsx scripts/training-stills.ts --out training/work/renders [--count 60] [--seed 1000] [--turning-as red]
// Seeds from 1000 up by default: the walk benchmarks render seeds below 100, so a model trained on these
// stills never saw a benchmark walk. --turning-as red labels the renderer's turning fruit red, as the
// labelled photos do (orange fruit are labelled green or red there); --turning-as turning keeps the class.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseCli } from './cli.js';
import { renderStill } from './render/walk.js';

const USAGE = 'usage: training-stills.ts --out DIR [--count 60] [--seed 1000] [--turning-as red|turning]';
const values = parseCli(
  {
    options: {
      out: { type: 'string' },
      count: { type: 'string', default: '60' },
      seed: { type: 'string', default: '1000' },
      'turning-as': { type: 'string', default: 'red' },
      help: { type: 'boolean', default: false },
    },
  },
  USAGE,
);
if (!values.out) throw new Error(USAGE);
const out = path.resolve(values.out);
const count = Number(values.count);
const seed = Number(values.seed);
const turningAs = values['turning-as'];
if (turningAs !== 'red' && turningAs !== 'turning') throw new Error(`--turning-as must be red or turning\n${USAGE}`);
const CLASSES = ['green', 'turning', 'red'];
await mkdir(path.join(out, 'images'), { recursive: true });
await mkdir(path.join(out, 'labels'), { recursive: true });
await writeFile(path.join(out, 'classes.txt'), CLASSES.join('\n') + '\n');
for (let i = 0; i < count; i++) {
  // Different scenes, places along the row, framing and light: a quarter of them dim, as in the render's dark mode.
  const { jpeg, truth } = await renderStill({
    seed: seed + i,
    at: 0.3 + ((i * 0.37) % 2),
    viewWidth: 0.8 + ((i * 0.29) % 1),
    dark: i % 4 === 3,
    width: 1280,
    height: 960,
  });
  const name = `still-${seed + i}`;
  await writeFile(path.join(out, 'images', `${name}.jpg`), jpeg);
  const lines = truth.fruit
    .filter((f) => f.visible >= 0.35)
    .map((f) => {
      const [x1, y1, x2, y2] = f.box;
      const ripeness = f.ripeness === 'turning' ? turningAs : f.ripeness;
      const r = (v: number) => v.toFixed(6);
      return `${CLASSES.indexOf(ripeness)} ${r((x1 + x2) / 2 / truth.width)} ${r((y1 + y2) / 2 / truth.height)} ${r((x2 - x1) / truth.width)} ${r((y2 - y1) / truth.height)}`;
    });
  await writeFile(path.join(out, 'labels', `${name}.txt`), lines.join('\n') + (lines.length ? '\n' : ''));
}
console.log(`${count} rendered stills (seeds ${seed}–${seed + count - 1}) in ${out}`);
