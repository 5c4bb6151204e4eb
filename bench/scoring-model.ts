/**
 * The model path's speed on the box's CPU, before anyone has a trained model: graphs laid out as
 * Ultralytics YOLOv8n and YOLOv8s exports (test/helpers/onnx-yolo-sized.ts; built with 80 classes
 * they have the published sizes, 8.7 and 28.6 GFLOPs at 640; here three ripeness classes), and
 * YOLOv8n exported at 1280 for small fruit (square, and 1280 × 736 for a 16:9 frame), with random
 * weights, written with their manifests under bench/out/models, score the 60 s 1080p30
 * rendered walk of bench/scoring-walk.ts through the real onnxruntime-node. Their detections mean
 * nothing (random weights find nothing), their time is what a trained model of that size costs per
 * frame. Baselines in the same run: ffmpeg decoding the clip alone, and the built-in detector
 * scoring it.
 *
 *   node --import tsx bench/scoring-model.ts [--quick]
 *
 * --quick: a 20 s walk instead of 60 s.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildYoloSizedModel, installYoloSized } from '../test/helpers/onnx-yolo-sized.js';
import { printSpeed, speed, type SpeedResult } from './scoring-walk.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const HELPER = path.join(ROOT, 'test', 'helpers', 'onnx-yolo-sized.ts');

/** A YOLOv8-sized model and its manifest, rebuilt when the helper that builds it changes. */
export function yoloSizedManifest(scale: 'n' | 's', size = 640, height = size): { manifest: string; gflops: number; parameters: number } {
  const tag = createHash('sha256').update(readFileSync(HELPER)).digest('hex').slice(0, 12);
  const dir = path.join(ROOT, 'bench', 'out', 'models');
  const name = `yolov8${scale}-sized-${size}${height === size ? '' : `x${height}`}`;
  const m = buildYoloSizedModel({ classes: 3, scale, size, height });
  const cached = path.join(dir, `${name}-${tag}.json`);
  const manifest = existsSync(cached) ? cached : installYoloSized(dir, `${name}-${tag}`, m);
  return { manifest, gflops: (2 * m.macs) / 1e9, parameters: m.parameters };
}

// YOLOv8n and YOLOv8s at the usual 640, and YOLOv8n exported at 1280 (imgsz=1280), square and as
// wide as a 16:9 frame needs (imgsz=[736, 1280]): what keeping small fruit at full size costs.
const SIZES = [
  { scale: 'n', size: 640, height: 640 },
  { scale: 's', size: 640, height: 640 },
  { scale: 'n', size: 1280, height: 1280 },
  { scale: 'n', size: 1280, height: 736 },
] as const;

export async function runModelSpeedBench(
  options: { quick?: boolean } = {},
): Promise<SpeedResult & { sizes: { scale: string; size: number; height: number; gflops: number; parameters: number }[] }> {
  const built = SIZES.map(({ scale, size, height }) => ({ scale, size, height, ...yoloSizedManifest(scale, size, height) }));
  const r = await speed(
    options.quick ?? false,
    built.map((b) => b.manifest),
  );
  return { ...r, sizes: built.map(({ scale, size, height, gflops, parameters }) => ({ scale, size, height, gflops, parameters })) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const r = await runModelSpeedBench({ quick: process.argv.includes('--quick') });
  for (const s of r.sizes)
    console.log(
      `model: YOLOv8${s.scale}-sized, ${(s.parameters / 1e6).toFixed(2)} M parameters, ${s.gflops.toFixed(1)} GFLOPs at ${s.size} × ${s.height}`,
    );
  printSpeed(r);
}
