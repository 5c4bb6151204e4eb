// CLI: film a walk past labelled photos (a wall of them, a panning camera) into an mp4 plus a JSON
// ground truth, to upload to the box or score in benchmarks.
//   node --import tsx scripts/render-photo-pan.ts --photos ../shared/data/tomato-photos --out DIR
//   [--fruit-px 48] [--name pan] [--width 1280] [--height 720] [--fps 15] [--pace 0.25] [--balance-each]
import { existsSync } from 'node:fs';
import path from 'node:path';
import { parseCli } from './cli.js';
import { renderPhotoPan } from './photo-pan/pan.js';

const USAGE =
  'usage: render-photo-pan.ts --photos DIR --out DIR [--fruit-px 48 --name pan --width 1280 --height 720 --fps 15 --pace 0.25 --balance-each]\n' +
  "  --fruit-px: the median labelled fruit's size in the video; --pace: share of the frame crossed per second;\n" +
  '  --height: about this high: the wall is whole rows of photos, so the video is as many rows as fit (718 for 720 at 48 px);\n  --balance-each: white-balance each photo on its own first (one light over the wall, as over a real row)';

const values = parseCli(
  {
    options: {
      photos: { type: 'string' },
      out: { type: 'string' },
      'fruit-px': { type: 'string', default: '48' },
      name: { type: 'string', default: 'pan' },
      width: { type: 'string', default: '1280' },
      height: { type: 'string', default: '720' },
      fps: { type: 'string', default: '15' },
      pace: { type: 'string', default: '0.25' },
      'balance-each': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  },
  USAGE,
);
const given = { 'fruit-px': values['fruit-px'], width: values.width, height: values.height, fps: values.fps, pace: values.pace };
const bad = Object.entries(given).find(([, v]) => !(Number(v) > 0 && Number.isFinite(Number(v))));
// The arguments first, the photo folder last: a wrong argument is named as such even where the
// folder is absent (a clone without the shared data).
const problem =
  !values.photos || !values.out
    ? '--photos and --out are needed'
    : bad
      ? `--${bad[0]} must be a positive number`
      : Number(given.width) % 2
        ? '--width must be even (4:2:0 video)'
        : !existsSync(values.photos)
          ? `no folder ${values.photos}`
          : null;
if (problem) {
  console.error(`${problem}\n${USAGE}`);
  process.exit(2);
}
const numbers = {
  fruitPx: Number(given['fruit-px']),
  width: Number(given.width),
  targetHeight: Number(given.height),
  fps: Number(given.fps),
  framesPerSecond: Number(given.pace),
};
const pan = await renderPhotoPan({
  photos: values.photos!,
  out: values.out!,
  name: values.name,
  balanceEach: values['balance-each'],
  ...numbers,
});
const t = pan.truth;
console.log(
  `${path.relative(process.cwd(), pan.files[0]!)}: ${t.width}×${t.height}, ${t.clips[0]!.seconds.toFixed(1)} s, ${t.fruit.length} labelled fruit (${t.fruit.filter((f) => f.ripeness === 'green').length} green), truth in ${path.relative(process.cwd(), pan.truthFile)}`,
);
