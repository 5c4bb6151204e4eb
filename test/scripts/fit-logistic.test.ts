import t from 'tap';
import { fitLogistic, sigmoid } from '../../scripts/fit/logistic.js';
import { createRng, gaussian } from '../../scripts/render/rng.js';

t.test('the logistic fit recovers the weights that made the labels', async (t) => {
  const rng = createRng(7);
  const truth = [-1.5, 2, -0.75, 0.5];
  const X: number[][] = [];
  const y: number[] = [];
  for (let i = 0; i < 20000; i++) {
    const x = [1, gaussian(rng), gaussian(rng), rng() < 0.3 ? 1 : 0];
    X.push(x);
    y.push(rng() < sigmoid(x.reduce((s, v, k) => s + v * truth[k]!, 0)) ? 1 : 0);
  }
  const w = fitLogistic(X, y, { l2: 1e-6 });
  truth.forEach((v, k) => t.ok(Math.abs(w[k]! - v) < 0.12, `weight ${k}: ${w[k]!.toFixed(3)} against ${v}`));
  // Penalised, the weights shrink towards 0 (the intercept is not penalised).
  const shrunk = fitLogistic(X, y, { l2: 2000 });
  t.ok(Math.abs(shrunk[1]!) < Math.abs(w[1]!) * 0.9, `a strong penalty shrinks the weights: ${shrunk[1]!.toFixed(3)}`);
  // Separable labels would send the weights to infinity unpenalised; the penalty keeps them finite.
  const sep = fitLogistic(
    [
      [1, -1],
      [1, -0.5],
      [1, 0.5],
      [1, 1],
    ],
    [0, 0, 1, 1],
    { l2: 0.01 },
  );
  t.ok(sep.every(Number.isFinite) && sep[1]! > 1, `separable labels give finite weights: ${sep.map((v) => v.toFixed(2))}`);
  t.throws(() => fitLogistic([[1]], [0, 1]), RangeError);
});
