import { rm } from 'node:fs/promises';
import type { Services } from '../../services.js';
import type { Actor } from '../../db/store.js';
import { newId } from '../../db/ids.js';
import type { UploadedFile } from '../../http/route.js';
import type { CycleScope } from '../../registry/scope.js';
import { createWalk, findByIdempotencyKey, type WalkWithClips } from './commands.js';
import { chooseDetector, configuredFor } from './detector-choice.js';
import { checkKinds, inspectUpload, placeClips, requestHash, sha256File, type InspectedFile } from './intake.js';
import { optionsFrom, type DetectorConf, type ScoringMode } from './options.js';
import { readManifestSync } from '../../vision/onnx/manifest.js';
import type { DetectorChoice } from './messages.js';
import type { WalkRunner } from './runner.js';
import { walkDir } from './storage.js';
import type { WalkSource, WalkTable } from './tables.js';
import { Conflict } from '../../errors.js';

/** Form fields of a scoring upload, validated by the route's schema. */
export interface ScoringFields {
  mode?: ScoringMode;
  conf?: number;
  sample_seconds?: number;
  max_frames?: number;
  mm_per_pixel?: number;
  week?: string;
}

export interface SubmitInput {
  operation: string;
  source: WalkSource;
  scope: (CycleScope & { week: string }) | null;
  fields: ScoringFields;
  files: UploadedFile[];
  labels: string[];
  idempotencyKey: string | undefined;
  exampleKey?: string;
  /** Examples are copied, uploads moved. */
  copy?: boolean;
}

export interface Submitter {
  organizationId: string;
  keyId: string | null;
  actor: Actor;
}

/**
 * The one path from an accepted upload to a queued walk: replay or refuse a
 * reused Idempotency-Key, check every file by content, pick the detector,
 * move the files under the walk's folder and insert walk and clips in one
 * transaction, then wake the runner.
 */
export async function submitWalk(services: Services, who: Submitter, runner: WalkRunner | undefined, a: SubmitInput): Promise<WalkTable> {
  const organizationId = who.organizationId;
  const mode = a.fields.mode ?? 'auto';

  const shas = await Promise.all(a.files.map((f) => sha256File(f.path)));
  const hash = requestHash({
    operation: a.operation,
    scope: a.scope ? { cycle_id: a.scope.cycle.id, week: a.scope.week } : {},
    fields: { ...a.fields, ...(a.scope ? { week: a.scope.week } : {}), ...(a.exampleKey ? { example: a.exampleKey } : {}) },
    files: shas,
  });
  const replay = async (): Promise<WalkTable | null> => {
    if (!a.idempotencyKey) return null;
    const earlier = await findByIdempotencyKey(services.db, organizationId, a.idempotencyKey);
    if (!earlier) return null;
    if (earlier.request_hash !== hash) {
      throw new Conflict(
        'This Idempotency-Key was already used for a different upload (other files, fields, crop cycle, week or endpoint). Use a new key for a new walk.',
        { job_id: earlier.id },
      );
    }
    return earlier;
  };
  const earlier = await replay();
  if (earlier) return earlier;

  const inspected: InspectedFile[] = [];
  for (const [i, f] of a.files.entries()) {
    inspected.push(await inspectUpload({ path: f.path, originalName: f.originalname, size: f.size }, a.labels[i]!, shas[i]));
  }
  checkKinds(inspected, mode, a.labels);
  const detector = chooseDetector(configuredFor(services), mode);
  // The model's own thresholds when it names them (the worker settles it again if the model then fails to load).
  const options = optionsFrom(a.fields, { video: inspected.some((f) => f.info.kind === 'video') }, manifestConf(detector));

  const id = newId();
  const clips = await placeClips(services.config.dataDir, id, inspected, { copy: a.copy });
  let created: WalkWithClips;
  try {
    created = await services.store.write(who.actor, async (w) => {
      // Checked again inside the transaction: a retry racing the first request finds its walk here.
      if (a.idempotencyKey) {
        const raced = await findByIdempotencyKey(w.trx, organizationId, a.idempotencyKey);
        if (raced) return { walk: raced, clips: [] };
      }
      return createWalk(w, {
        id,
        organizationId,
        cycle: a.scope && {
          farm_id: a.scope.cycle.farm_id,
          greenhouse_id: a.scope.cycle.greenhouse_id,
          row_id: a.scope.cycle.row_id,
          cycle_id: a.scope.cycle.id,
          week: a.scope.week,
        },
        source: a.source,
        exampleKey: a.exampleKey ?? null,
        mode,
        options,
        idempotencyKey: a.idempotencyKey ?? null,
        requestHash: hash,
        keyId: who.keyId,
        clips,
      });
    });
  } catch (err) {
    await rm(walkDir(services.config.dataDir, id), { recursive: true, force: true });
    throw err;
  }
  if (created.walk.id !== id) {
    // Lost the race to an identical retry: answer its walk (or 409 when the two differ), keep nothing of ours.
    await rm(walkDir(services.config.dataDir, id), { recursive: true, force: true });
    return (await replay()) ?? created.walk;
  }
  services.log.info('walk queued', {
    job_id: id,
    step: 'queued',
    source: a.source,
    clips: clips.length,
    bytes: clips.reduce((s, c) => s + c.size, 0),
    mode,
    detector: detector.manifest === null ? 'builtin' : 'model',
  });
  runner?.wake();
  return created.walk;
}

function manifestConf(choice: DetectorChoice): DetectorConf | null {
  if (choice.manifest === null) return null;
  try {
    return readManifestSync(choice.manifest).conf ?? null;
  } catch {
    // Unreadable now: the worker will say why when it opens the model.
    return null;
  }
}
