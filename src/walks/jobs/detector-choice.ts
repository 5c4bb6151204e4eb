import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { modelPath, readManifestSync } from '../../vision/onnx/manifest.js';
import type { Services } from '../../services.js';
import type { DetectorChoice } from './messages.js';
import type { ScoringMode } from './options.js';
import { Invalid } from '../../errors.js';

/** The project's models/ folder: the default of MODELS_DIR, where the trained model ships. */
export const MODELS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../models');

export interface ConfiguredDetector {
  /** "builtin", "auto", or the manifest's file name as configured. */
  setting: string;
  model: { manifest: string; available: boolean; reason: string | null } | null;
  /** Why no model runs although the setting would take one (auto with no usable model in MODELS_DIR); else null. */
  reason: string | null;
  /** auto: manifests in MODELS_DIR passed over, each with why. */
  passedOver?: string[];
}

/** What DETECTOR=auto found in MODELS_DIR: the manifest it runs, or why none. */
export interface AutoModel {
  manifest: string | null;
  reason: string | null;
  /** Manifests in MODELS_DIR that could not be used, each with why. */
  passedOver: string[];
}

/**
 * DETECTOR=auto: the newest usable model in `modelsDir` (latest `created`, then the last file
 * name), read once when the box starts, so a model dropped into MODELS_DIR runs from the next
 * restart and a walk in flight never changes model. Usable: a valid manifest whose ONNX file is
 * there with the manifest's SHA-256 (a half-copied new model is passed over for the one before it;
 * the sum is checked again when the model loads). None: the built-in detector, and the reason.
 */
export function findAutoModel(modelsDir: string): AutoModel {
  let names: string[];
  try {
    names = readdirSync(modelsDir).filter((n) => n.endsWith('.json'));
  } catch (e) {
    return {
      manifest: null,
      reason: `MODELS_DIR ${modelsDir} cannot be read (${(e as NodeJS.ErrnoException).code ?? String(e)})`,
      passedOver: [],
    };
  }
  const usable: { file: string; created: number }[] = [];
  const problems: string[] = [];
  for (const name of names) {
    const file = path.join(modelsDir, name);
    try {
      const m = readManifestSync(file);
      if (!existsSync(modelPath(file, m))) {
        problems.push(`${name}: its model file ${m.file} is missing`);
        continue;
      }
      const sum = createHash('sha256')
        .update(readFileSync(modelPath(file, m)))
        .digest('hex');
      if (sum !== m.sha256.toLowerCase()) {
        problems.push(`${name}: ${m.file} has SHA-256 ${sum}, the manifest expects ${m.sha256.toLowerCase()}`);
        continue;
      }
      const created = Date.parse(m.created ?? '');
      usable.push({ file, created: Number.isFinite(created) ? created : -Infinity });
    } catch (e) {
      problems.push(`${name}: ${(e as Error).message}`);
    }
  }
  usable.sort((a, b) => a.created - b.created || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  const newest = usable.at(-1);
  if (newest) return { manifest: newest.file, reason: null, passedOver: problems };
  return {
    manifest: null,
    reason: problems.length
      ? `no usable model manifest in MODELS_DIR (${problems.join('; ')})`
      : `no model manifest in MODELS_DIR (${modelsDir})`,
    passedOver: problems,
  };
}

const autoModels = new WeakMap<Services, AutoModel>();

/** Reads MODELS_DIR for DETECTOR=auto; called once as the walks feature starts. */
export function attachAutoModel(services: Services): AutoModel {
  const found = findAutoModel(services.config.modelsDir);
  autoModels.set(services, found);
  return found;
}

/** The box's detector setting, with auto resolved as it was at start. */
export function configuredFor(services: Services): ConfiguredDetector {
  const setting = services.config.detector.trim();
  if (setting !== 'auto') return configuredDetector(setting, services.config.modelsDir);
  const found = autoModels.get(services) ?? attachAutoModel(services);
  if (!found.manifest) return { setting: 'auto', model: null, reason: found.reason, passedOver: found.passedOver };
  return {
    setting: 'auto',
    model: { manifest: found.manifest, available: true, reason: null },
    reason: null,
    passedOver: found.passedOver,
  };
}

/**
 * Reads `config.detector` (DETECTOR): "builtin", or the file name of a model
 * manifest in MODELS_DIR. A name with a path in it is refused rather than
 * followed: the setting picks an installed model, not any file on the box.
 * ("auto" is resolved once at start: `configuredFor`.)
 */
export function configuredDetector(setting: string, modelsDir = MODELS_DIR): ConfiguredDetector {
  const name = setting.trim();
  if (name === '' || name === 'builtin') return { setting: 'builtin', model: null, reason: null };
  if (name === 'auto') {
    const found = findAutoModel(modelsDir);
    return found.manifest
      ? { setting: 'auto', model: { manifest: found.manifest, available: true, reason: null }, reason: null, passedOver: found.passedOver }
      : { setting: 'auto', model: null, reason: found.reason, passedOver: found.passedOver };
  }
  if (name !== path.basename(name) || name === '.' || name === '..') {
    return {
      setting: name,
      model: {
        manifest: name,
        available: false,
        reason: `DETECTOR must be "auto", "builtin" or a manifest file name in MODELS_DIR, not a path (${name})`,
      },
      reason: null,
    };
  }
  const manifest = path.join(modelsDir, name);
  if (!existsSync(manifest))
    return { setting: name, model: { manifest, available: false, reason: `the model manifest ${name} is not in models/` }, reason: null };
  return { setting: name, model: { manifest, available: true, reason: null }, reason: null };
}

/** What a request's `mode` runs with; 422 when it asks for a model that cannot run. */
export function chooseDetector(configured: ConfiguredDetector, mode: ScoringMode): DetectorChoice {
  if (mode === 'builtin') return { manifest: null, strict: false, reason: null };
  const model = configured.model;
  if (mode === 'model') {
    if (!model)
      throw Invalid.field(
        'mode',
        configured.setting === 'auto'
          ? `is "model", but DETECTOR=auto found no model: ${configured.reason ?? 'none in MODELS_DIR'}; use auto or builtin`
          : 'is "model", but no model detector is configured on this box (DETECTOR=builtin); use auto or builtin',
        'body',
      );
    if (!model.available) throw Invalid.field('mode', `is "model", but the configured model cannot run: ${model.reason}`, 'body');
    return { manifest: model.manifest, strict: true, reason: null };
  }
  if (model?.available) return { manifest: model.manifest, strict: false, reason: null };
  return { manifest: null, strict: false, reason: model ? model.reason : null };
}
