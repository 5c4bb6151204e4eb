// Creating an onnxruntime-node session on the best execution provider the box has.
// The npm package ships CPU binaries only; a Jetson or GPU box with the CUDA/TensorRT
// provider libraries installed next to them gets those, tried in order, CPU otherwise.
import { existsSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import ort from 'onnxruntime-node';
import { ModelError } from './manifest.js';

export type ExecutionProvider = 'tensorrt' | 'cuda' | 'cpu';
export const PREFERRED_PROVIDERS: readonly ExecutionProvider[] = ['tensorrt', 'cuda', 'cpu'];

// Folders that hold onnxruntime's native libraries: bin/napi-vN/<platform>/<arch>.
function nativeDirs(): string[] {
  try {
    const pkg = path.dirname(createRequire(import.meta.url).resolve('onnxruntime-node/package.json'));
    const bin = path.join(pkg, 'bin');
    const dirs: string[] = [];
    for (const napi of readdirSync(bin)) dirs.push(path.join(bin, napi, process.platform, process.arch));
    return dirs.filter((d) => existsSync(d));
  } catch {
    return [];
  }
}

/** Whether the provider's shared library is installed, so trying it cannot fail for a missing library. */
export function providerInstalled(ep: ExecutionProvider): boolean {
  if (ep === 'cpu') return true;
  const lib = process.platform === 'win32' ? `onnxruntime_providers_${ep}.dll` : `libonnxruntime_providers_${ep}.so`;
  return nativeDirs().some((d) => existsSync(path.join(d, lib)));
}

/**
 * Providers to try, best first. CROPWALK_ONNX_PROVIDERS (e.g. "cuda,cpu") overrides
 * the choice, and its GPU providers are tried even where no library was found.
 */
export function providerCandidates(env: NodeJS.ProcessEnv = process.env): ExecutionProvider[] {
  const forced = env.CROPWALK_ONNX_PROVIDERS?.split(',')
    .map((s) => s.trim().toLowerCase())
    .filter(Boolean);
  if (forced?.length) {
    const known = forced.filter((p): p is ExecutionProvider => (PREFERRED_PROVIDERS as readonly string[]).includes(p));
    return known.includes('cpu') ? known : [...known, 'cpu'];
  }
  return PREFERRED_PROVIDERS.filter(providerInstalled);
}

export interface CreatedSession {
  session: ort.InferenceSession;
  provider: ExecutionProvider;
  /** Providers tried before and why each failed. */
  skipped: { provider: ExecutionProvider; reason: string }[];
}

export async function createSession(model: Uint8Array, candidates: ExecutionProvider[] = providerCandidates()): Promise<CreatedSession> {
  const skipped: CreatedSession['skipped'] = [];
  for (const provider of candidates) {
    try {
      const session = await ort.InferenceSession.create(model, {
        executionProviders: provider === 'cpu' ? ['cpu'] : [provider, 'cpu'],
        graphOptimizationLevel: 'all',
        // Quiet while probing GPU providers: a failed attempt is reported in `skipped`.
        logSeverityLevel: provider === 'cpu' ? 2 : 4,
      });
      return { session, provider, skipped };
    } catch (e) {
      const reason = (e as Error).message;
      if (provider === 'cpu') throw new ModelError('model_load_failed', `onnxruntime cannot load the model: ${reason}`);
      skipped.push({ provider, reason });
    }
  }
  throw new ModelError('model_load_failed', 'no execution provider could load the model');
}
