// An ONNX graph laid out as an Ultralytics YOLOv8n or YOLOv8s export (yolov8.yaml: Conv, C2f,
// SPPF, the upsampling neck, the Detect head with DFL), with random weights and the last biases
// as Ultralytics initialises them, for timing the model path on the box's CPU before anyone has a
// trained model: its detections mean nothing, its cost is what a trained model of that size costs.
// BatchNorm is folded into each convolution's bias, as in an export. Built with nc = 80 it has the
// published (fused) sizes of YOLOv8n, 3,151,904 parameters and 8.7 GFLOPs at 640, and at scale s
// of YOLOv8s, 11,156,544 and 28.6, which test/vision/onnx/yolo-sized.test.ts checks. Output
// [1, 4 + nc, 8400] at 640.
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createRng, gaussian } from '../../scripts/render/rng.js';
import { floatTensor, int64Tensor, ModelProto, valueInfo } from './onnx-model.js';

export interface YoloSizedSpec {
  classes: number;
  /** Ultralytics model scale: n (width 0.25) or s (width 0.5); both depth 0.33. Default n. */
  scale?: 'n' | 's';
  /** Input size (imgsz), a multiple of 32. Default 640. */
  size?: number;
  /** Input height when it differs from `size` (a rectangular export, imgsz=[height, size]), a multiple of 32. */
  height?: number;
  /** Seed of the random weights. */
  seed?: number;
}

export interface YoloSizedModel {
  bytes: Uint8Array;
  /** Multiply-accumulates of one forward pass in its convolutions (Ultralytics' GFLOPs = 2 × macs / 1e9). */
  macs: number;
  parameters: number;
  anchors: number;
  /** Input width and height. */
  width: number;
  height: number;
}

const REG_MAX = 16;

interface T {
  name: string;
  c: number;
  /** Feature map width and height. */
  fw: number;
  fh: number;
}

export function buildYoloSizedModel(spec: YoloSizedSpec): YoloSizedModel {
  const size = spec.size ?? 640;
  const height = spec.height ?? size;
  if (!(size > 0 && size % 32 === 0 && height > 0 && height % 32 === 0))
    throw new RangeError('size and height must be positive multiples of 32');
  const nc = spec.classes;
  const rng = createRng(spec.seed ?? 7);
  const randn = () => gaussian(rng);
  const nodes: object[] = [];
  const inits: object[] = [];
  let macs = 0;
  let parameters = 0;
  let n = 0;
  const node = (opType: string, input: string[], attribute: object[] = [], outputs = 1): string[] => {
    const id = n++;
    const output = Array.from({ length: outputs }, (_, k) => `${opType.toLowerCase()}${id}_${k}`);
    nodes.push({ opType, input, output, name: `${opType}${id}`, attribute });
    return output;
  };
  const ints = (name: string, v: number[]) => ({ name, ints: v, type: 7 });
  const int = (name: string, v: number) => ({ name, i: v, type: 2 });
  const constInts = (v: number[]) => {
    const name = `k${n++}`;
    inits.push(int64Tensor(name, v));
    return name;
  };
  const constFloats = (dims: number[], v: ArrayLike<number>) => {
    const name = `k${n++}`;
    inits.push(floatTensor(name, dims, v));
    return name;
  };

  /** Conv2d with its BatchNorm folded into the bias, then SiLU unless `plain` (the head's last 1 × 1). */
  const conv = (x: T, c: number, k = 1, s = 1, plain = false, bias = 0): T => {
    const fw = x.fw / s;
    const fh = x.fh / s;
    const w = new Float32Array(c * x.c * k * k);
    // He initialisation halved: activations stay in range through the stack.
    const std = Math.sqrt(2 / (x.c * k * k)) * 0.5;
    for (let i = 0; i < w.length; i++) w[i] = randn() * std;
    const wn = constFloats([c, x.c, k, k], w);
    const bn = constFloats([c], new Float32Array(c).fill(bias));
    parameters += w.length + c;
    macs += fw * fh * c * x.c * k * k;
    const p = (k - 1) >> 1;
    const [y] = node('Conv', [x.name, wn, bn], [ints('kernel_shape', [k, k]), ints('strides', [s, s]), ints('pads', [p, p, p, p])]);
    if (plain) return { name: y!, c, fw, fh };
    const [g] = node('Sigmoid', [y!]);
    return { name: node('Mul', [y!, g!])[0]!, c, fw, fh };
  };
  const concat = (xs: T[]): T => ({
    name: node(
      'Concat',
      xs.map((x) => x.name),
      [int('axis', 1)],
    )[0]!,
    c: xs.reduce((a, x) => a + x.c, 0),
    fw: xs[0]!.fw,
    fh: xs[0]!.fh,
  });
  const add = (a: T, b: T): T => ({ ...a, name: node('Add', [a.name, b.name])[0]! });

  /** C2f: a 1 × 1 to 2c split in two, n bottlenecks on the second half, all concatenated into a 1 × 1. */
  const c2f = (x: T, c2: number, repeats: number, shortcut: boolean): T => {
    const c = c2 / 2;
    const y = conv(x, 2 * c);
    const halves = node('Split', [y.name, constInts([c, c])], [int('axis', 1)], 2).map((name) => ({ name, c, fw: x.fw, fh: x.fh }));
    const parts: T[] = [...halves];
    let last = halves[1]!;
    for (let i = 0; i < repeats; i++) {
      const b = conv(conv(last, c, 3), c, 3);
      last = shortcut ? add(last, b) : b;
      parts.push(last);
    }
    return conv(concat(parts), c2);
  };
  const sppf = (x: T, c2: number): T => {
    const y = conv(x, x.c / 2);
    const pool = (t: T): T => ({
      ...t,
      name: node('MaxPool', [t.name], [ints('kernel_shape', [5, 5]), ints('strides', [1, 1]), ints('pads', [2, 2, 2, 2])])[0]!,
    });
    const p1 = pool(y);
    const p2 = pool(p1);
    return conv(concat([y, p1, p2, pool(p2)]), c2);
  };
  const upsample = (x: T): T => ({
    name: node('Resize', [x.name, '', constFloats([4], [1, 1, 2, 2])], [{ name: 'mode', s: Buffer.from('nearest'), type: 3 }])[0]!,
    c: x.c,
    fw: x.fw * 2,
    fh: x.fh * 2,
  });

  // Backbone (yolov8.yaml: channels 64…1024 times the scale's width, C2f repeats 3 and 6 times depth 0.33).
  const w = (c: number) => c * (spec.scale === 's' ? 0.5 : 0.25);
  const input: T = { name: 'images', c: 3, fw: size, fh: height };
  const p1 = conv(input, w(64), 3, 2);
  const p2 = c2f(conv(p1, w(128), 3, 2), w(128), 1, true);
  const p3 = c2f(conv(p2, w(256), 3, 2), w(256), 2, true);
  const p4 = c2f(conv(p3, w(512), 3, 2), w(512), 2, true);
  const p5 = sppf(c2f(conv(p4, w(1024), 3, 2), w(1024), 1, true), w(1024));
  // Neck.
  const h4 = c2f(concat([upsample(p5), p4]), w(512), 1, false);
  const out3 = c2f(concat([upsample(h4), p3]), w(256), 1, false);
  const out4 = c2f(concat([conv(out3, w(256), 3, 2), h4]), w(512), 1, false);
  const out5 = c2f(concat([conv(out4, w(512), 3, 2), p5]), w(1024), 1, false);

  // Detect: per scale a box branch (to 4 × REG_MAX distance bins) and a class branch.
  const c2 = Math.max(16, out3.c / 4, REG_MAX * 4);
  const c3 = Math.max(out3.c, Math.min(nc, 100));
  const boxes: string[] = [];
  const scores: string[] = [];
  const anchorXY: number[][] = [[], []];
  const strides: number[] = [];
  for (const t of [out3, out4, out5]) {
    const cells = t.fw * t.fh;
    const stride = size / t.fw;
    for (let y = 0; y < t.fh; y++)
      for (let x = 0; x < t.fw; x++) {
        anchorXY[0]!.push(x + 0.5);
        anchorXY[1]!.push(y + 0.5);
        strides.push(stride);
      }
    // The last biases as Ultralytics initialises them (Detect.bias_init): about 5 objects per
    // 640-px image expected, so most anchors score low, as a trained model's do.
    const box = conv(conv(conv(t, c2, 3), c2, 3), 4 * REG_MAX, 1, 1, true, 1);
    const cls = conv(conv(conv(t, c3, 3), c3, 3), nc, 1, 1, true, Math.log(5 / nc / (640 / stride) ** 2));
    boxes.push(node('Reshape', [box.name, constInts([1, 4 * REG_MAX, cells])])[0]!);
    scores.push(node('Reshape', [cls.name, constInts([1, nc, cells])])[0]!);
  }
  const anchors = strides.length;
  const [box] = node('Concat', boxes, [int('axis', 2)]);
  const [cls] = node('Concat', scores, [int('axis', 2)]);
  // DFL: a softmax over each side's 16 distance bins, read as the expected distance (a fixed 1 × 1 conv, as exported).
  const [bins] = node('Reshape', [box!, constInts([1, 4, REG_MAX, anchors])]);
  const [soft] = node('Softmax', [node('Transpose', [bins!], [ints('perm', [0, 2, 1, 3])])[0]!], [int('axis', 1)]);
  const dfl = constFloats(
    [1, REG_MAX, 1, 1],
    Array.from({ length: REG_MAX }, (_, i) => i),
  );
  parameters += REG_MAX;
  const [dist] = node('Reshape', [node('Conv', [soft!, dfl])[0]!, constInts([1, 4, anchors])]);
  // dist2bbox: distances left/top and right/bottom of each anchor point to cx, cy, w, h in input pixels.
  const slice = (t: string, from: number, to: number) => node('Slice', [t, constInts([from]), constInts([to]), constInts([1])])[0]!;
  const lt = slice(dist!, 0, 2);
  const rb = slice(dist!, 2, 4);
  const points = constFloats([1, 2, anchors], [...anchorXY[0]!, ...anchorXY[1]!]);
  const [x1y1] = node('Sub', [points, lt]);
  const [x2y2] = node('Add', [points, rb]);
  const [centre] = node('Div', [node('Add', [x1y1!, x2y2!])[0]!, constFloats([1], [2])]);
  const [wh] = node('Sub', [x2y2!, x1y1!]);
  const [xywh] = node('Mul', [node('Concat', [centre!, wh!], [int('axis', 1)])[0]!, constFloats([1, 1, anchors], strides)]);
  node('Concat', [xywh!, node('Sigmoid', [cls!])[0]!], [int('axis', 1)]);
  // The last node's output is the model's output0, as in an export.
  (nodes.at(-1) as { output: string[] }).output = ['output0'];

  const model = {
    irVersion: 7,
    producerName: 'cropwalk-yolo-sized',
    opsetImport: [{ domain: '', version: 13 }],
    graph: {
      name: `yolov8${spec.scale ?? 'n'}-sized`,
      node: nodes,
      initializer: inits,
      input: [valueInfo('images', [1, 3, height, size])],
      output: [valueInfo('output0', [1, 4 + nc, anchors])],
    },
  };
  const err = ModelProto.verify(model);
  if (err) throw new Error(`model does not fit the ONNX schema: ${err}`);
  return { bytes: ModelProto.encode(ModelProto.fromObject(model)).finish(), macs, parameters, anchors, width: size, height };
}

/**
 * Writes `name.onnx` and its manifest `name.json` into `dir` (three classes, read as green,
 * turning and red) and returns the manifest's path, for `loadModelDetector` or `DETECTOR`.
 */
export function installYoloSized(dir: string, name: string, model: YoloSizedModel): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, `${name}.onnx`), model.bytes);
  const manifest = {
    name: `${name} (random weights)`,
    file: `${name}.onnx`,
    sha256: createHash('sha256').update(model.bytes).digest('hex'),
    input: { width: model.width, height: model.height },
    classes: ['green', 'turning', 'red'].map((c) => ({ name: c, maps_to: c })),
  };
  const file = path.join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(manifest, null, 2));
  return file;
}
