/**
 * Binary-mask geometry for the detector: connected components (8-connected)
 * with their statistics, and the exact Euclidean distance transform.
 */

export interface Component {
  label: number;
  area: number;
  /** Inclusive pixel bounds. */
  minX: number;
  minY: number;
  maxX: number;
  maxY: number;
  /** Centroid. */
  cx: number;
  cy: number;
}

export interface Labelling {
  /** 0 = background, 1..count = component label. */
  labels: Int32Array;
  components: Component[];
}

/**
 * Labelling by runs: each row's runs of set pixels are found, joined by union-find to the runs
 * of the row above that they touch (8-connected: a run reaches one pixel beyond its ends), and
 * the statistics are summed per run. Components are numbered in the raster order of their first
 * pixel; those smaller than minArea are dropped (labels set to 0). Working on runs rather than
 * pixels matters for the detector's hole filling, which labels a frame's whole background: a
 * mask is mostly long runs.
 */
export function labelComponents(mask: Uint8Array, width: number, height: number, minArea = 1): Labelling {
  const n = width * height;
  // Runs: row, first and last x, in arrays that double when full (a mask has far fewer runs than pixels).
  let capacity = 1024;
  let runY = new Int32Array(capacity);
  let runX0 = new Int32Array(capacity);
  let runX1 = new Int32Array(capacity);
  let parent = new Int32Array(capacity);
  let runs = 0;
  const find = (x: number): number => {
    while (parent[x] !== x) {
      parent[x] = parent[parent[x]!]!;
      x = parent[x]!;
    }
    return x;
  };
  const union = (a: number, b: number): void => {
    const ra = find(a);
    const rb = find(b);
    // The earlier run is the root, so a component's root is its first run in raster order.
    if (ra < rb) parent[rb] = ra;
    else if (rb < ra) parent[ra] = rb;
  };
  let prevStart = 0;
  let prevEnd = 0;
  for (let y = 0; y < height; y++) {
    const row = y * width;
    const start = runs;
    let p = prevStart;
    for (let x = 0; x < width;) {
      if (!mask[row + x]) {
        x++;
        continue;
      }
      const x0 = x;
      while (x < width && mask[row + x]) x++;
      const x1 = x - 1;
      if (runs === capacity) {
        capacity *= 2;
        const grow = (a: Int32Array) => {
          const b = new Int32Array(capacity);
          b.set(a);
          return b;
        };
        runY = grow(runY);
        runX0 = grow(runX0);
        runX1 = grow(runX1);
        parent = grow(parent);
      }
      runY[runs] = y;
      runX0[runs] = x0;
      runX1[runs] = x1;
      parent[runs] = runs;
      // Runs of the row above touching [x0 - 1, x1 + 1]; both rows' runs are in x order.
      while (p < prevEnd && runX1[p]! < x0 - 1) p++;
      for (let q = p; q < prevEnd && runX0[q]! <= x1 + 1; q++) union(runs, q);
      runs++;
    }
    prevStart = start;
    prevEnd = runs;
  }
  // Compact labels in order of each component's first run, and statistics per run.
  const compact = new Int32Array(runs);
  let count = 0;
  for (let k = 0; k < runs; k++) {
    const r = find(k);
    compact[k] = r === k ? ++count : compact[r]!;
  }
  const area = new Int32Array(count + 1);
  const minX = new Int32Array(count + 1).fill(width);
  const minY = new Int32Array(count + 1).fill(height);
  const maxX = new Int32Array(count + 1).fill(-1);
  const maxY = new Int32Array(count + 1).fill(-1);
  const sx = new Float64Array(count + 1);
  const sy = new Float64Array(count + 1);
  for (let k = 0; k < runs; k++) {
    const c = compact[k]!;
    const y = runY[k]!,
      x0 = runX0[k]!,
      x1 = runX1[k]!;
    const len = x1 - x0 + 1;
    area[c] = area[c]! + len;
    sx[c] = sx[c]! + ((x0 + x1) * len) / 2;
    sy[c] = sy[c]! + y * len;
    if (x0 < minX[c]!) minX[c] = x0;
    if (x1 > maxX[c]!) maxX[c] = x1;
    if (y < minY[c]!) minY[c] = y;
    if (y > maxY[c]!) maxY[c] = y;
  }
  const keep = new Int32Array(count + 1);
  const components: Component[] = [];
  for (let c = 1; c <= count; c++) {
    if (area[c]! < minArea) continue;
    const label = components.length + 1;
    keep[c] = label;
    components.push({
      label,
      area: area[c]!,
      minX: minX[c]!,
      minY: minY[c]!,
      maxX: maxX[c]!,
      maxY: maxY[c]!,
      cx: sx[c]! / area[c]!,
      cy: sy[c]! / area[c]!,
    });
  }
  const labels = new Int32Array(n);
  for (let k = 0; k < runs; k++) {
    const l = keep[compact[k]!]!;
    if (l) labels.fill(l, runY[k]! * width + runX0[k]!, runY[k]! * width + runX1[k]! + 1);
  }
  return { labels, components };
}

const INF = 1e20;

/** 1-D squared-distance transform of a sampled function (Felzenszwalb & Huttenlocher). */
function dt1d(f: Float64Array, n: number, d: Float64Array, v: Int32Array, z: Float64Array): void {
  let k = 0;
  v[0] = 0;
  z[0] = -INF;
  z[1] = INF;
  for (let q = 1; q < n; q++) {
    let s = (f[q]! + q * q - (f[v[k]!]! + v[k]! * v[k]!)) / (2 * q - 2 * v[k]!);
    while (s <= z[k]!) {
      k--;
      s = (f[q]! + q * q - (f[v[k]!]! + v[k]! * v[k]!)) / (2 * q - 2 * v[k]!);
    }
    k++;
    v[k] = q;
    z[k] = s;
    z[k + 1] = INF;
  }
  k = 0;
  for (let q = 0; q < n; q++) {
    while (z[k + 1]! < q) k++;
    const dq = q - v[k]!;
    d[q] = dq * dq + f[v[k]!]!;
  }
}

/**
 * Exact Euclidean distance from every mask pixel to the nearest background
 * pixel (0 on background). Outside the image counts as background, so a
 * blob cut by the frame edge is not treated as larger than it is; with
 * `openEdges` it does not (a fruit cut by the edge of a walk frame is as
 * large as its uncut arc says).
 */
export function distanceTransform(mask: Uint8Array, width: number, height: number, openEdges = false): Float32Array {
  const n = Math.max(width, height) + 2;
  const f = new Float64Array(n);
  const d = new Float64Array(n);
  const v = new Int32Array(n);
  const z = new Float64Array(n + 1);
  // Each pass transforms only the runs of mask pixels, each with the pixel before and after it: a
  // background pixel is 0 in both passes, and nothing beyond the nearest one can be nearer. The
  // masks are sparse, so most of the frame is never read twice.
  const grid = new Float64Array(width * height);
  // Columns first. Open edges: the row beyond the edge is taken to be like the edge row (the blob runs on).
  for (let x = 0; x < width; x++) {
    for (let y = 0; y < height;) {
      if (!mask[y * width + x]) {
        y++;
        continue;
      }
      let end = y;
      while (end < height && mask[end * width + x]) end++;
      const len = end - y;
      f[0] = y === 0 && openEdges ? INF : 0;
      for (let k = 1; k <= len; k++) f[k] = INF;
      f[len + 1] = end === height && openEdges ? INF : 0;
      dt1d(f, len + 2, d, v, z);
      for (let k = 0; k < len; k++) grid[(y + k) * width + x] = d[k + 1]!;
      y = end;
    }
  }
  const out = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    const row = y * width;
    for (let x = 0; x < width;) {
      if (!mask[row + x]) {
        x++;
        continue;
      }
      let end = x;
      while (end < width && mask[row + end]) end++;
      const len = end - x;
      f[0] = x === 0 && openEdges ? grid[row]! : 0;
      for (let k = 0; k < len; k++) f[k + 1] = grid[row + x + k]!;
      f[len + 1] = end === width && openEdges ? grid[row + width - 1]! : 0;
      dt1d(f, len + 2, d, v, z);
      for (let k = 0; k < len; k++) out[row + x + k] = Math.sqrt(d[k + 1]!);
      x = end;
    }
  }
  return out;
}
