// The CLI that films a walk past the labelled photos: refuses bad arguments, writes a clip and its truth.
import t from 'tap';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { sharedData } from '../helpers/shared-data.js';
import { resolveFfmpeg } from '../../src/vision/media/index.js';

const run = promisify(execFile);
const photos = sharedData('tomato-photos');
const PHOTO_DIR = photos.path;
const ROOT = path.resolve(import.meta.dirname, '../..');
const cli = (args: string[]) =>
  run(process.execPath, ['--import', 'tsx', path.join(ROOT, 'scripts/render-photo-pan.ts'), ...args], { cwd: ROOT }).then(
    (r) => ({ code: 0, ...r }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );

t.test('bad arguments: exit 2 with what is wrong and the usage, nothing written', async (t) => {
  const out = mkdtempSync(path.join(tmpdir(), 'cropwalk-pan-cli-'));
  t.teardown(() => rmSync(out, { recursive: true, force: true }));
  for (const [args, says] of [
    [['--out', out], '--photos and --out are needed'],
    [['--photos', path.join(out, 'nowhere'), '--out', out], 'no folder'],
    [['--photos', PHOTO_DIR, '--out', out, '--fruit-px', '0'], '--fruit-px must be a positive number'],
    [['--photos', PHOTO_DIR, '--out', out, '--pace', 'fast'], '--pace must be a positive number'],
    [['--photos', PHOTO_DIR, '--out', out, '--width', '1279'], '--width must be even'],
    [['--photos', PHOTO_DIR, '--out', out, '--speed', '2'], "Unknown option '--speed'"],
  ] as const) {
    const r = await cli([...args]);
    t.equal(r.code, 2, `${args.join(' ')}: exit 2`);
    t.match(r.stderr, says);
    t.match(r.stderr, /usage: render-photo-pan\.ts/);
  }
  t.notOk(existsSync(path.join(out, 'pan.mp4')), 'no clip written');
});

const ffmpeg = await resolveFfmpeg();
if (photos.skip) {
  t.test("the CLI's walk past the labelled photos", { skip: photos.skip }, async () => {});
} else if (!ffmpeg.available) {
  t.test("the CLI's walk past the labelled photos", { skip: `ffmpeg is not available (${ffmpeg.reason})` }, async () => {});
} else {
  t.test('films every labelled photo into one clip with its truth', async (t) => {
    const out = mkdtempSync(path.join(tmpdir(), 'cropwalk-pan-cli-'));
    t.teardown(() => rmSync(out, { recursive: true, force: true }));
    const r = await cli(['--photos', PHOTO_DIR, '--out', out, '--fruit-px', '14', '--name', 'wall', '--balance-each']);
    t.equal(r.code, 0, r.stderr);
    const truth = JSON.parse(readFileSync(path.join(out, 'wall.json'), 'utf8')) as {
      fruit: unknown[];
      clips: { file: string }[];
      width: number;
    };
    t.match(r.stdout, new RegExp(`wall\\.mp4: 1280×\\d+, [\\d.]+ s, ${truth.fruit.length} labelled fruit`));
    t.ok(truth.fruit.length > 500, `${truth.fruit.length} labelled fruit`);
    t.equal(truth.clips[0]!.file, 'wall.mp4');
    t.ok(existsSync(path.join(out, 'wall.mp4')), 'the clip is written');
  });
}
