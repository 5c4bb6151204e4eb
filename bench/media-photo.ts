// Photo decoding: a HEIC photo (libheif in WebAssembly, then the area resize) against ffmpeg
// decoding the same picture as a JPEG, at an iPhone's 12 megapixels and at the fixture's size;
// and a JPEG carrying a Display P3 profile (converted to sRGB) against the same JPEG without it.
//   node --import tsx bench/media-photo.ts
// The 12-megapixel HEIC is made with heif-enc (Debian: libheif-examples); without it only the
// fixture is timed.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { decodeFrames, resolveFfmpeg } from '../src/vision/media/index.js';
import { decodeHeif } from '../src/vision/media/heif.js';
import { displayP3Profile, jpegWithProfile } from '../test/helpers/icc.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const RUNS = 7;

async function decodeOnce(file: string): Promise<void> {
  for await (const f of decodeFrames(file)) void f;
}

async function median(file: string, run: (file: string) => Promise<unknown> = decodeOnce): Promise<number> {
  await run(file); // warm: libheif's first load, ffmpeg's page cache
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t0 = performance.now();
    await run(file);
    times.push(performance.now() - t0);
  }
  return times.sort((a, b) => a - b)[RUNS >> 1]!;
}

export async function runPhotoDecodeBench(): Promise<Record<string, unknown>> {
  const ffmpeg = await resolveFfmpeg();
  if (!ffmpeg.available) throw new Error(`ffmpeg is needed: ${ffmpeg.reason}`);
  const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-photo-bench-'));
  try {
    const pairs: { name: string; jpeg: string; heic: string }[] = [
      {
        name: '800×600 (test fixture)',
        jpeg: path.join(ROOT, 'examples/row-mixed.jpg'),
        heic: path.join(ROOT, 'test/fixtures/heic/row-mixed.heic'),
      },
    ];
    const big = path.join(dir, 'big.jpg');
    execFileSync(ffmpeg.ffmpeg.path, [
      '-v',
      'error',
      '-i',
      path.join(ROOT, 'examples/row-mixed.jpg'),
      '-vf',
      'scale=4032:3024:flags=lanczos',
      '-q:v',
      '2',
      big,
    ]);
    const enc = spawnSync('heif-enc', ['-q', '85', '-o', path.join(dir, 'big.heic'), big], { encoding: 'utf8' });
    if (enc.status === 0) pairs.unshift({ name: '4032×3024 (an iPhone photo)', jpeg: big, heic: path.join(dir, 'big.heic') });
    else console.log('heif-enc not found (Debian: apt-get install libheif-examples): the 12-megapixel pair is skipped');

    const rows = [];
    for (const p of pairs) {
      const jpegMs = await median(p.jpeg);
      const heicMs = await median(p.heic);
      const libheifMs = await median(p.heic, (f) => decodeHeif(f, 1e8));
      rows.push({ picture: p.name, jpeg_ffmpeg_ms: jpegMs, heic_ms: heicMs, heic_libheif_only_ms: libheifMs, ratio: heicMs / jpegMs });
      console.log(
        `${p.name}: JPEG through ffmpeg ${jpegMs.toFixed(0)} ms (baseline); HEIC ${heicMs.toFixed(0)} ms = ${(heicMs / jpegMs).toFixed(2)}× (libheif decode ${libheifMs.toFixed(0)} ms, the rest the resize to 1280 px)`,
      );
    }
    // The colour profile: read from the file's headers, then one pass over the working-size frame.
    const p3 = path.join(dir, 'big-p3.jpg');
    writeFileSync(p3, jpegWithProfile(readFileSync(big), displayP3Profile()));
    const plainMs = await median(big);
    const p3Ms = await median(p3);
    console.log(
      `4032×3024 JPEG: without a profile ${plainMs.toFixed(0)} ms (baseline); with a Display P3 profile, converted to sRGB, ${p3Ms.toFixed(0)} ms = ${(p3Ms / plainMs).toFixed(2)}×`,
    );
    return { runs: RUNS, rows, display_p3: { plain_ms: plainMs, p3_ms: p3Ms, ratio: p3Ms / plainMs } };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url.endsWith(path.basename(process.argv[1]))) await runPhotoDecodeBench();
