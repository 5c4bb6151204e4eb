// Constant-velocity Kalman filter on a box's centre and size (SORT's motion model).
// The four quantities cx, cy, w, h move independently, so the 8-state filter splits
// exactly into four 2-state (position, velocity) filters; noise scales with box size
// as in ByteTrack, so one setting suits a fruit and a stem alike.
import type { Box } from '../types.js';
import { fromCentre } from './box.js';

export interface KalmanNoise {
  /** Standard deviations as fractions of the box's mean side. */
  position: number;
  velocity: number;
  measurement: number;
}

export const DEFAULT_KALMAN_NOISE: KalmanNoise = { position: 1 / 20, velocity: 1 / 8, measurement: 1 / 20 };

class Axis {
  // state [p, v] and symmetric covariance [[a, b], [b, c]]
  constructor(
    public p: number,
    public v: number,
    public a: number,
    public b: number,
    public c: number,
  ) {}

  predict(qp: number, qv: number): void {
    this.p += this.v;
    this.a += 2 * this.b + this.c + qp;
    this.b += this.c;
    this.c += qv;
  }

  update(z: number, r: number): void {
    const s = this.a + r;
    const k0 = this.a / s;
    const k1 = this.b / s;
    const y = z - this.p;
    this.p += k0 * y;
    this.v += k1 * y;
    const a = this.a,
      b = this.b;
    this.a = (1 - k0) * a;
    this.b = (1 - k0) * b;
    this.c -= k1 * b;
  }
}

export class BoxKalman {
  private readonly axes: [Axis, Axis, Axis, Axis];

  /** Starts at `box` moving by (vx, vy) pixels a frame: the camera's motion when it is known. */
  constructor(
    box: Box,
    vx: number,
    vy: number,
    private readonly noise: KalmanNoise = DEFAULT_KALMAN_NOISE,
  ) {
    const w = box[2] - box[0];
    const h = box[3] - box[1];
    const size = (w + h) / 2;
    const pv = (2 * noise.position * size) ** 2;
    const vv = (10 * noise.velocity * size) ** 2;
    this.axes = [
      new Axis((box[0] + box[2]) / 2, vx, pv, 0, vv),
      new Axis((box[1] + box[3]) / 2, vy, pv, 0, vv),
      new Axis(w, 0, pv, 0, vv / 4),
      new Axis(h, 0, pv, 0, vv / 4),
    ];
  }

  private size(): number {
    return Math.max(1, (this.axes[2].p + this.axes[3].p) / 2);
  }

  predict(): Box {
    const s = this.size();
    const qp = (this.noise.position * s) ** 2;
    const qv = (this.noise.velocity * s) ** 2;
    for (const ax of this.axes) ax.predict(qp, qv);
    // a box never shrinks to nothing between observations
    this.axes[2].p = Math.max(1, this.axes[2].p);
    this.axes[3].p = Math.max(1, this.axes[3].p);
    return this.box();
  }

  update(box: Box): void {
    const r = (this.noise.measurement * this.size()) ** 2;
    this.axes[0].update((box[0] + box[2]) / 2, r);
    this.axes[1].update((box[1] + box[3]) / 2, r);
    this.axes[2].update(box[2] - box[0], r);
    this.axes[3].update(box[3] - box[1], r);
  }

  /** Moves the estimate without touching its uncertainty: a camera jump seen on all tracks at once. */
  translate(dx: number, dy: number): void {
    this.axes[0].p += dx;
    this.axes[1].p += dy;
  }

  /** Replaces the centre's velocity with motion known from elsewhere (the camera's). */
  setVelocity(vx: number, vy: number): void {
    this.axes[0].v = vx;
    this.axes[1].v = vy;
  }

  velocity(): [number, number] {
    return [this.axes[0].v, this.axes[1].v];
  }

  box(): Box {
    return fromCentre(this.axes[0].p, this.axes[1].p, this.axes[2].p, this.axes[3].p);
  }
}
