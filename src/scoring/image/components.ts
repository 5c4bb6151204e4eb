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

/** Two-pass labelling with union-find; components smaller than minArea are dropped (labels set to 0). */
export function labelComponents(mask: Uint8Array, width: number, height: number, minArea = 1): Labelling {
  const n = width * height;
  const labels = new Int32Array(n);
  // Provisional labels never exceed one per two pixels of a row pair; n/2 + 2 is a safe bound.
  const parent = new Int32Array((n >> 1) + 2);
  let next = 1;
  const find = (x: number): number => {
    while (parent[x] !== x) {
      parent[x] = parent[parent[x]!]!;
      x = parent[x]!;
    }
    return x;
  };
  const union = (a: number, b: number): number => {
    const ra = find(a);
    const rb = find(b);
    if (ra === rb) return ra;
    if (ra < rb) {
      parent[rb] = ra;
      return ra;
    }
    parent[ra] = rb;
    return rb;
  };
  for (let y = 0; y < height; y++) {
    const row = y * width;
    for (let x = 0; x < width; x++) {
      const i = row + x;
      if (!mask[i]) continue;
      let l = 0;
      // Neighbours already visited: W, NW, N, NE.
      if (x > 0 && labels[i - 1]) l = labels[i - 1]!;
      if (y > 0) {
        const up = i - width;
        if (x > 0 && labels[up - 1]) l = l ? union(l, labels[up - 1]!) : labels[up - 1]!;
        if (labels[up]) l = l ? union(l, labels[up]!) : labels[up]!;
        if (x + 1 < width && labels[up + 1]) l = l ? union(l, labels[up + 1]!) : labels[up + 1]!;
      }
      if (!l) {
        l = next++;
        parent[l] = l;
      }
      labels[i] = l;
    }
  }
  // Resolve roots to compact labels and gather statistics in typed arrays.
  const compact = new Int32Array(next);
  let count = 0;
  for (let l = 1; l < next; l++) {
    const r = find(l);
    if (!compact[r]) compact[r] = ++count;
    compact[l] = compact[r]!;
  }
  const area = new Int32Array(count + 1);
  const minX = new Int32Array(count + 1).fill(width);
  const minY = new Int32Array(count + 1).fill(height);
  const maxX = new Int32Array(count + 1).fill(-1);
  const maxY = new Int32Array(count + 1).fill(-1);
  const sx = new Float64Array(count + 1);
  const sy = new Float64Array(count + 1);
  for (let y = 0; y < height; y++) {
    const row = y * width;
    for (let x = 0; x < width; x++) {
      const i = row + x;
      const l = labels[i]!;
      if (!l) continue;
      const c = compact[l]!;
      labels[i] = c;
      area[c]!++;
      sx[c]! += x;
      sy[c]! += y;
      if (x < minX[c]!) minX[c] = x;
      if (x > maxX[c]!) maxX[c] = x;
      if (y < minY[c]!) minY[c] = y;
      if (y > maxY[c]!) maxY[c] = y;
    }
  }
  const keep = new Int32Array(count + 1);
  const components: Component[] = [];
  for (let c = 1; c <= count; c++) {
    if (area[c]! < minArea) continue;
    const label = components.length + 1;
    keep[c] = label;
    components.push({ label, area: area[c]!, minX: minX[c]!, minY: minY[c]!, maxX: maxX[c]!, maxY: maxY[c]!, cx: sx[c]! / area[c]!, cy: sy[c]! / area[c]! });
  }
  if (components.length !== count) for (let i = 0; i < n; i++) if (labels[i]) labels[i] = keep[labels[i]!]!;
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
  const grid = new Float64Array(width * height);
  // Columns first, padded with a background pixel at each end.
  for (let x = 0; x < width; x++) {
    // Open edges: the row beyond the edge is taken to be like the edge row (the blob runs on).
    f[0] = openEdges && mask[x] ? INF : 0;
    for (let y = 0; y < height; y++) f[y + 1] = mask[y * width + x] ? INF : 0;
    f[height + 1] = openEdges && mask[(height - 1) * width + x] ? INF : 0;
    dt1d(f, height + 2, d, v, z);
    for (let y = 0; y < height; y++) grid[y * width + x] = d[y + 1]!;
  }
  const out = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    f[0] = openEdges ? grid[y * width]! : 0;
    for (let x = 0; x < width; x++) f[x + 1] = grid[y * width + x]!;
    f[width + 1] = openEdges ? grid[y * width + width - 1]! : 0;
    dt1d(f, width + 2, d, v, z);
    for (let x = 0; x < width; x++) out[y * width + x] = Math.sqrt(d[x + 1]!);
  }
  return out;
}
