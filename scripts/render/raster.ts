// Draws one frame of a scene into an RGB buffer and measures, through an object-id
// buffer, how much of each fruit the camera actually sees (leaves and nearer fruit hide some).
import type { Box } from '../../src/vision/types.js';
import type { Scene, SceneFruit, SceneLeaf, SceneStem, SceneTruss } from './scene.js';
import type { UsdaStage } from './truth.js';

// Skin colours in bright diffuse light, after photos of greenhouse tomatoes: mature green
// fruit are pale, whitish green, well apart from the darker, bluer leaves. Each stage's CIELAB
// hue (D65) sits in the middle of the colorimetry ranges for the USDA stages (hue at the
// circumference: mature green > 114°, breaker 101–114°, turning 85–101°, pink 64–85°,
// light red 36–64°, red < 36°; "Classification of tomato ripeness and maturity by food
// colorimetry"), so the truth's stage is the stage a colorimeter would give the skin.
// Lightness and chroma are the photos'. In the comments: L*, C*, h°.
const STAGE_RGB: Record<UsdaStage, [number, number, number]> = {
  green: [150, 190, 110], // 72.5, 45.2, 127.1
  breaker: [188, 192, 104], // 75.7, 45.9, 107.9
  turning: [202, 177, 72], // 72.5, 55.4, 93.2
  pink: [205, 143, 49], // 64.0, 58.5, 74.9
  light_red: [221, 92, 31], // 55.2, 73.9, 49.8
  red: [216, 24, 39], // 46.2, 81.8, 32.9
};

const LEAF_ID = -2;
const STEM_ID = -3;
const BACKGROUND_ID = -1;
const TRUSS_ID = -4;

export interface RasterOptions {
  width: number;
  height: number;
  /** Pixels per world metre. */
  ppm: number;
  /** Overall light level: 1 is a bright day, ~0.35 a dull evening. */
  light: number;
  /** Sensor noise standard deviation in 8-bit levels. */
  noise: number;
  /** Horizontal motion-blur length in pixels (0 for none). */
  blurPx: number;
  /** How the fruit are lit (default 'studio'; see FRUIT_LIGHTING). */
  lighting?: FruitLighting;
}

/**
 * 'studio': one light from the upper left over a dim ambient, the same for every fruit. A fruit's
 * lower right is then about a quarter as bright as its lit side: its box's centre is 35–41 luma
 * levels (of 255) brighter than the ring around it, on every fruit. 'greenhouse': light through
 * glass, screens and the canopy comes from much of the sky and from the side the fruit happens to
 * face, so each fruit gets its own direction and a brighter ambient, and a duller shine. Chosen so
 * that the centre-to-ring step of fully visible rendered fruit spreads as on the labelled tomato
 * photos (docs/tracking.md, "Synthetic walks").
 */
export type FruitLighting = 'studio' | 'greenhouse';

interface FruitLight {
  lx: number;
  ly: number;
  lz: number;
  hx: number;
  hy: number;
  hz: number;
  ambient: number;
  diffuse: number;
  shine: number;
}

const STUDIO_LIGHT: FruitLight = {
  lx: -0.35,
  ly: -0.45,
  lz: 0.82,
  hx: -0.184,
  hy: -0.236,
  hz: 0.954,
  ambient: 0.28,
  diffuse: 0.78,
  shine: 230,
};

/** A fruit's own light under 'greenhouse' lighting, fixed by its id so every frame agrees. */
function greenhouseLight(id: number): FruitLight {
  const u = (k: number) => (((id + 1) * 2654435761 + k * 40503) >>> 0) / 4294967296;
  // Azimuth anywhere; elevation from grazing to nearly frontal.
  const az = u(1) * 2 * Math.PI;
  const tilt = Math.acos(0.25 + 0.7 * u(2));
  const lx = Math.sin(tilt) * Math.cos(az);
  const ly = Math.sin(tilt) * Math.sin(az);
  const lz = Math.cos(tilt);
  // Half vector between the light and the viewer (0, 0, 1).
  const n = Math.hypot(lx, ly, lz + 1);
  // A brighter ambient with a weaker direct light; the sum keeps a fruit as bright on average as
  // under 'studio' light (about 0.71 of its skin colour), so the skin colours stay calibrated.
  const ambient = 0.44 + 0.26 * u(3);
  return { lx, ly, lz, hx: lx / n, hy: ly / n, hz: (lz + 1) / n, ambient, diffuse: 0.93 - ambient, shine: 60 + 90 * u(4) };
}

export interface FrameObject {
  id: number;
  box: Box;
  visible: number;
}

export interface FrameVisibility {
  fruit: FrameObject[];
  stems: FrameObject[];
  plants: FrameObject[];
}

export class FrameRasterizer {
  readonly rgb: Uint8ClampedArray;
  private readonly ids: Int32Array;
  private readonly rowBase: Float32Array;
  private readonly colFactor: Float32Array;
  private readonly noiseTable: Float32Array;
  private readonly blurRow: Float32Array;
  private frameCounter = 0;

  constructor(
    private readonly scene: Scene,
    private readonly o: RasterOptions,
  ) {
    this.rgb = new Uint8ClampedArray(o.width * o.height * 3);
    this.ids = new Int32Array(o.width * o.height);
    // Greenhouse background: bright glass roof fading into dark foliage of the next rows.
    this.rowBase = new Float32Array(o.height * 3);
    for (let y = 0; y < o.height; y++) {
      const t = y / Math.max(1, o.height - 1);
      this.rowBase[y * 3] = (150 - 95 * t) * o.light;
      this.rowBase[y * 3 + 1] = (165 - 92 * t) * o.light;
      this.rowBase[y * 3 + 2] = (150 - 105 * t) * o.light;
    }
    this.colFactor = new Float32Array(o.width);
    this.noiseTable = new Float32Array(1 << 16);
    let seed = 12345;
    for (let i = 0; i < this.noiseTable.length; i++) {
      // Cheap deterministic pseudo-normal: sum of uniforms (Irwin–Hall), scaled to unit variance.
      let s = 0;
      for (let k = 0; k < 4; k++) {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        s += seed / 4294967296;
      }
      this.noiseTable[i] = (s - 2) * Math.sqrt(3) * o.noise;
    }
    this.blurRow = new Float32Array(o.width * 3);
  }

  private valueNoise(u: number): number {
    const n = this.scene.backgroundNoise;
    const i = Math.floor(u);
    const f = u - i;
    const a = n[((i % n.length) + n.length) % n.length]!;
    const b = n[(((i + 1) % n.length) + n.length) % n.length]!;
    const s = f * f * (3 - 2 * f);
    return a + (b - a) * s;
  }

  /** Renders the view whose left edge is at world x = camX. */
  render(camX: number): FrameVisibility {
    const { width: W, height: H, ppm, light } = this.o;
    const rgb = this.rgb;
    const ids = this.ids;
    const viewWidth = W / ppm;

    // Background moves at a parallax of 0.35: it is further away than the crop.
    for (let x = 0; x < W; x++) {
      const far = (camX * 0.35 + x / ppm) * 1;
      this.colFactor[x] = 0.62 + 0.3 * this.valueNoise(far * 7) + 0.12 * this.valueNoise(far * 29);
    }
    for (let y = 0; y < H; y++) {
      const r = this.rowBase[y * 3]!,
        g = this.rowBase[y * 3 + 1]!,
        b = this.rowBase[y * 3 + 2]!;
      let p = y * W * 3;
      for (let x = 0; x < W; x++, p += 3) {
        const f = this.colFactor[x]!;
        rgb[p] = r * f;
        rgb[p + 1] = g * f;
        rgb[p + 2] = b * f;
      }
    }
    ids.fill(BACKGROUND_ID);

    const lo = camX - 0.4;
    const hi = camX + viewWidth + 0.4;
    const leaves = this.scene.leaves.filter((l) => l.x > lo && l.x < hi);
    const stems = this.scene.stems.filter((s) => s.x0 > lo && s.x0 < hi);
    const fruit = this.scene.fruit.filter((f) => f.x > lo && f.x < hi).sort((a, b) => a.depth - b.depth);

    const trusses = this.scene.trusses.filter((tr) => tr.points[0]![0] > lo && tr.points[0]![0] < hi);
    for (const leaf of leaves) if (!leaf.front) this.drawLeaf(leaf, camX);
    for (const stem of stems) this.drawStem(stem, camX);
    for (const tr of trusses) this.drawTruss(tr, camX);
    for (const f of fruit) this.drawFruit(f, camX);
    for (const leaf of leaves) if (leaf.front) this.drawLeaf(leaf, camX);

    const visibility = this.measure(camX, fruit, stems, leaves);
    if (this.o.blurPx >= 2) this.motionBlur(Math.round(this.o.blurPx));
    if (this.o.noise > 0) {
      const off = (this.frameCounter++ * 7919) & 0xffff;
      const t = this.noiseTable;
      for (let i = 0; i < rgb.length; i++) rgb[i] = rgb[i]! + t[(i + off) & 0xffff]!;
    }
    void light;
    return visibility;
  }

  private drawStem(stem: SceneStem, camX: number): void {
    const { width: W, height: H, ppm, light } = this.o;
    const half = (stem.width * ppm) / 2;
    for (let y = 0; y < H; y++) {
      const cx = (stem.x0 + (stem.slope * y) / ppm - camX) * ppm;
      const x0 = Math.max(0, Math.floor(cx - half));
      const x1 = Math.min(W - 1, Math.ceil(cx + half));
      for (let x = x0; x <= x1; x++) {
        const u = (x + 0.5 - cx) / half;
        if (u < -1 || u > 1) continue;
        const shade = (0.5 + 0.5 * Math.sqrt(1 - u * u) - 0.15 * u) * light;
        const p = (y * W + x) * 3;
        this.rgb[p] = 95 * shade;
        this.rgb[p + 1] = 142 * shade;
        this.rgb[p + 2] = 62 * shade;
        this.ids[y * W + x] = STEM_ID;
      }
    }
  }

  /** A thick line segment, flat colour; `id` marks its pixels in the id buffer unless null. */
  private drawSegment(
    ax: number,
    ay: number,
    bx: number,
    by: number,
    halfWidth: number,
    rgb: [number, number, number],
    id: number | null,
  ): void {
    const { width: W, height: H } = this.o;
    const x0 = Math.max(0, Math.floor(Math.min(ax, bx) - halfWidth));
    const x1 = Math.min(W - 1, Math.ceil(Math.max(ax, bx) + halfWidth));
    const y0 = Math.max(0, Math.floor(Math.min(ay, by) - halfWidth));
    const y1 = Math.min(H - 1, Math.ceil(Math.max(ay, by) + halfWidth));
    const dx = bx - ax,
      dy = by - ay;
    const len2 = Math.max(1e-9, dx * dx + dy * dy);
    const hw2 = halfWidth * halfWidth;
    for (let y = y0; y <= y1; y++)
      for (let x = x0; x <= x1; x++) {
        const px = x + 0.5 - ax,
          py = y + 0.5 - ay;
        const u = Math.max(0, Math.min(1, (px * dx + py * dy) / len2));
        const ex = px - u * dx,
          ey = py - u * dy;
        if (ex * ex + ey * ey > hw2) continue;
        const p = (y * W + x) * 3;
        this.rgb[p] = rgb[0];
        this.rgb[p + 1] = rgb[1];
        this.rgb[p + 2] = rgb[2];
        if (id !== null) this.ids[y * W + x] = id;
      }
  }

  /** Truss stalks: thin green structures beside the stems, the stem finder's confusers. */
  private drawTruss(tr: SceneTruss, camX: number): void {
    const { ppm, light } = this.o;
    const half = Math.max(0.8, 0.0025 * ppm);
    const colour: [number, number, number] = [104 * light, 138 * light, 72 * light];
    for (let k = 1; k < tr.points.length; k++) {
      const [ax, ay] = tr.points[k - 1]!,
        [bx, by] = tr.points[k]!;
      this.drawSegment((ax - camX) * ppm, ay * ppm, (bx - camX) * ppm, by * ppm, half, colour, TRUSS_ID);
    }
  }

  private drawLeaf(leaf: SceneLeaf, camX: number): void {
    const { width: W, height: H, ppm, light } = this.o;
    const cx = (leaf.x - camX) * ppm;
    const cy = leaf.y * ppm;
    const a = leaf.a * ppm;
    const b = leaf.b * ppm;
    const cos = Math.cos(leaf.angle);
    const sin = Math.sin(leaf.angle);
    const ex = Math.sqrt(a * a * cos * cos + b * b * sin * sin);
    const ey = Math.sqrt(a * a * sin * sin + b * b * cos * cos);
    const x0 = Math.max(0, Math.floor(cx - ex));
    const x1 = Math.min(W - 1, Math.ceil(cx + ex));
    const y0 = Math.max(0, Math.floor(cy - ey));
    const y1 = Math.min(H - 1, Math.ceil(cy + ey));
    for (let y = y0; y <= y1; y++) {
      const dy = y + 0.5 - cy;
      for (let x = x0; x <= x1; x++) {
        const dx = x + 0.5 - cx;
        const u = (dx * cos + dy * sin) / a;
        const v = (-dx * sin + dy * cos) / b;
        if (u * u + v * v >= 1) continue;
        let shade = leaf.shade * (0.75 + 0.25 * (1 - Math.abs(u))) * light;
        if (Math.abs(v) < 0.07) shade *= 1.3; // midrib
        const p = (y * W + x) * 3;
        this.rgb[p] = 52 * shade;
        this.rgb[p + 1] = 98 * shade;
        this.rgb[p + 2] = 62 * shade;
        this.ids[y * W + x] = LEAF_ID;
      }
    }
  }

  private drawFruit(f: SceneFruit, camX: number): void {
    const { width: W, height: H, ppm, light } = this.o;
    const cx = (f.x - camX) * ppm;
    const cy = f.y * ppm;
    const r = f.radius * ppm;
    const [br, bg, bb] = STAGE_RGB[f.stage];
    const x0 = Math.max(0, Math.floor(cx - r));
    const x1 = Math.min(W - 1, Math.ceil(cx + r));
    const y0 = Math.max(0, Math.floor(cy - r));
    const y1 = Math.min(H - 1, Math.ceil(cy + r));
    const inv = 1 / r;
    const L = this.o.lighting === 'greenhouse' ? greenhouseLight(f.id) : STUDIO_LIGHT;
    for (let y = y0; y <= y1; y++) {
      const ny = (y + 0.5 - cy) * inv;
      for (let x = x0; x <= x1; x++) {
        const nx = (x + 0.5 - cx) * inv;
        const d2 = nx * nx + ny * ny;
        if (d2 >= 1) continue;
        const nz = Math.sqrt(1 - d2);
        // Lambert shading; a Blinn–Phong highlight gives the waxy shine of a tomato.
        const diffuse = Math.max(0, L.lx * nx + L.ly * ny + L.lz * nz);
        const spec = Math.pow(Math.max(0, L.hx * nx + L.hy * ny + L.hz * nz), 60) * L.shine;
        const shade = (L.ambient + L.diffuse * diffuse) * light;
        const p = (y * W + x) * 3;
        this.rgb[p] = br * shade + spec * light;
        this.rgb[p + 1] = bg * shade + spec * light;
        this.rgb[p + 2] = bb * shade + spec * light;
        this.ids[y * W + x] = f.id;
      }
    }
    // Calyx: five sepals round the stalk end at the top of the fruit, part of the fruit.
    const top = cy - 0.72 * r;
    const turn = ((f.id * 2654435761) >>> 0) / 4294967296;
    const sepal: [number, number, number] = [72 * light, 112 * light, 56 * light];
    for (let k = 0; k < 5; k++) {
      const a = (k / 5 + turn) * 2 * Math.PI;
      this.drawSegment(cx, top, cx + Math.cos(a) * 0.42 * r, top + Math.sin(a) * 0.2 * r, Math.max(0.6, 0.07 * r), sepal, f.id);
    }
  }

  private measure(camX: number, fruit: SceneFruit[], stems: SceneStem[], leaves: SceneLeaf[]): FrameVisibility {
    const { width: W, height: H, ppm } = this.o;
    const clip = (b: Box): Box | null => {
      const c: Box = [Math.max(0, b[0]), Math.max(0, b[1]), Math.min(W, b[2]), Math.min(H, b[3])];
      return c[2] > c[0] && c[3] > c[1] ? c : null;
    };
    const area = (b: Box) => (b[2] - b[0]) * (b[3] - b[1]);
    const plantBoxes = new Map<number, Box>();
    const grow = (plant: number, b: Box) => {
      const cur = plantBoxes.get(plant);
      plantBoxes.set(
        plant,
        cur ? [Math.min(cur[0], b[0]), Math.min(cur[1], b[1]), Math.max(cur[2], b[2]), Math.max(cur[3], b[3])] : [...b],
      );
    };

    const outFruit: FrameObject[] = [];
    for (const f of fruit) {
      const cx = (f.x - camX) * ppm;
      const cy = f.y * ppm;
      const r = f.radius * ppm;
      const full: Box = [cx - r, cy - r, cx + r, cy + r];
      grow(f.plant, full);
      const box = clip(full);
      if (!box) continue;
      let seen = 0;
      const x0 = Math.floor(box[0]),
        x1 = Math.ceil(box[2]),
        y0 = Math.floor(box[1]),
        y1 = Math.ceil(box[3]);
      for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) if (this.ids[y * W + x] === f.id) seen++;
      if (seen === 0) continue;
      outFruit.push({ id: f.id, box: roundBox(box), visible: Math.min(1, seen / (Math.PI * r * r)) });
    }

    const outStems: FrameObject[] = [];
    for (const s of stems) {
      const xa = (s.x0 - camX) * ppm;
      const xb = (s.x0 + s.slope * (H / ppm) - camX) * ppm;
      const half = (s.width * ppm) / 2;
      const full: Box = [Math.min(xa, xb) - half, 0, Math.max(xa, xb) + half, H];
      grow(this.scene.stems[s.id]!.plant, full);
      const box = clip(full);
      if (!box) continue;
      outStems.push({ id: s.id, box: roundBox(box), visible: area(box) / area(full) });
    }
    for (const l of leaves) {
      const cos = Math.cos(l.angle),
        sin = Math.sin(l.angle);
      const ex = Math.sqrt(l.a * l.a * cos * cos + l.b * l.b * sin * sin) * ppm;
      const ey = Math.sqrt(l.a * l.a * sin * sin + l.b * l.b * cos * cos) * ppm;
      const cx = (l.x - camX) * ppm,
        cy = l.y * ppm;
      grow(l.plant, [cx - ex, cy - ey, cx + ex, cy + ey]);
    }
    const outPlants: FrameObject[] = [];
    for (const [plant, full] of plantBoxes) {
      const box = clip(full);
      if (!box) continue;
      outPlants.push({ id: plant, box: roundBox(box), visible: area(box) / area(full) });
    }
    outPlants.sort((a, b) => a.id - b.id);
    return { fruit: outFruit, stems: outStems, plants: outPlants };
  }

  /** Horizontal box blur: the camera moves sideways while the shutter is open. */
  private motionBlur(len: number): void {
    const { width: W, height: H } = this.o;
    const rgb = this.rgb;
    const row = this.blurRow;
    const half = len >> 1;
    for (let y = 0; y < H; y++) {
      const base = y * W * 3;
      for (let c = 0; c < 3; c++) {
        let sum = 0;
        let n = 0;
        for (let x = -half; x < len - half; x++) {
          if (x >= 0 && x < W) {
            sum += rgb[base + x * 3 + c]!;
            n++;
          }
        }
        for (let x = 0; x < W; x++) {
          row[x * 3 + c] = sum / n;
          const out = x - half;
          const inn = x + len - half;
          if (out >= 0 && out < W) {
            sum -= rgb[base + out * 3 + c]!;
            n--;
          }
          if (inn >= 0 && inn < W) {
            sum += rgb[base + inn * 3 + c]!;
            n++;
          }
        }
      }
      for (let i = 0; i < W * 3; i++) rgb[base + i] = row[i]!;
    }
  }
}

function roundBox(b: Box): Box {
  return [Math.round(b[0] * 10) / 10, Math.round(b[1] * 10) / 10, Math.round(b[2] * 10) / 10, Math.round(b[3] * 10) / 10];
}
