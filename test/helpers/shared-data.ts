// Where the development data outside the project lies (real climate exports, labelled photos),
// and the skip message of a test that needs it. A fresh clone has no ../shared beside it, so
// every test that reads it goes through here and skips, saying why, instead of failing.
//
// CROPWALK_SHARED names the shared folder (relative to the working directory); it defaults to
// ../shared beside the repository. test/helpers/shared-data.test.ts points it elsewhere and
// checks that every test using it skips.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export const SHARED_ENV = 'CROPWALK_SHARED';

/** The shared folder: `CROPWALK_SHARED` when set, else ../shared beside the repository. */
export const SHARED_DIR = process.env[SHARED_ENV] ? path.resolve(process.env[SHARED_ENV]) : path.resolve(repoRoot, '../shared');

/** A path inside the shared data folder (`<shared>/data/<rel>`). */
export const sharedPath = (rel: string) => path.join(SHARED_DIR, 'data', rel);

/** The message a test skips with when `data/<rel>` of the shared folder is absent. */
export function missingMessage(rel: string): string {
  return `shared data not found at ${sharedPath(rel)}: skipped (a clone outside the development workplace has none; set ${SHARED_ENV} to a shared folder that has data/${rel})`;
}

/**
 * A shared data path and, when it is absent, the message to skip with (tap's `skip` option or
 * `t.plan(0, message)`); `false` when it is there.
 */
export function sharedData(rel: string): { path: string; skip: string | false } {
  const p = sharedPath(rel);
  return { path: p, skip: existsSync(p) ? false : missingMessage(rel) };
}
