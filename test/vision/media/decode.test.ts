import t from 'tap';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  decodeFrames,
  decodeImage,
  encodeJpeg,
  MediaError,
  probeMedia,
  resolveFfmpeg,
  readJpegOrientation,
  sniffMediaType,
} from '../../../src/vision/media/index.js';
import { canConvertColour } from '../../../src/vision/media/colour-conversion.js';
import { tailReason } from '../../../src/vision/media/errors.js';
import type { RgbImage } from '../../../src/vision/types.js';

const resolution = await resolveFfmpeg();
if (!resolution.available) {
  t.plan(0, `ffmpeg is not available here, media tests skipped: ${resolution.reason}`);
  process.exit(0);
}

const dir = mkdtempSync(path.join(tmpdir(), 'cropwalk-media-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));
const ff = (...args: string[]) => execFileSync(resolution.ffmpeg.path, ['-v', 'error', '-y', ...args]);
const at = (name: string) => path.join(dir, name);

// Real media, made by ffmpeg here: a test pattern, the same clip with rotation metadata, a VFR clip, a photo.
ff('-f', 'lavfi', '-i', 'testsrc=s=320x240:r=30:d=2', '-c:v', 'libx264', '-pix_fmt', 'yuv420p', at('testsrc.mp4'));
ff('-i', at('testsrc.mp4'), '-c', 'copy', '-metadata:s:v:0', 'rotate=90', at('rotated.mp4'));
ff(
  '-f',
  'lavfi',
  '-i',
  'color=red:s=64x48:r=30:d=1[a];color=blue:s=64x48:r=30:d=2,fps=2[b];[a][b]concat=n=2:v=1',
  '-fps_mode',
  'vfr',
  '-c:v',
  'libx264',
  '-pix_fmt',
  'yuv420p',
  at('vfr.mp4'),
);
ff('-f', 'lavfi', '-i', 'testsrc=s=1600x1200:r=1:d=1', '-frames:v', '1', at('photo.jpg'));
ff('-f', 'lavfi', '-i', 'testsrc=s=160x120:r=30:d=20', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', at('long.mp4'));

function mean(img: RgbImage, channel: number): number {
  let s = 0;
  for (let i = channel; i < img.data.length; i += 3) s += img.data[i]!;
  return s / (img.width * img.height);
}

function rotateCw(img: RgbImage): RgbImage {
  const { width: w, height: h } = img;
  const out = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) {
      // Pixel (x, y) goes to column h-1-y, row x of the h×w result.
      const d = (x * h + (h - 1 - y)) * 3;
      const s = (y * w + x) * 3;
      out[d] = img.data[s]!;
      out[d + 1] = img.data[s + 1]!;
      out[d + 2] = img.data[s + 2]!;
    }
  return { width: h, height: w, data: out };
}

function meanAbsDiff(a: RgbImage, b: RgbImage): number {
  let s = 0;
  for (let i = 0; i < a.data.length; i++) s += Math.abs(a.data[i]! - b.data[i]!);
  return s / a.data.length;
}

async function collect(file: string, opts: Parameters<typeof decodeFrames>[1] = {}) {
  const frames = [];
  for await (const f of decodeFrames(file, opts)) frames.push(f);
  return frames;
}

function childProcesses(): string[] {
  const out = execFileSync('ps', ['--ppid', String(process.pid), '-o', 'comm='], { encoding: 'utf8' });
  return out
    .split('\n')
    .map((s) => s.trim())
    .filter((s) => s && s !== 'ps');
}

t.test('resolveFfmpeg names paths and versions', async (t) => {
  t.equal(resolution.available, true);
  t.match(resolution.ffmpeg.version, /^ffmpeg version /);
  t.match(resolution.ffprobe.version, /^ffprobe version /);
  t.ok(['env', 'ffmpeg-static', 'path'].includes(resolution.ffmpeg.source));
});

t.test('resolveFfmpeg refuses a broken FFMPEG_PATH with the reason', async (t) => {
  const before = process.env.FFMPEG_PATH;
  process.env.FFMPEG_PATH = at('no-such-ffmpeg');
  try {
    const r = await resolveFfmpeg({ refresh: true });
    t.equal(r.available, false);
    if (!r.available) t.match(r.reason, /no-such-ffmpeg.*not found/);
  } finally {
    if (before === undefined) delete process.env.FFMPEG_PATH;
    else process.env.FFMPEG_PATH = before;
    await resolveFfmpeg({ refresh: true });
  }
});

t.test('probeMedia describes a clip and a photo', async (t) => {
  const clip = await probeMedia(at('testsrc.mp4'));
  t.match(clip, { kind: 'video', width: 320, height: 240, rotation: 0, codec: 'h264' });
  t.ok(Math.abs(clip.durationSeconds - 2) < 0.1, `duration ${clip.durationSeconds}`);
  t.ok(Math.abs(clip.frameRate - 30) < 0.01, `frame rate ${clip.frameRate}`);
  const photo = await probeMedia(at('photo.jpg'));
  t.match(photo, { kind: 'image', width: 1600, height: 1200, durationSeconds: 0, codec: 'mjpeg' });
});

t.test('a rotated clip is reported and decoded upright', async (t) => {
  const info = await probeMedia(at('rotated.mp4'));
  t.equal(info.width, 240, 'width is the displayed one');
  t.equal(info.height, 320);
  t.ok(info.rotation === 90 || info.rotation === 270, `rotation ${info.rotation}`);
  const [upright] = await collect(at('testsrc.mp4'), { maxFrames: 1 });
  const [turned] = await collect(at('rotated.mp4'), { maxFrames: 1 });
  t.equal(turned!.image.width, 240);
  t.equal(turned!.image.height, 320);
  const cw = rotateCw(upright!.image);
  const ccw = rotateCw(rotateCw(cw));
  const expected = info.rotation === 90 ? cw : ccw;
  const other = info.rotation === 90 ? ccw : cw;
  const dExpected = meanAbsDiff(turned!.image, expected);
  const dOther = meanAbsDiff(turned!.image, other);
  t.ok(dExpected < 8, `decoded frame matches the ${info.rotation}° turn (mean diff ${dExpected.toFixed(1)})`);
  t.ok(dOther > dExpected * 3, `and not the opposite turn (${dOther.toFixed(1)})`);
});

t.test('a variable-frame-rate clip is sampled by time, not by frame number', async (t) => {
  // 1 s of red at 30 fps, then 2 s of blue at 2 fps: by frame number nearly every sample would be red.
  const frames = await collect(at('vfr.mp4'), { sampleSeconds: 0.5 });
  const colours = frames.map((f) => (mean(f.image, 0) > mean(f.image, 2) ? 'red' : 'blue'));
  t.same(colours.slice(0, 6), ['red', 'red', 'blue', 'blue', 'blue', 'blue']);
  t.same(
    frames.slice(0, 6).map((f) => f.timeSeconds),
    [0, 0.5, 1, 1.5, 2, 2.5],
  );
  t.same(
    frames.map((f) => f.index),
    frames.map((_, i) => i),
  );
});

t.test('each sample is the frame shown at its timestamp', async (t) => {
  // Frame n has luma 16 + 6·n (limited range), so a frame's brightness says which frame it is.
  ff(
    '-f',
    'lavfi',
    '-i',
    'color=black:s=64x48:r=30:d=1',
    '-vf',
    'geq=lum=16+N*6:cb=128:cr=128',
    '-c:v',
    'libx264',
    '-qp',
    '0',
    '-pix_fmt',
    'yuv444p',
    at('ramp.mp4'),
  );
  const frames = await collect(at('ramp.mp4'), { sampleSeconds: 0.1 });
  const shown = frames.map((f) => Math.round((mean(f.image, 1) * 219) / 255 / 6));
  t.same(shown.slice(0, 10), [0, 3, 6, 9, 12, 15, 18, 21, 24, 27], `frames shown: ${shown.join(',')}`);
});

t.test('frames are scaled to the working size and capped in number', async (t) => {
  const frames = await collect(at('testsrc.mp4'), { sampleSeconds: 0.25, maxFrames: 3, maxLongSide: 160 });
  t.equal(frames.length, 3);
  for (const f of frames) t.match(f.image, { width: 160, height: 120 });
  t.equal(frames[0]!.image.data.length, 160 * 120 * 3);
});

t.test('a photo yields exactly one frame at the default working size', async (t) => {
  const frames = await collect(at('photo.jpg'), { sampleSeconds: 0.1, maxFrames: 50 });
  t.equal(frames.length, 1);
  t.match(frames[0]!.image, { width: 1280, height: 960 });
  const again = await decodeImage(at('photo.jpg'), { maxLongSide: 400 });
  t.match(again, { width: 400, height: 300 });
});

t.test('stopping early ends ffmpeg', async (t) => {
  let seen = 0;
  for await (const f of decodeFrames(at('long.mp4'), { sampleSeconds: 0.1 })) {
    seen = f.index + 1;
    if (seen === 2) break;
  }
  t.equal(seen, 2);
  t.same(
    childProcesses().filter((c) => c.includes('ffmpeg')),
    [],
    'no ffmpeg left running',
  );
});

t.test('an abort signal cancels decoding', async (t) => {
  const ctl = new AbortController();
  const run = async () => {
    for await (const f of decodeFrames(at('long.mp4'), { sampleSeconds: 0.1, signal: ctl.signal })) {
      if (f.index === 1) ctl.abort();
    }
  };
  await t.rejects(run(), { code: 'aborted' });
});

t.test('hostile inputs are refused with a reason', async (t) => {
  const random = Buffer.alloc(64 * 1024);
  for (let i = 0; i < random.length; i++) random[i] = (i * 2654435761) >>> 24;
  writeFileSync(at('random.mp4'), random);
  writeFileSync(at('text.mp4'), 'This is not a video.\n'.repeat(200));
  const full = readFileSync(at('testsrc.mp4'));
  writeFileSync(at('truncated.mp4'), full.subarray(0, Math.floor(full.length / 2)));
  writeFileSync(at('empty.mp4'), Buffer.alloc(0));

  for (const name of ['random.mp4', 'text.mp4', 'truncated.mp4', 'empty.mp4']) {
    const err = await probeMedia(at(name)).then(
      () => undefined,
      (e: unknown) => e,
    );
    t.ok(err instanceof MediaError, `${name} is refused`);
    t.equal((err as MediaError).code, 'unsupported_media', `${name}: ${(err as Error).message}`);
    t.ok((err as Error).message.length > 30, 'with a reason');
  }
  await t.rejects(collect(at('truncated.mp4')), { code: 'unsupported_media' });
  t.equal(sniffMediaType(random), null);
  t.equal(sniffMediaType(Buffer.from('This is not a video.')), null);
});

t.test("a clip whose frames are corrupt fails with ffmpeg's reason", async (t) => {
  // Keep the header (faststart puts moov first) and wreck the coded pictures after it.
  ff('-i', at('testsrc.mp4'), '-c', 'copy', '-movflags', '+faststart', at('fast.mp4'));
  const bytes = Buffer.from(readFileSync(at('fast.mp4')));
  const mdat = bytes.indexOf('mdat');
  t.ok(mdat > 0);
  for (let i = mdat + 8; i < bytes.length; i++) bytes[i] = 0xff;
  writeFileSync(at('corrupt.mp4'), bytes);
  const err = await collect(at('corrupt.mp4')).then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(err instanceof MediaError, 'decoding fails');
  t.equal((err as MediaError).code, 'decode_failed');
  t.ok((err as MediaError).reason && (err as MediaError).reason!.length > 0, `reason: ${(err as MediaError).reason}`);
});

/** Every frame, and what the decoder's generator returned at the end. */
async function decodeWhole(file: string, opts: Parameters<typeof decodeFrames>[1] = {}) {
  const it = decodeFrames(file, opts);
  const frames = [];
  for (let n = await it.next(); ; n = await it.next()) {
    if (n.done) return { frames, summary: n.value };
    frames.push(n.value);
  }
}

t.test('a clip ffmpeg decodes only in part says so: cut off part way, or damaged in the middle; a clean one says nothing', async (t) => {
  // Index first (as phones and the renderer write it), so a copy broken off part way still probes as the whole clip.
  ff('-i', at('long.mp4'), '-c', 'copy', '-movflags', '+faststart', at('long-fast.mp4'));
  const bytes = readFileSync(at('long-fast.mp4'));
  const clean = await decodeWhole(at('long-fast.mp4'), { sampleSeconds: 0.5 });
  t.equal(clean.frames.length, 40, '20 s at 0.5 s');
  t.same(clean.summary, { frames: 40, errors: null }, 'a clean decode reports no errors');

  writeFileSync(at('cut-off.mp4'), bytes.subarray(0, Math.floor(bytes.length * 0.4)));
  t.equal((await probeMedia(at('cut-off.mp4'))).durationSeconds, 20, 'ffprobe still reads the whole length from the index');
  const cut = await decodeWhole(at('cut-off.mp4'), { sampleSeconds: 0.5 });
  t.ok(cut.frames.length > 0 && cut.frames.length < 20, `the start only: ${cut.frames.length} frames`);
  t.equal(cut.summary.frames, cut.frames.length);
  t.match(cut.summary.errors, /partial file|Invalid data|error/i, `ffmpeg's words: ${cut.summary.errors}`);
  t.notMatch(cut.summary.errors, dir, "without the box's folders");

  // Noise over a stretch in the middle of the picture data: the decoder skips or garbles those pictures and goes on.
  const middle = Buffer.from(bytes);
  const mdat = middle.indexOf('mdat');
  const from = mdat + Math.floor((middle.length - mdat) * 0.45);
  let x = 7;
  for (let i = from; i < from + 4000; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    middle[i] = x >>> 24;
  }
  writeFileSync(at('damaged.mp4'), middle);
  const damaged = await decodeWhole(at('damaged.mp4'), { sampleSeconds: 0.5 });
  t.ok(damaged.frames.length >= 38, `read to the end: ${damaged.frames.length} frames`);
  t.ok(damaged.summary.errors, `ffmpeg's words: ${damaged.summary.errors}`);
});

// A phone's clip is no test pattern: audio, a timecode track, B-frames, HEVC 10-bit with open GOPs,
// and when it was trimmed on the phone, an edit list that starts between keyframes. Any line
// ffmpeg writes at error level reads as a damaged clip to the walker, so none of these may cause one.
t.test('clips shaped as phones write them decode with no errors reported', async (t) => {
  const tone = ['-f', 'lavfi', '-i', 'sine=frequency=440:sample_rate=48000', '-c:a', 'aac'];
  ff(
    '-f',
    'lavfi',
    '-i',
    'testsrc2=s=320x240:r=30000/1001',
    ...tone,
    '-t',
    '4',
    '-c:v',
    'libx264',
    '-profile:v',
    'high',
    '-bf',
    '3',
    '-g',
    '30',
    '-pix_fmt',
    'yuv420p',
    '-timecode',
    '01:02:03:04',
    '-movflags',
    '+faststart',
    at('phone-h264.mov'),
  );
  ff(
    '-f',
    'lavfi',
    '-i',
    'testsrc2=s=320x240:r=30',
    ...tone,
    '-t',
    '4',
    '-c:v',
    'libx265',
    '-x265-params',
    'log-level=error:open-gop=1:bframes=4:keyint=60',
    '-pix_fmt',
    'yuv420p10le',
    '-tag:v',
    'hvc1',
    '-timecode',
    '00:00:00:00',
    at('phone-hevc.mov'),
  );
  // Trimmed by copying from a point between keyframes, as a phone's editor trims without re-encoding.
  ff('-ss', '1.37', '-i', at('phone-h264.mov'), '-map', '0', '-c', 'copy', at('trimmed-h264.mov'));
  ff('-ss', '1.1', '-i', at('phone-hevc.mov'), '-map', '0', '-c', 'copy', at('trimmed-hevc.mov'));
  for (const name of ['phone-h264.mov', 'phone-hevc.mov', 'trimmed-h264.mov', 'trimmed-hevc.mov']) {
    const info = await probeMedia(at(name));
    const { frames, summary } = await decodeWhole(at(name), { sampleSeconds: 0.25, info });
    const expected = Math.ceil(info.durationSeconds / 0.25);
    t.ok(Math.abs(frames.length - expected) <= 1, `${name}: ${frames.length} frames for ${info.durationSeconds} s`);
    t.equal(summary.errors, null, `${name}: no errors reported`);
  }
});

t.test('sniffMediaType recognises the accepted containers by content', async (t) => {
  t.match(sniffMediaType(readFileSync(at('photo.jpg'))), { kind: 'image', format: 'jpeg' });
  t.match(sniffMediaType(readFileSync(at('testsrc.mp4'))), { kind: 'video', format: 'mp4' });
  ff('-i', at('photo.jpg'), at('photo.png'));
  ff('-i', at('photo.jpg'), '-c:v', 'libwebp', at('photo.webp'));
  ff('-i', at('testsrc.mp4'), '-c', 'copy', at('clip.mov'));
  ff('-i', at('testsrc.mp4'), '-c', 'copy', at('clip.mkv'));
  ff('-i', at('testsrc.mp4'), '-t', '0.2', '-c:v', 'libvpx', at('clip.webm'));
  ff('-i', at('testsrc.mp4'), '-t', '0.2', '-c:v', 'mpeg4', at('clip.avi'));
  const expect: Record<string, string> = {
    'photo.png': 'png',
    'photo.webp': 'webp',
    'clip.mov': 'mov',
    'clip.mkv': 'mkv',
    'clip.webm': 'webm',
    'clip.avi': 'avi',
  };
  for (const [name, format] of Object.entries(expect)) {
    t.equal(sniffMediaType(readFileSync(at(name)).subarray(0, 4096))?.format, format, name);
    const info = await probeMedia(at(name));
    t.equal(info.kind, name.startsWith('photo') ? 'image' : 'video', `${name} probes as ${info.kind}`);
  }
  t.equal(sniffMediaType(new Uint8Array([0xff, 0xd8])), null, 'too short to tell');
  t.equal(sniffMediaType(Buffer.from('RIFF\0\0\0\0WAVEfmt ')), null, 'a RIFF that is no picture');
  // JPEG XL (bare codestream, FF 0A) is not read by the detector's decoders: refused, not half-read.
  let jxl: Buffer | null = null;
  try {
    ff('-i', at('photo.jpg'), '-c:v', 'libjxl', '-f', 'image2', at('photo.jxl'));
    jxl = readFileSync(at('photo.jxl'));
  } catch {
    // An ffmpeg without libjxl cannot make one; the container form below is still checked.
  }
  if (jxl) t.equal(sniffMediaType(jxl.subarray(0, 4096)), null, 'JPEG XL is refused');
  else t.skip('JPEG XL codestream: this ffmpeg has no libjxl encoder to make one', () => {});
  t.equal(sniffMediaType(Buffer.from('\0\0\0\x0cJXL \r\n\x87\n', 'latin1')), null, 'JPEG XL in its box container too');
});

t.test('encodeJpeg round-trips an image through ffmpeg', async (t) => {
  const [frame] = await collect(at('testsrc.mp4'), { maxFrames: 1 });
  const jpeg = await encodeJpeg(frame!.image, 90);
  t.equal(jpeg[0], 0xff);
  t.equal(jpeg[1], 0xd8);
  t.equal(jpeg[jpeg.length - 2], 0xff);
  t.equal(jpeg[jpeg.length - 1], 0xd9);
  writeFileSync(at('roundtrip.jpg'), jpeg);
  const back = await decodeImage(at('roundtrip.jpg'));
  t.match(back, { width: 320, height: 240 });
  t.ok(meanAbsDiff(back, frame!.image) < 6, 'pixels survive the trip');
  const small = await encodeJpeg(frame!.image, 10);
  t.ok(small.length < jpeg.length, 'lower quality is smaller');
  await t.rejects(encodeJpeg({ width: 10, height: 10, data: new Uint8Array(10) }), RangeError);
  const odd = await encodeJpeg({ width: 321, height: 241, data: new Uint8Array(321 * 241 * 3).fill(120) });
  writeFileSync(at('odd.jpg'), odd);
  t.match(await probeMedia(at('odd.jpg')), { width: 321, height: 241 }, 'odd sizes survive 4:2:0 chroma');
});

/** A JPEG with an EXIF APP1 segment holding only the orientation tag, as phones write it. */
function withOrientation(jpeg: Buffer, orientation: number, bigEndian = false): Buffer {
  const tiff = Buffer.alloc(26);
  if (bigEndian) {
    tiff.write('MM', 0, 'latin1');
    tiff.writeUInt16BE(42, 2);
    tiff.writeUInt32BE(8, 4);
    tiff.writeUInt16BE(1, 8);
    tiff.writeUInt16BE(0x0112, 10);
    tiff.writeUInt16BE(3, 12);
    tiff.writeUInt32BE(1, 14);
    tiff.writeUInt16BE(orientation, 18);
  } else {
    tiff.write('II', 0, 'latin1');
    tiff.writeUInt16LE(42, 2);
    tiff.writeUInt32LE(8, 4);
    tiff.writeUInt16LE(1, 8);
    tiff.writeUInt16LE(0x0112, 10);
    tiff.writeUInt16LE(3, 12);
    tiff.writeUInt32LE(1, 14);
    tiff.writeUInt16LE(orientation, 18);
  }
  const body = Buffer.concat([Buffer.from('Exif\0\0', 'latin1'), tiff]);
  const head = Buffer.from([0xff, 0xe1, 0, 0]);
  head.writeUInt16BE(body.length + 2, 2);
  return Buffer.concat([jpeg.subarray(0, 2), head, body, jpeg.subarray(2)]);
}

t.test('a phone photo stored sideways (EXIF orientation 6) is probed and decoded upright', async (t) => {
  ff('-f', 'lavfi', '-i', 'testsrc=s=320x240', '-frames:v', '1', at('upright.jpg'));
  const plain = readFileSync(at('upright.jpg'));
  writeFileSync(at('exif6.jpg'), withOrientation(plain, 6));
  t.equal(readJpegOrientation(readFileSync(at('exif6.jpg'))), 6);
  t.equal(readJpegOrientation(withOrientation(plain, 8, true)), 8, 'big-endian TIFF too');
  t.equal(readJpegOrientation(plain), null, 'no EXIF, no orientation');
  const info = await probeMedia(at('exif6.jpg'));
  t.match(info, { kind: 'image', width: 240, height: 320, rotation: 90 });
  const upright = await decodeImage(at('upright.jpg'));
  const turned = await decodeImage(at('exif6.jpg'));
  t.match(turned, { width: 240, height: 320 });
  t.ok(meanAbsDiff(turned, rotateCw(upright)) < 8, 'pixels are the upright picture turned clockwise');
});

t.test('hostile EXIF never throws', async (t) => {
  const plain = readFileSync(at('photo.jpg'));
  const good = withOrientation(plain, 6);
  for (let cut = 2; cut < 60; cut += 3) t.doesNotThrow(() => readJpegOrientation(good.subarray(0, cut)), `cut at ${cut}`);
  const bogus = Buffer.from(good);
  bogus.writeUInt32LE(0xfffffff0, 2 + 4 + 6 + 4); // IFD offset (after SOI, APP1 header, "Exif\0\0", TIFF header) far past the end
  t.equal(readJpegOrientation(bogus), null);
  const badValue = withOrientation(plain, 77);
  t.equal(readJpegOrientation(badValue), null, 'orientation outside 1–8 is ignored');
  const zeroLength = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe1, 0, 0]), plain.subarray(2)]);
  t.equal(readJpegOrientation(zeroLength), null);
});

t.test('a path with "%d" in it is read as that file, not as a numbered image sequence', async (t) => {
  const odd = mkdtempSync(path.join(tmpdir(), 'cropwalk-%d-'));
  t.teardown(() => rmSync(odd, { recursive: true, force: true }));
  // One pattern in the path: with two, ffmpeg gives up on the pattern and reads the name as it is.
  writeFileSync(path.join(odd, 'photo.jpg'), readFileSync(at('photo.jpg')));
  writeFileSync(path.join(odd, 'clip.mp4'), readFileSync(at('testsrc.mp4')));
  writeFileSync(path.join(odd, 'upload'), readFileSync(at('photo.jpg')));
  const photo = await probeMedia(path.join(odd, 'photo.jpg'));
  t.match(photo, { kind: 'image', width: 1600, height: 1200, container: 'image2' });
  t.match(await decodeImage(path.join(odd, 'photo.jpg'), { maxLongSide: 400 }), { width: 400, height: 300 });
  t.match(await probeMedia(path.join(odd, 'clip.mp4')), { kind: 'video', width: 320, height: 240 });
  t.equal((await collect(path.join(odd, 'clip.mp4'), { sampleSeconds: 0.5 })).length, 4);
  // Without a known extension ffmpeg reads the photo as a JPEG stream, which takes no pattern option.
  t.match(await probeMedia(path.join(odd, 'upload')), { kind: 'image', container: 'jpeg_pipe' });
  t.match(await decodeImage(path.join(odd, 'upload'), { maxLongSide: 400 }), { width: 400, height: 300 });
});

t.test('probe reads the colour tags that decide an HDR conversion; decoded frames say how their colours were read', async (t) => {
  // Tags only (the picture stays 8-bit SDR): what ffprobe reports is under test, not the conversion.
  ff(
    '-i',
    at('testsrc.mp4'),
    '-c:v',
    'libx264',
    '-pix_fmt',
    'yuv420p',
    '-color_primaries',
    'bt2020',
    '-color_trc',
    'arib-std-b67',
    '-colorspace',
    'bt2020nc',
    at('tagged-hlg.mp4'),
  );
  t.match(await probeMedia(at('tagged-hlg.mp4')), { kind: 'video', colourTransfer: 'arib-std-b67', colourPrimaries: 'bt2020' });
  t.match(await probeMedia(at('testsrc.mp4')), { colourTransfer: null, colourPrimaries: null }, 'untagged');
  t.match(await probeMedia(at('photo.jpg')), { colourTransfer: null, colourPrimaries: null }, 'a photo is read as sRGB');
  const [plain] = await collect(at('testsrc.mp4'), { maxFrames: 1 });
  t.equal(plain!.colour, 'as-recorded');
  const [hlg] = await collect(at('tagged-hlg.mp4'), { maxFrames: 1 });
  t.equal(hlg!.colour, (await canConvertColour(resolution.ffmpeg.path)) ? 'converted' : 'unconverted');
  // Tagged HLG but not with its matrix or range: zscale alone refuses such a frame, so the clip must still decode.
  ff(
    '-i',
    at('testsrc.mp4'),
    '-c:v',
    'libx264',
    '-pix_fmt',
    'yuv420p',
    '-color_primaries',
    'bt2020',
    '-color_trc',
    'arib-std-b67',
    at('partly-tagged-hlg.mp4'),
  );
  t.match(await probeMedia(at('partly-tagged-hlg.mp4')), { colourTransfer: 'arib-std-b67', colourMatrix: null });
  const partly = await collect(at('partly-tagged-hlg.mp4'), { sampleSeconds: 0.5 });
  t.equal(partly.length, 4, 'every sample decoded');
  t.equal(partly[0]!.colour, hlg!.colour);
});

t.test("tailReason keeps what went wrong and drops the box's paths and ffmpeg's internals", async (t) => {
  const stderr = [
    '[mov,mp4,m4a,3gp,3g2,mj2 @ 0x55d52520e240] moov atom not found',
    'file:/srv/cropwalk/data/uploads/3f2a.part: Invalid data found when processing input',
    '[h264 @ 0x5648f32a64c0] Error splitting the input into NAL units.',
    '[h264 @ 0x5648f32a64c0] Error splitting the input into NAL units.',
    'Cannot determine format of input stream 0:0 after EOF',
    'Error marking filters as finished',
    '    Last message repeated 3 times',
    '',
  ].join('\n');
  const reason = tailReason(stderr, '/srv/cropwalk/data/uploads/3f2a.part');
  t.equal(reason, 'moov atom not found; the file: Invalid data found when processing input; Error splitting the input into NAL units.');
  t.notMatch(tailReason('/srv/x/y.mp4: No such file', '/srv/x/y.mp4'), /srv/, 'a bare path is hidden too');
  t.equal(tailReason('x'.repeat(500), undefined, 50).length, 51, 'long reasons are cut from the front, with an ellipsis');
});
