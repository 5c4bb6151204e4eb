import t from 'tap';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createBuiltinDetector } from '../../../src/vision/builtin/index.js';
import { decodeImage, resolveFfmpeg } from '../../../src/vision/media/index.js';

// The stem finder, validated on rendered rows (scripts/render, the synthetic-walk renderer),
// where the truth says where every stem is. It is off by default (see docs/builtin-detector.md).
const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const renderer = path.join(repoRoot, 'scripts/render/walk.ts');
const ffmpeg = await resolveFfmpeg();
if (!existsSync(renderer) || !ffmpeg.available) {
  t.plan(0, !ffmpeg.available ? `ffmpeg unavailable: ${ffmpeg.reason}` : 'scripts/render/walk.ts not present; stem validation skipped');
} else {
  const { renderStill } = (await import('../../../scripts/render/walk.js')) as typeof import('../../../scripts/render/walk.js');
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-stems-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));

  t.test('counts the stems of rendered rows, lit and dim', async (t) => {
    const detector = createBuiltinDetector({ stems: true });
    t.equal(detector.info.stems.supported, true);
    t.equal(detector.info.plants.supported, true);
    let frames = 0;
    let exact = 0;
    let absError = 0;
    for (const dark of [false, true]) {
      for (const seed of [1, 2, 3, 4]) {
        const { jpeg, truth } = await renderStill({ seed, dark });
        const file = path.join(dir, `still-${seed}-${dark}.jpg`);
        writeFileSync(file, jpeg);
        const image = await decodeImage(file);
        const dets = await detector.detect(image, { conf: 0.35 });
        const stems = dets.filter((d) => d.kind === 'stem');
        t.equal(dets.filter((d) => d.kind === 'plant').length, stems.length, 'one plant per stem');
        const truthStems = truth.stems.filter((s) => s.visible >= 0.5);
        frames++;
        if (stems.length === truthStems.length) exact++;
        absError += Math.abs(stems.length - truthStems.length);
        // Every stem found lies on a true stem: no invented stems.
        for (const s of stems) {
          const cx = (s.box[0] + s.box[2]) / 2;
          t.ok(
            truth.stems.some((ts) => cx >= ts.box[0] - 20 && cx <= ts.box[2] + 20),
            `seed ${seed}${dark ? ' dim' : ''}: stem at x=${cx.toFixed(0)} is a real stem`,
          );
        }
      }
    }
    t.ok(exact >= frames * 0.6, `exact stem count in ${exact} of ${frames} frames`);
    t.ok(absError <= frames * 0.5, `total count error ${absError} over ${frames} frames`);
  });

  t.test('stems are off by default', async (t) => {
    const { jpeg } = await renderStill({ seed: 1 });
    const file = path.join(dir, 'default.jpg');
    writeFileSync(file, jpeg);
    const detector = createBuiltinDetector();
    t.equal(detector.info.stems.supported, false);
    t.match(detector.info.stems.reason, /stem/);
    const dets = await detector.detect(await decodeImage(file), { conf: 0.35 });
    t.equal(dets.filter((d) => d.kind !== 'fruit').length, 0);
  });
}
