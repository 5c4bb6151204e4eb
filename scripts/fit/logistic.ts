/**
 * L2-penalised logistic regression by Newton's method (iteratively reweighted least squares).
 * Small and exact for the few features and thousands of rows a detector's score is fitted on.
 */
export interface LogisticFitOptions {
  /** Penalty on the squared weights (not on the unpenalised ones). */
  l2?: number;
  /** Indices of weights the penalty skips: the intercept column. */
  unpenalised?: readonly number[];
  maxIterations?: number;
}

export function fitLogistic(X: readonly (readonly number[])[], y: readonly number[], options: LogisticFitOptions = {}): number[] {
  if (X.length === 0 || X.length !== y.length) throw new RangeError('fitLogistic needs as many labels as rows, and at least one row');
  const d = X[0]!.length;
  const l2 = options.l2 ?? 0.01;
  const free = new Set(options.unpenalised ?? [0]);
  const w = new Array<number>(d).fill(0);
  for (let it = 0; it < (options.maxIterations ?? 100); it++) {
    const g = new Array<number>(d).fill(0);
    const H = Array.from({ length: d }, () => new Array<number>(d).fill(0));
    X.forEach((x, i) => {
      const p = sigmoid(dot(w, x));
      const e = p - y[i]!;
      const s = p * (1 - p);
      for (let a = 0; a < d; a++) {
        g[a]! += e * x[a]!;
        for (let b = a; b < d; b++) H[a]![b]! += s * x[a]! * x[b]!;
      }
    });
    for (let a = 0; a < d; a++) {
      for (let b = 0; b < a; b++) H[a]![b] = H[b]![a]!;
      if (!free.has(a)) {
        g[a]! += l2 * w[a]!;
        H[a]![a]! += l2;
      }
    }
    const step = solve(H, g);
    let largest = 0;
    for (let a = 0; a < d; a++) {
      w[a]! -= step[a]!;
      largest = Math.max(largest, Math.abs(step[a]!));
    }
    if (largest < 1e-10) break;
  }
  return w;
}

export const sigmoid = (z: number): number => 1 / (1 + Math.exp(-z));

function dot(a: readonly number[], b: readonly number[]): number {
  let s = 0;
  for (let k = 0; k < a.length; k++) s += a[k]! * b[k]!;
  return s;
}

/** Solves A x = b by Gaussian elimination with partial pivoting (A is small and, penalised, well posed). */
function solve(A: number[][], b: number[]): number[] {
  const n = b.length;
  const M = A.map((row, i) => [...row, b[i]!]);
  for (let c = 0; c < n; c++) {
    let pivot = c;
    for (let r = c + 1; r < n; r++) if (Math.abs(M[r]![c]!) > Math.abs(M[pivot]![c]!)) pivot = r;
    if (Math.abs(M[pivot]![c]!) < 1e-12)
      throw new RangeError('fitLogistic: singular system (a feature that never varies and is not penalised?)');
    [M[c], M[pivot]] = [M[pivot]!, M[c]!];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const f = M[r]![c]! / M[c]![c]!;
      if (f === 0) continue;
      for (let k = c; k <= n; k++) M[r]![k]! -= f * M[c]![k]!;
    }
  }
  return M.map((row, i) => row[n]! / row[i]!);
}
