// Model manifests: the JSON beside an ONNX file in models/ that says what the model
// is, how to check it, its input size and what each output class means here.
import { createHash } from 'node:crypto';
import { createReadStream, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { Ajv, type JSONSchemaType } from 'ajv';

export type ClassTarget = 'green' | 'turning' | 'red' | 'stem' | 'plant' | 'ignore';

export interface ModelManifest {
  name: string;
  /** ONNX file, relative to the manifest's folder. */
  file: string;
  /** Lower-case hex SHA-256 of the ONNX file. */
  sha256: string;
  input: { width: number; height: number };
  /** One entry per model class, in the model's class order. */
  classes: { name: string; maps_to: ClassTarget }[];
  /**
   * The thresholds the model was trained to be read at (training/ picks them on its tuning photos and
   * walks): used for a walk that names no `conf`. Without them, the box's defaults for the built-in detector.
   */
  conf?: { photo: number; video: number };
  /** When the model was made (ISO 8601): DETECTOR=auto runs the newest model in MODELS_DIR. */
  created?: string;
  /** What training/ recorded about the run (epochs, minutes, device...); shown, never read. */
  trained?: Record<string, unknown>;
}

const unit = { type: 'number', minimum: 0, maximum: 1 } as const;

const schema: JSONSchemaType<ModelManifest> = {
  type: 'object',
  required: ['name', 'file', 'sha256', 'input', 'classes'],
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 100 },
    file: { type: 'string', minLength: 1, maxLength: 255 },
    sha256: { type: 'string', pattern: '^[0-9a-fA-F]{64}$' },
    input: {
      type: 'object',
      required: ['width', 'height'],
      properties: { width: { type: 'integer', minimum: 8, maximum: 4096 }, height: { type: 'integer', minimum: 8, maximum: 4096 } },
    },
    classes: {
      type: 'array',
      minItems: 1,
      maxItems: 1000,
      items: {
        type: 'object',
        required: ['name', 'maps_to'],
        properties: { name: { type: 'string' }, maps_to: { type: 'string', enum: ['green', 'turning', 'red', 'stem', 'plant', 'ignore'] } },
      },
    },
    conf: { type: 'object', nullable: true, required: ['photo', 'video'], properties: { photo: unit, video: unit } },
    created: { type: 'string', nullable: true, maxLength: 40 },
    trained: { type: 'object', nullable: true, required: [] },
  },
};

const validate = new Ajv({ allErrors: true }).compile(schema);

export class ModelError extends Error {
  constructor(
    readonly code: 'manifest_invalid' | 'model_missing' | 'checksum_mismatch' | 'model_output_unexpected' | 'model_load_failed',
    message: string,
  ) {
    super(message);
    this.name = 'ModelError';
  }
}

export async function readManifest(manifestPath: string): Promise<ModelManifest> {
  let text: string;
  try {
    text = await readFile(manifestPath, 'utf8');
  } catch (e) {
    throw new ModelError('manifest_invalid', `cannot read model manifest ${manifestPath}: ${(e as Error).message}`);
  }
  return parseManifest(manifestPath, text);
}

/** The same, synchronously: for choosing a model once at start (a few small files). */
export function readManifestSync(manifestPath: string): ModelManifest {
  let text: string;
  try {
    text = readFileSync(manifestPath, 'utf8');
  } catch (e) {
    throw new ModelError('manifest_invalid', `cannot read model manifest ${manifestPath}: ${(e as Error).message}`);
  }
  return parseManifest(manifestPath, text);
}

function parseManifest(manifestPath: string, text: string): ModelManifest {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new ModelError('manifest_invalid', `cannot read model manifest ${manifestPath}: ${(e as Error).message}`);
  }
  if (!validate(data)) {
    const why = (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message}`).join('; ');
    throw new ModelError('manifest_invalid', `model manifest ${manifestPath} is invalid: ${why}`);
  }
  if (path.isAbsolute(data.file) || data.file.split(/[\\/]/).includes('..')) {
    throw new ModelError('manifest_invalid', `model manifest ${manifestPath}: file must be a path inside the manifest's folder`);
  }
  return data;
}

export function modelPath(manifestPath: string, manifest: ModelManifest): string {
  return path.join(path.dirname(manifestPath), manifest.file);
}

export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Reads the model file and refuses it unless its SHA-256 is the manifest's. */
export async function readVerifiedModel(manifestPath: string, manifest: ModelManifest): Promise<Uint8Array> {
  const file = modelPath(manifestPath, manifest);
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (e) {
    throw new ModelError(
      'model_missing',
      `model file ${file} named by ${path.basename(manifestPath)} cannot be read: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (actual !== manifest.sha256.toLowerCase()) {
    throw new ModelError(
      'checksum_mismatch',
      `model file ${file} has SHA-256 ${actual}, but its manifest ${path.basename(manifestPath)} expects ${manifest.sha256.toLowerCase()}; refusing to load it`,
    );
  }
  return new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export interface ListedManifest {
  path: string;
  manifest?: ModelManifest;
  /** Why the manifest cannot be used, when it cannot. */
  error?: string;
}

/** Every `*.json` manifest in `dir` (not recursive), valid or not, sorted by file name. A missing folder lists nothing. */
export async function listModelManifests(dir: string): Promise<ListedManifest[]> {
  let names: string[];
  try {
    names = await readdir(dir);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw e;
  }
  const out: ListedManifest[] = [];
  for (const name of names.filter((n) => n.endsWith('.json')).sort()) {
    const p = path.join(dir, name);
    try {
      out.push({ path: p, manifest: await readManifest(p) });
    } catch (e) {
      out.push({ path: p, error: (e as Error).message });
    }
  }
  return out;
}
