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
  for (let x = 0; x < width; x++) {
    let sum = 0;
    let count = 0;
    for (let y = 0; y <= Math.min(r, height - 1); y++) {
      sum += tmp[y * width + x]!;
      count++;
    }
    for (let y = 0; y < height; y++) {
      out[y * width + x] = sum / count;
      const add = y + r + 1;
      const drop = y - r;
      if (add < height) {
        sum += tmp[add * width + x]!;
        count++;
      }
      if (drop >= 0) {
        sum -= tmp[drop * width + x]!;
        count--;
      }
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
export function localDetrendedStdDev(src: Float32Array, width: number, height: number, r: number): Float32Array {
  const out = localStdDev(src, width, height, r);
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
 * Erosion (`all`) or dilation of a binary mask with a clipped square window, as two passes of
 * running integer counts: a row pass (all / any set within r along the row), then a column pass
 * over its result, kept row by row so memory is read in order. Exact for any r, and several
 * times faster than thresholding a float box mean (morphology was a quarter of a walk frame's
 * detection time).
 */
function squareWindow(mask: Uint8Array, width: number, height: number, r: number, all: boolean): Uint8Array {
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
  const m = maskCount(mask, width, height, r);
  const out = new Uint8Array(mask.length);
  for (let i = 0; i < mask.length; i++) out[i] = m[i]! > fraction ? 1 : 0;
  return out;
}
