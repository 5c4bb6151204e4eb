// A newcomer's every npm command printed a warning about an unknown setting in .npmrc; the
// onnxruntime-node download is skipped another way (package.json's allowScripts, and the
// ONNXRUNTIME_NODE_INSTALL variable scripts/setup.mjs sets), so npm has nothing to warn about.
import t from 'tap';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

t.test('npm reads the project settings without a warning', async (t) => {
  const r = spawnSync('npm', ['pkg', 'get', 'name'], { cwd: ROOT, encoding: 'utf8' });
  t.equal(r.status, 0);
  t.equal(r.stdout.trim(), '"cropwalk"');
  t.notMatch(r.stderr, /npm warn/i, r.stderr.trim() || 'nothing on stderr');
});
