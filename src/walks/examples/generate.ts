// Renders the example photos shipped in examples/ (synthetic tomato-row stills
// with known contents) and writes examples/index.json describing them.
//   node --import tsx src/walks/examples/generate.ts
// Deterministic: the same seeds give the same photos, so the committed files can be re-made.
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { renderStill } from '../../../scripts/render/walk.js';
import { EXAMPLES_DIR, type Example } from './catalogue.js';

interface Spec {
  key: string;
  title: string;
  description: string;
  seed: number;
  dark?: boolean;
  at?: number;
  viewWidth?: number;
}

const SPECS: Spec[] = [
  {
    key: 'row-mixed',
    title: 'Row with mixed ripeness',
    description: 'A tomato row in good light with green, turning and red fruit on several trusses.',
    seed: 21,
  },
  {
    key: 'row-close',
    title: 'Close view of two plants',
    description: 'The camera close to the row (80 cm of row across the frame): fewer, larger fruit.',
    seed: 34,
    viewWidth: 0.8,
  },
  {
    key: 'row-wide',
    title: 'Wide view along the row',
    description: 'A wider view (1.6 m of row across the frame): many small fruit.',
    seed: 47,
    viewWidth: 1.6,
  },
  {
    key: 'row-dark',
    title: 'Dull light',
    description: 'The same kind of row filmed in a dark greenhouse: expect a "too dark" quality warning.',
    seed: 58,
    dark: true,
  },
];

const WIDTH = 800;
const HEIGHT = 600;
const VISIBLE = 0.5;

export async function generateExamples(dir = EXAMPLES_DIR): Promise<Example[]> {
  await mkdir(dir, { recursive: true });
  const out: Example[] = [];
  for (const spec of SPECS) {
    const { jpeg, truth } = await renderStill({
      seed: spec.seed,
      width: WIDTH,
      height: HEIGHT,
      dark: spec.dark,
      at: spec.at,
      viewWidth: spec.viewWidth,
      quality: 5,
    });
    const file = `${spec.key}.jpg`;
    await writeFile(path.join(dir, file), jpeg);
    const fruit = truth.fruit.filter((f) => f.visible >= VISIBLE);
    const by = (r: string) => fruit.filter((f) => f.ripeness === r).length;
    out.push({
      key: spec.key,
      file,
      title: spec.title,
      description: spec.description,
      width: truth.width,
      height: truth.height,
      mm_per_pixel: Math.round(truth.mmPerPixel * 10000) / 10000,
      truth: {
        green: by('green'),
        turning: by('turning'),
        red: by('red'),
        total: fruit.length,
        stems: truth.stems.filter((s) => s.visible >= VISIBLE).length,
        plants: truth.plants.filter((p) => p.visible >= VISIBLE).length,
      },
    });
  }
  await writeFile(
    path.join(dir, 'index.json'),
    JSON.stringify({ generated_by: 'src/walks/examples/generate.ts', examples: out }, null, 2) + '\n',
  );
  return out;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const made = await generateExamples();
  for (const e of made)
    console.log(`${e.file}: ${e.truth.total} fruit (${e.truth.green} green, ${e.truth.turning} turning, ${e.truth.red} red)`);
}
