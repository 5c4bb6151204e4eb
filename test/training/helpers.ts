import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderStill } from '../../scripts/render/walk.js';
import { findAutoModel } from '../../src/walks/jobs/detector-choice.js';

/** The training pipeline (training/, Python on Debian's torch), and whether it can run here. */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const TRAINING = path.join(ROOT, 'training');
export const MODELS = path.join(ROOT, 'models');
export const PYTHON = process.env.CROPWALK_PYTHON ?? '/usr/bin/python3';

/** Null when torch, torchvision, onnx, PIL and numpy import; else why the training tests skip. */
export function trainingStackMissing(): string | null {
  const r = spawnSync(PYTHON, ['-c', 'import torch, torchvision, onnx, PIL, numpy'], { encoding: 'utf8' });
  if (r.error) return `${PYTHON} cannot run (${r.error.message}): install python3 and python3-torch, or set CROPWALK_PYTHON`;
  if (r.status !== 0)
    return `the training stack does not import under ${PYTHON} (${r.stderr.trim().split('\n').at(-1)}): apt-get install python3-torch python3-torchvision python3-onnx python3-pil`;
  return null;
}

/** The shipped model's manifest in models/ (the newest, as DETECTOR=auto picks it). */
export function shippedManifest(): string {
  const found = findAutoModel(MODELS);
  if (!found.manifest) throw new Error(`no shipped model in models/: ${found.reason}`);
  return found.manifest;
}

/** Runs a training/ script to its end under a deadline; rejects with its output when it fails. */
export function runPython(args: string[], timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    // Two threads: the suite runs two test files at once on a small machine.
    const child = spawn(PYTHON, args, { cwd: ROOT, env: { ...process.env, OMP_NUM_THREADS: '2' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${args.join(' ')} ran past ${timeoutMs} ms:\n${out.slice(-3000)}`));
    }, timeoutMs);
    child.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${args.join(' ')} exited ${code}:\n${out.slice(-3000)}`));
    });
  });
}

/** A few rendered photos of the crop as a YOLO dataset (classes green, turning, red), from their truth. */
export async function renderedDataset(dir: string, count: number, seed = 900): Promise<string[]> {
  mkdirSync(path.join(dir, 'images'), { recursive: true });
  mkdirSync(path.join(dir, 'labels'), { recursive: true });
  writeFileSync(path.join(dir, 'classes.txt'), 'green\nturning\nred\n');
  const files: string[] = [];
  for (let i = 0; i < count; i++) {
    const { jpeg, truth } = await renderStill({ seed: seed + i, width: 640, height: 480, at: 0.4 + 0.3 * i });
    const name = `still-${i}`;
    const image = path.join(dir, 'images', `${name}.jpg`);
    writeFileSync(image, jpeg);
    const lines = truth.fruit
      .filter((f) => f.visible >= 0.35)
      .map((f) => {
        const [x1, y1, x2, y2] = f.box;
        const cls = ['green', 'turning', 'red'].indexOf(f.ripeness);
        const r = (v: number) => v.toFixed(6);
        return `${cls} ${r((x1 + x2) / 2 / truth.width)} ${r((y1 + y2) / 2 / truth.height)} ${r((x2 - x1) / truth.width)} ${r((y2 - y1) / truth.height)}`;
      });
    writeFileSync(path.join(dir, 'labels', `${name}.txt`), lines.join('\n') + '\n');
    files.push(image);
  }
  return files;
}
