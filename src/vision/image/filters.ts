/**
 * Separable box filters and binary morphology on single planes, all O(n)
 * per pass regardless of radius (running sums), for frames on 2 CPU cores.
 */

/** Mean over a (2r+1)² window, edges handled by shrinking the window. */
export function boxMean(src: Float32Array, width: number, height: number, r: number): Float32Array {
  const tmp = new Float32Array(width * height);
  const out = new Float32Array(width * height);
  for (let y = 0; y < height; y++) {
    const row = y * width;
    let sum = 0;
    let count = 0;
    for (let x = 0; x <= Math.min(r, width - 1); x++) {
      sum += src[row + x]!;
      count++;
    }
    for (let x = 0; x < width; x++) {
      tmp[row + x] = sum / count;
      const add = x + r + 1;
      const drop = x - r;
      if (add < width) {
        sum += src[row + add]!;
        count++;
      }
      if (drop >= 0) {
        sum -= src[row + drop]!;
        count--;
      }
    }
  }
  // Columns, walked row by row with a running sum per column (a column at a time strides across
  // memory): each column's sum takes the same additions in the same order, so the means are the same
  // to the bit.
  const sums = new Float64Array(width);
  let count = 0;
  for (let y = 0; y <= Math.min(r, height - 1); y++) {
    for (let x = 0, i = y * width; x < width; x++, i++) sums[x] = sums[x]! + tmp[i]!;
    count++;
  }
  for (let y = 0; y < height; y++) {
    for (let x = 0, i = y * width; x < width; x++, i++) out[i] = sums[x]! / count;
    const add = y + r + 1;
    const drop = y - r;
    if (add < height) {
      for (let x = 0, i = add * width; x < width; x++, i++) sums[x] = sums[x]! + tmp[i]!;
      count++;
    }
    if (drop >= 0) {
      for (let x = 0, i = drop * width; x < width; x++, i++) sums[x] = sums[x]! - tmp[i]!;
      count--;
    }
  }
  return out;
}

/** Local standard deviation over a (2r+1)² window. */
export function localStdDev(src: Float32Array, width: number, height: number, r: number): Float32Array {
  const sq = new Float32Array(src.length);
  for (let i = 0; i < src.length; i++) sq[i] = src[i]! * src[i]!;
  const m = boxMean(src, width, height, r);
  const m2 = boxMean(sq, width, height, r);
  const out = new Float32Array(src.length);
  for (let i = 0; i < src.length; i++) out[i] = Math.sqrt(Math.max(0, m2[i]! - m[i]! * m[i]!));
  return out;
}

/**
 * Local standard deviation over a (2r+1)² window after removing the window's best-fitting
 * plane: the roughness of a surface without its shading. A small, curved fruit has a steep
 * shading gradient (a plain standard deviation calls it rough); veins and hairs remain.
 * Within r of the frame edge the plain standard deviation is answered.
 */
export function localDetrendedStdDev(src: Float32Array, width: number, height: number, r: number, plain?: Float32Array): Float32Array {
  // `plain`: localStdDev(src, width, height, r) already at hand (the frame's other analysis made it).
  const out = plain ? plain.slice() : localStdDev(src, width, height, r);
  if (width < 2 * r + 1 || height < 2 * r + 1) return out;
  const side = 2 * r + 1;
  const n = side * side;
  let s1 = 0;
  for (let d = -r; d <= r; d++) s1 += d * d;
  const sxx = side * s1;
  // Horizontal and vertical ramp sums, then box sums the other way.
  const rampX = new Float32Array(src.length);
  const rampY = new Float32Array(src.length);
  for (let y = 0; y < height; y++)
    for (let x = r; x < width - r; x++) {
      const i = y * width + x;
      let a = 0;
      for (let d = 1; d <= r; d++) a += d * (src[i + d]! - src[i - d]!);
      rampX[i] = a;
    }
  for (let y = r; y < height - r; y++)
    for (let x = 0; x < width; x++) {
      const i = y * width + x;
      let a = 0;
      for (let d = 1; d <= r; d++) a += d * (src[i + d * width]! - src[i - d * width]!);
      rampY[i] = a;
    }
  for (let y = r; y < height - r; y++)
    for (let x = r; x < width - r; x++) {
      const i = y * width + x;
      let gx = 0;
      let gy = 0;
      for (let d = -r; d <= r; d++) {
        gx += rampX[i + d * width]!;
        gy += rampY[i + d]!;
      }
      const sd = out[i]!;
      out[i] = Math.sqrt(Math.max(0, sd * sd - (gx * gx + gy * gy) / (sxx * n)));
    }
  return out;
}

/**
 * Square-window erosion: a pixel stays when its whole (2r+1)² window is set (the window clipped
 * at the frame's edge, as boxMean's is).
 */
export function erode(mask: Uint8Array, width: number, height: number, r: number): Uint8Array {
  return squareWindow(mask, width, height, r, true);
}

/** Square-window dilation: a pixel is set when any pixel of its window is. */
export function dilate(mask: Uint8Array, width: number, height: number, r: number): Uint8Array {
  return squareWindow(mask, width, height, r, false);
}

/**
 * Erosion (`all`) or dilation of a binary mask with a clipped square window. Small windows on
 * rows a multiple of 4 wide go to the word path below; the rest as two passes of running integer
 * counts: a row pass (all / any set within r along the row), then a column pass
 * over its result, kept row by row so memory is read in order. Exact for any r, and several
 * times faster than thresholding a float box mean (morphology was a quarter of a walk frame's
 * detection time).
 */
function squareWindow(mask: Uint8Array, width: number, height: number, r: number, all: boolean): Uint8Array {
  if (LITTLE_ENDIAN && r <= WORD_STEPS_UP_TO && width > 0 && width % 4 === 0 && mask.byteOffset % 4 === 0)
    return squareWindowWords(mask, width, height, r, all);
  const rows = new Uint8Array(mask.length);
  // What a full row window holds at each x (clipped at the ends): erosion asks for all of it.
  const needX = new Int32Array(width);
  for (let x = 0; x < width; x++) needX[x] = all ? Math.min(width - 1, x + r) - Math.max(0, x - r) + 1 : 1;
  for (let y = 0; y < height; y++) {
    const row = y * width;
    let count = 0;
    for (let x = 0; x < Math.min(r, width); x++) count += mask[row + x] ? 1 : 0;
    for (let x = 0; x < width; x++) {
      const add = x + r;
      const drop = x - r - 1;
      if (add < width && mask[row + add]) count++;
      if (drop >= 0 && mask[row + drop]) count--;
      rows[row + x] = count >= needX[x]! ? 1 : 0;
    }
  }
  const out = new Uint8Array(mask.length);
  const counts = new Int32Array(width);
  for (let y = 0; y < Math.min(r, height); y++) for (let x = 0, i = y * width; x < width; x++, i++) counts[x] = counts[x]! + rows[i]!;
  for (let y = 0; y < height; y++) {
    const add = y + r;
    const drop = y - r - 1;
    if (add < height) for (let x = 0, i = add * width; x < width; x++, i++) counts[x] = counts[x]! + rows[i]!;
    if (drop >= 0) for (let x = 0, i = drop * width; x < width; x++, i++) counts[x] = counts[x]! - rows[i]!;
    const needY = all ? Math.min(height - 1, y + r) - Math.max(0, y - r) + 1 : 1;
    for (let x = 0, i = y * width; x < width; x++, i++) out[i] = counts[x]! >= needY ? 1 : 0;
  }
  return out;
}

/**
 * Up to this radius the window is applied as r steps of a 3-wide window (the composition of clipped
 * windows is the clipped wider window), four pixels to a 32-bit word; the segmentation's radii are 1
 * and 2, where this is several times faster than the running counts.
 */
const WORD_STEPS_UP_TO = 4;
/** The word path reads pixel 4k + j as byte j of word k (x86 and ARM as run, both little-endian). */
const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** squareWindow on 32-bit words: a row width that is a multiple of 4, so every row starts a word. */
function squareWindowWords(mask: Uint8Array, width: number, height: number, r: number, all: boolean): Uint8Array {
  const n = width * height;
  const words = width >>> 2;
  const total = n >>> 2;
  let a = new Uint32Array(total);
  const src = new Uint32Array(mask.buffer, mask.byteOffset, total);
  // Any set byte reads as 1, as the running counts read it: each byte's bits are folded into its lowest.
  for (let k = 0; k < total; k++) {
    let v = src[k]!;
    v |= (v >>> 4) & 0x0f0f0f0f;
    v |= (v >>> 2) & 0x3f3f3f3f;
    v |= (v >>> 1) & 0x7f7f7f7f;
    a[k] = v & 0x01010101;
  }
  let b = new Uint32Array(total);
  // Beyond a row's ends the window is clipped: a pixel there neither empties an erosion nor sets a dilation.
  const outside = all ? 1 : 0;
  for (let step = 0; step < r; step++) {
    for (let row = 0; row < total; row += words) {
      let prev = outside << 24;
      for (let k = row, end = row + words; k < end; k++) {
        const cur = a[k]!;
        const next = k + 1 < end ? a[k + 1]! : outside;
        // Little-endian: byte j of a word is pixel 4k + j, so << 8 brings each pixel's left neighbour under it.
        const left = (cur << 8) | (prev >>> 24);
        const right = (cur >>> 8) | (next << 24);
        b[k] = all ? cur & left & right : cur | left | right;
        prev = cur;
      }
    }
    [a, b] = [b, a];
  }
  // Columns: a word with the words above and below it; the first and last rows have one neighbour.
  const last = total - words;
  for (let step = 0; step < r && height > 1; step++) {
    if (all) {
      for (let k = 0; k < words; k++) b[k] = a[k]! & a[k + words]!;
      for (let k = words; k < last; k++) b[k] = a[k - words]! & a[k]! & a[k + words]!;
      for (let k = last; k < total; k++) b[k] = a[k - words]! & a[k]!;
    } else {
      for (let k = 0; k < words; k++) b[k] = a[k]! | a[k + words]!;
      for (let k = words; k < last; k++) b[k] = a[k - words]! | a[k]! | a[k + words]!;
      for (let k = last; k < total; k++) b[k] = a[k - words]! | a[k]!;
    }
    [a, b] = [b, a];
  }
  return new Uint8Array(a.buffer, 0, n);
}

/** Opening removes specks and thin bridges narrower than the window. */
export function open(mask: Uint8Array, width: number, height: number, r: number): Uint8Array {
  return dilate(erode(mask, width, height, r), width, height, r);
}

/** Closing fills holes (a specular highlight, a sepal) smaller than the window. */
export function close(mask: Uint8Array, width: number, height: number, r: number): Uint8Array {
  return erode(dilate(mask, width, height, r), width, height, r);
}

/** Share of each pixel's clipped window that is set. */
function maskCount(mask: Uint8Array, width: number, height: number, r: number): Float32Array {
  const f = new Float32Array(mask.length);
  for (let i = 0; i < mask.length; i++) f[i] = mask[i] ? 1 : 0;
  return boxMean(f, width, height, r);
}

/** Majority filter: set where more than `fraction` of the window is set; smooths a noisy mask. */
export function majority(mask: Uint8Array, width: number, height: number, r: number, fraction = 0.5): Uint8Array {
  if (r === 1 && fraction === 0.5) return majority3(mask, width, height);
  const m = maskCount(mask, width, height, r);
  const out = new Uint8Array(mask.length);
  for (let i = 0; i < mask.length; i++) out[i] = m[i]! > fraction ? 1 : 0;
  return out;
}

/**
 * The segmentation's majority filter (3 × 3, more than half) in integer counts. It answers what the
 * float box mean answers: that mean's rounding is exact in double and f32 rounding never lifts a
 * window of exactly half over 0.5 (checked on every window shape against it in the tests).
 */
function majority3(mask: Uint8Array, width: number, height: number): Uint8Array {
  const n = width * height;
  const rows = new Uint8Array(n);
  for (let y = 0; y < height; y++) {
    const row = y * width;
    for (let x = 0; x < width; x++) {
      const i = row + x;
      rows[i] = (mask[i] ? 1 : 0) + (x > 0 && mask[i - 1] ? 1 : 0) + (x < width - 1 && mask[i + 1] ? 1 : 0);
    }
  }
  // Window sizes along a row: 2 at the ends (1 where the row is one pixel), 3 inside.
  const across = new Uint8Array(width);
  for (let x = 0; x < width; x++) across[x] = Math.min(width - 1, x + 1) - Math.max(0, x - 1) + 1;
  const out = new Uint8Array(n);
  for (let y = 0; y < height; y++) {
    const row = y * width;
    const up = y > 0 ? row - width : -1;
    const down = y < height - 1 ? row + width : -1;
    const tall = Math.min(height - 1, y + 1) - Math.max(0, y - 1) + 1;
    for (let x = 0; x < width; x++) {
      const count = rows[row + x]! + (up >= 0 ? rows[up + x]! : 0) + (down >= 0 ? rows[down + x]! : 0);
      out[row + x] = 2 * count > across[x]! * tall ? 1 : 0;
    }
  }
  return out;
}
