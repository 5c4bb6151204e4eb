// The world of a synthetic walk: one crop row laid out in metres, independent of
// resolution and frame rate, so the same seed gives the same plants at any size.
import { createRng, gaussian, uniform } from './rng.js';
import { USDA_STAGES, type UsdaStage } from './truth.js';

export interface SceneOptions {
  seed: number;
  /** Length of row the scene must cover, metres. */
  rowLength: number;
  /** Distance between plants along the row, metres. */
  plantSpacing: number;
  /** Width of row the camera sees, metres (the phone's distance from the crop). */
  viewWidth: number;
  /** Height of row the camera sees, metres. */
  viewHeight: number;
  /** Fraction of plants with a second stem (growers often lay down two heads per plant). */
  secondStemRate: number;
}

export interface SceneStem {
  id: number;
  plant: number;
  /** x at the top of the view, and drift of x per metre down. */
  x0: number;
  slope: number;
  width: number;
}

export interface SceneFruit {
  id: number;
  plant: number;
  x: number;
  y: number;
  radius: number;
  stage: UsdaStage;
  /** Draw order among fruit: higher is nearer the camera. */
  depth: number;
}

export interface SceneLeaf {
  plant: number;
  x: number;
  y: number;
  /** Semi-axes in metres and rotation in radians. */
  a: number;
  b: number;
  angle: number;
  shade: number;
  /** Drawn over the fruit (occluding) or behind them. */
  front: boolean;
}

/** A truss stalk: from the stem through its fruit, in metres. */
export interface SceneTruss {
  plant: number;
  points: [number, number][];
}

export interface ScenePlant {
  id: number;
  x: number;
  stems: number[];
}

export interface Scene {
  options: SceneOptions;
  plants: ScenePlant[];
  stems: SceneStem[];
  fruit: SceneFruit[];
  leaves: SceneLeaf[];
  trusses: SceneTruss[];
  /** Far-background lattice for value noise (other rows, greenhouse structure). */
  backgroundNoise: Float32Array;
}

/** Truss ripeness: lower trusses are older, so riper; a truss ripens from the stem outwards. */
function trussStages(rng: () => number, heightFraction: number, count: number): UsdaStage[] {
  const base = Math.max(0, Math.min(5, Math.round(heightFraction * 6 - 0.5 + gaussian(rng) * 1.3)));
  const stages: UsdaStage[] = [];
  for (let k = 0; k < count; k++) {
    const lag = Math.floor(k * uniform(rng, 0.3, 0.8));
    stages.push(USDA_STAGES[Math.max(0, base - lag)]!);
  }
  return stages;
}

export function buildScene(options: SceneOptions): Scene {
  const rng = createRng(options.seed);
  const plants: ScenePlant[] = [];
  const stems: SceneStem[] = [];
  const fruit: SceneFruit[] = [];
  const leaves: SceneLeaf[] = [];
  const trusses: SceneTruss[] = [];
  const H = options.viewHeight;

  let plantId = 0;
  for (let x = -0.3; x < options.rowLength + 0.3; x += options.plantSpacing) {
    const px = x + uniform(rng, -0.15, 0.15) * options.plantSpacing;
    const plant: ScenePlant = { id: plantId++, x: px, stems: [] };
    plants.push(plant);
    const stemCount = rng() < options.secondStemRate ? 2 : 1;
    for (let s = 0; s < stemCount; s++) {
      const stem: SceneStem = {
        id: stems.length,
        plant: plant.id,
        x0: px + (stemCount === 2 ? (s === 0 ? -1 : 1) * options.plantSpacing * 0.18 : 0),
        slope: uniform(rng, -0.12, 0.12),
        width: uniform(rng, 0.01, 0.014),
      };
      stems.push(stem);
      plant.stems.push(stem.id);

      // Trusses hang off the stem on alternating sides at increasing height.
      const trussCount = 2 + Math.floor(rng() * 2);
      let side = rng() < 0.5 ? -1 : 1;
      for (let t = 0; t < trussCount; t++) {
        const ty = H * (0.18 + (0.7 * (t + uniform(rng, 0.15, 0.85))) / trussCount);
        const stemX = stem.x0 + stem.slope * ty;
        const n = 3 + Math.floor(rng() * 5);
        const stages = trussStages(rng, ty / H, n);
        const diameter = uniform(rng, 0.045, 0.068);
        let cx = stemX + side * (stem.width / 2 + diameter * 0.55);
        let cy = ty;
        const truss: SceneTruss = { plant: plant.id, points: [[stemX, ty - diameter * 0.6]] };
        trusses.push(truss);
        for (let k = 0; k < n; k++) {
          const d = diameter * uniform(rng, 0.85, 1.1);
          fruit.push({
            id: fruit.length,
            plant: plant.id,
            x: cx,
            y: cy + gaussian(rng) * d * 0.15,
            radius: d / 2,
            stage: stages[k]!,
            depth: rng(),
          });
          truss.points.push([cx, cy - d * 0.45]);
          // Neighbours on a truss touch or nearly touch; the truss bends down and outwards.
          const step = d * uniform(rng, 0.88, 1.02);
          const bend = uniform(rng, 0.15, 0.7);
          cx += side * step * Math.cos(bend);
          cy += step * Math.sin(bend) * (rng() < 0.35 ? -0.5 : 1);
        }
        side = -side;
      }

      // Leaves: compound tomato leaves reduced to long ellipses off the stem.
      const leafCount = 3 + Math.floor(rng() * 3);
      for (let l = 0; l < leafCount; l++) {
        const ly = uniform(rng, 0.02, 0.98) * H;
        const lside = rng() < 0.5 ? -1 : 1;
        const a = uniform(rng, 0.05, 0.11);
        const angle = lside > 0 ? uniform(rng, -0.5, 0.6) : Math.PI + uniform(rng, -0.6, 0.5);
        leaves.push({
          plant: plant.id,
          x: stem.x0 + stem.slope * ly + Math.cos(angle) * a * 0.9,
          y: ly + Math.sin(angle) * a * 0.9,
          a,
          b: a * uniform(rng, 0.28, 0.45),
          angle,
          shade: uniform(rng, 0.75, 1.15),
          front: rng() < 0.55,
        });
      }
    }
  }

  const backgroundNoise = new Float32Array(4096);
  for (let i = 0; i < backgroundNoise.length; i++) backgroundNoise[i] = rng();
  return { options, plants, stems, fruit, leaves, trusses, backgroundNoise };
}
