// A YOLOv8/v11 ONNX model as a `Detector`: verified against its manifest's checksum,
// letterboxed input, decoded head, class-wise NMS, boxes back in image pixels.
import path from 'node:path';
import ort from 'onnxruntime-node';
import type { Detection, DetectOptions, Detector, DetectorInfo, RgbImage } from '../types.js';
import { decodeHead, headLayout, nmsByClass, type HeadLayout } from './decode.js';
import { letterbox } from './letterbox.js';
import { ModelError, readManifest, readVerifiedModel, type ModelManifest } from './manifest.js';
import { createSession, providerCandidates, type ExecutionProvider } from './session.js';

export const DEFAULT_NMS_IOU = 0.45;

export interface ModelDetectorOptions {
  /** IoU above which a box of the same class is suppressed. */
  iou?: number;
  /** Execution providers to try, best first (default: installed ones among tensorrt, cuda, cpu). */
  providers?: ExecutionProvider[];
}

export interface ModelDetector extends Detector {
  readonly manifest: ModelManifest;
  /** The execution provider the session runs on. */
  readonly executionProvider: ExecutionProvider;
  close(): Promise<void>;
}

export async function loadModelDetector(manifestPath: string, options: ModelDetectorOptions = {}): Promise<ModelDetector> {
  const manifest = await readManifest(manifestPath);
  const bytes = await readVerifiedModel(manifestPath, manifest);
  const { session, provider } = await createSession(bytes, options.providers ?? providerCandidates());
  try {
    return new OnnxYoloDetector(manifest, session, provider, options.iou ?? DEFAULT_NMS_IOU, path.basename(manifestPath));
  } catch (e) {
    await session.release();
    throw e;
  }
}

class OnnxYoloDetector implements ModelDetector {
  readonly info: DetectorInfo;
  private layout: HeadLayout | null = null;
  private readonly inputName: string;
  private readonly outputName: string;
  /** Suppression groups: the ripeness classes are one (a fruit), every other class its own. */
  private readonly groupOf: (classIndex: number) => number | string;

  constructor(
    readonly manifest: ModelManifest,
    private readonly session: ort.InferenceSession,
    readonly executionProvider: ExecutionProvider,
    private readonly iou: number,
    manifestName: string,
  ) {
    const has = (t: string) => manifest.classes.some((c) => c.maps_to === t);
    this.info = {
      name: manifest.name,
      kind: 'onnx',
      stems: has('stem')
        ? { supported: true }
        : { supported: false, reason: `the model ${manifest.name} has no class mapped to stem in ${manifestName}` },
      plants: has('plant')
        ? { supported: true }
        : { supported: false, reason: `the model ${manifest.name} has no class mapped to plant in ${manifestName}` },
    };
    if (session.inputNames.length !== 1 || session.outputNames.length < 1) {
      throw new ModelError(
        'model_output_unexpected',
        `expected one image input and a detection output, the model has inputs [${session.inputNames.join(', ')}] and outputs [${session.outputNames.join(', ')}]`,
      );
    }
    const targets = manifest.classes.map((c) => c.maps_to);
    this.groupOf = (c) => (targets[c] === 'green' || targets[c] === 'turning' || targets[c] === 'red' ? 'fruit' : c);
    this.inputName = session.inputNames[0]!;
    this.outputName = session.outputNames[0]!;
  }

  async detect(image: RgbImage, options: DetectOptions): Promise<Detection[]> {
    const { width, height } = this.manifest.input;
    const lb = letterbox(image, width, height);
    const feeds = { [this.inputName]: new ort.Tensor('float32', lb.tensor, [1, 3, height, width]) };
    const result = await this.session.run(feeds);
    const out = result[this.outputName]!;
    try {
      const classes = this.manifest.classes.length;
      this.layout ??= headLayout(out.dims, classes);
      if (out.type !== 'float32') throw new ModelError('model_output_unexpected', `the model's output is ${out.type}, expected float32`);
      const raw = nmsByClass(decodeHead(out.data as Float32Array, this.layout, classes, options.conf), this.iou, 300, this.groupOf);
      const dets: Detection[] = [];
      for (const r of raw) {
        const target = this.manifest.classes[r.classIndex]!.maps_to;
        if (target === 'ignore') continue;
        const x1 = clamp((r.box[0] - lb.padX) / lb.scale, image.width);
        const y1 = clamp((r.box[1] - lb.padY) / lb.scale, image.height);
        const x2 = clamp((r.box[2] - lb.padX) / lb.scale, image.width);
        const y2 = clamp((r.box[3] - lb.padY) / lb.scale, image.height);
        if (x2 <= x1 || y2 <= y1) continue;
        const box: Detection['box'] = [x1, y1, x2, y2];
        if (target === 'stem' || target === 'plant') dets.push({ kind: target, box, score: r.score });
        else dets.push({ kind: 'fruit', box, score: r.score, ripeness: target });
      }
      return dets;
    } finally {
      for (const t of Object.values(result)) t.dispose?.();
    }
  }

  async close(): Promise<void> {
    await this.session.release();
  }
}

function clamp(v: number, max: number): number {
  return Math.min(max, Math.max(0, v));
}
