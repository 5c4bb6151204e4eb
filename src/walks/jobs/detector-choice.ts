import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { DetectorChoice } from './messages.js';
import type { ScoringMode } from './options.js';
import { Invalid } from '../../errors.js';

/** The project's models/ folder: the default of MODELS_DIR, where DETECTOR names a manifest. */
export const MODELS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../models');

export interface ConfiguredDetector {
  /** "builtin", or the manifest's file name as configured. */
  setting: string;
  model: { manifest: string; available: boolean; reason: string | null } | null;
}

/**
 * Reads `config.detector` (DETECTOR): "builtin", or the file name of a model
 * manifest in models/. A name with a path in it is refused rather than
 * followed: the setting picks a shipped model, not any file on the box.
 */
export function configuredDetector(setting: string, modelsDir = MODELS_DIR): ConfiguredDetector {
  const name = setting.trim();
  if (name === '' || name === 'builtin') return { setting: 'builtin', model: null };
  if (name !== path.basename(name) || name === '.' || name === '..') {
    return {
      setting: name,
      model: {
        manifest: name,
        available: false,
        reason: `DETECTOR must be "builtin" or a manifest file name in models/, not a path (${name})`,
      },
    };
  }
  const manifest = path.join(modelsDir, name);
  if (!existsSync(manifest))
    return { setting: name, model: { manifest, available: false, reason: `the model manifest ${name} is not in models/` } };
  return { setting: name, model: { manifest, available: true, reason: null } };
}

/** What a request's `mode` runs with; 422 when it asks for a model that cannot run. */
export function chooseDetector(configured: ConfiguredDetector, mode: ScoringMode): DetectorChoice {
  if (mode === 'builtin') return { manifest: null, strict: false, reason: null };
  const model = configured.model;
  if (mode === 'model') {
    if (!model)
      throw Invalid.field(
        'mode',
        'is "model", but no model detector is configured on this box (DETECTOR=builtin); use auto or builtin',
        'body',
      );
    if (!model.available) throw Invalid.field('mode', `is "model", but the configured model cannot run: ${model.reason}`, 'body');
    return { manifest: model.manifest, strict: true, reason: null };
  }
  if (model?.available) return { manifest: model.manifest, strict: false, reason: null };
  return { manifest: null, strict: false, reason: model ? model.reason : null };
}
