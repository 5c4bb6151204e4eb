// A clip with no plant in it (ffmpeg's colour bars: flat synthetic colours, no foliage) counts no
// fruit, and its walk says what is wrong; a walk past plants is not flagged.
import t from 'tap';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { renderWalk } from '../../scripts/render/walk.js';
import { resolveFfmpeg } from '../../src/vision/media/index.js';
import { startServer, createOrg, type TestServer } from '../helpers/server.js';
import { poll, upload } from '../helpers/walks.js';

const ff = await resolveFfmpeg();
if (!ff.available) {
  t.plan(0, `ffmpeg is not available (${ff.reason}): skipped`);
} else {
  const dir = t.testdir();
  const lavfi = (name: string, source: string, args: string[]) => {
    const out = path.join(dir, name);
    execFileSync(ff.ffmpeg.path, ['-v', 'error', '-y', '-f', 'lavfi', '-i', source, ...args, out]);
    return out;
  };
  const BARS = lavfi('bars.mp4', 'smptebars=size=1920x1080:rate=30', ['-t', '8', '-pix_fmt', 'yuv420p']);
  const HD_BARS = lavfi('hd-bars.mp4', 'smptehdbars=size=1280x720:rate=25', ['-t', '4', '-pix_fmt', 'yuv420p']);
  const BARS_PHOTO = lavfi('bars.jpg', 'smptebars=size=1600x1200', ['-frames:v', '1']);
  const walk = await renderWalk({ out: path.join(dir, 'walk'), seconds: 4, fps: 10, width: 640, height: 360, seed: 3 });

  const score = async (s: TestServer, key: string, file: string) => {
    const r = await upload(s, '/api/observations', key, [{ field: 'file', file, name: path.basename(file) }]);
    if (r.status !== 202) throw new Error(`upload: ${r.status} ${r.text}`);
    const done = (await poll(s, r.body.job_id, key)).at(-1);
    if (done.status !== 'done') throw new Error(`job ${done.status}: ${done.error ?? ''}`);
    return done.result;
  };

  t.test('colour bars: no fruit, and a warning that no plant is in view', async (t) => {
    const s = await startServer(t);
    const { adminKey } = await createOrg(s);
    for (const file of [BARS, HD_BARS, BARS_PHOTO]) {
      const result = await score(s, adminKey, file);
      const name = path.basename(file);
      t.same(result.counts, { green: 0, turning: 0, red: 0, total: 0 }, `${name}: no fruit`);
      t.same(result.fruit, [], `${name}: none listed`);
      const warning = result.quality.warnings.find((w: any) => w.code === 'no_plant');
      t.ok(warning, `${name}: a no_plant warning`);
      t.match(warning?.message, /no plant/, 'that says what is wrong');
      t.match(warning?.message, /flat|test pattern/, 'and why the box thinks so');
      t.same(
        warning?.frames,
        result.frames.map((f: any) => f.index),
        'every frame concerned',
      );
    }
  });

  t.test('a walk past plants is not flagged and keeps its fruit', async (t) => {
    const s = await startServer(t);
    const { adminKey } = await createOrg(s);
    const result = await score(s, adminKey, walk.files[0]!);
    t.ok(result.counts.total > 0, `${result.counts.total} fruit`);
    t.notOk(
      result.quality.warnings.some((w: any) => w.code === 'no_plant'),
      'no no_plant warning',
    );
  });
}
