// ICC profiles: real ones from Debian's packages, Display P3 from Apple's published values, the
// conversion checked against textbook matrices, and broken profiles refused with a reason.
import t from 'tap';
import { readFileSync } from 'node:fs';
import {
  conversionToSrgb,
  convertToSrgb,
  evalCurve,
  invert,
  multiply,
  parseRgbProfile,
  profileFromH273,
  type Matrix3,
} from '../../../src/vision/image/icc.js';
import { DISPLAY_P3_D50, displayP3Profile, rgbProfile, SYSTEM_PROFILES, systemProfilesMissing } from '../../helpers/icc.js';

/** RGB → XYZ of a D65 space from its primaries' chromaticities (the textbook construction, no adaptation). */
function rgbToXyz(r: [number, number], g: [number, number], b: [number, number]): Matrix3 {
  const col = ([x, y]: [number, number]) => [x / y, 1, (1 - x - y) / y];
  const [R, G, B] = [col(r), col(g), col(b)];
  const m: Matrix3 = [R[0]!, G[0]!, B[0]!, R[1]!, G[1]!, B[1]!, R[2]!, G[2]!, B[2]!];
  const w = [0.3127 / 0.329, 1, (1 - 0.3127 - 0.329) / 0.329];
  const inv = invert(m);
  const s = [0, 1, 2].map((i) => inv[i * 3]! * w[0]! + inv[i * 3 + 1]! * w[1]! + inv[i * 3 + 2]! * w[2]!);
  return m.map((v, i) => v * s[i % 3]!) as unknown as Matrix3;
}
const SRGB_XYZ = rgbToXyz([0.64, 0.33], [0.3, 0.6], [0.15, 0.06]);
/** Linear P3 → linear sRGB and Adobe RGB → sRGB, from their primaries alone. */
const P3_TO_SRGB = multiply(invert(SRGB_XYZ), rgbToXyz([0.68, 0.32], [0.265, 0.69], [0.15, 0.06]));
const ADOBE_TO_SRGB = multiply(invert(SRGB_XYZ), rgbToXyz([0.64, 0.33], [0.21, 0.71], [0.15, 0.06]));

const close = (a: readonly number[], b: readonly number[], tol: number) => a.every((v, i) => Math.abs(v - b[i]!) <= tol);

t.test('Display P3: the profile as Apple publishes it, and as an HEIF nclx box names it, convert alike', async (t) => {
  const fromIcc = conversionToSrgb(parseRgbProfile(displayP3Profile()));
  const fromNclx = conversionToSrgb(profileFromH273(12, 13));
  t.ok(fromIcc && fromNclx, 'both need a conversion');
  t.ok(
    close(fromIcc!.matrix, P3_TO_SRGB, 0.002),
    `the ICC route gives P3 → sRGB from the primaries (${fromIcc!.matrix.map((v) => v.toFixed(4)).join(' ')})`,
  );
  t.ok(close(fromNclx!.matrix, P3_TO_SRGB, 0.002), 'so does the nclx route');
  t.ok(
    close(
      profileFromH273(12, 13).colorants,
      [0, 1, 2].flatMap((row) => DISPLAY_P3_D50.map((c) => c[row]!)),
      0.001,
    ),
    "nclx P3 colorants adapted to D50 are Apple's",
  );
  t.equal(conversionToSrgb(profileFromH273(1, 13)), null, 'BT.709 primaries with the sRGB curve are sRGB: nothing to do');
  t.equal(conversionToSrgb(profileFromH273(2, 2)), null, 'unspecified is read as sRGB');
  t.throws(() => profileFromH273(12, 16), { name: 'ProfileError', message: /transfer/ }, 'a PQ photo is not converted here');
  t.throws(() => profileFromH273(5, 13), { name: 'ProfileError', message: /primaries/ }, 'nor primaries it does not know');

  // Pixels: a saturated P3 red is beyond sRGB and clips; a skin colour inside both round-trips.
  const p3 = { width: 2, height: 1, data: new Uint8Array([255, 0, 0, 205, 143, 49]) };
  const out = convertToSrgb(p3, fromIcc!);
  t.same([...out.data.subarray(0, 3)], [255, 0, 0], 'P3 red clips to sRGB red');
  t.not(out.data[4], 143, 'an orange skin changes');
});

t.test(
  'real profiles: sRGB in v2 (a tone table) and v4 (a parametric curve) need nothing; Adobe RGB converts',
  { skip: systemProfilesMissing },
  async (t) => {
    for (const f of [SYSTEM_PROFILES.srgbV2, SYSTEM_PROFILES.srgbV4]) {
      t.equal(conversionToSrgb(parseRgbProfile(readFileSync(f))), null, `${f}: sRGB`);
    }
    for (const f of [SYSTEM_PROFILES.adobeRgbV4, SYSTEM_PROFILES.adobeRgbV2]) {
      const c = conversionToSrgb(parseRgbProfile(readFileSync(f)));
      t.ok(
        c && close(c.matrix, ADOBE_TO_SRGB, 0.003),
        `${f}: Adobe RGB → sRGB from the primaries (${c?.matrix.map((v) => v.toFixed(4)).join(' ')})`,
      );
      // Adobe RGB's curve is a pure gamma of 563/256.
      t.ok(Math.abs(c!.toLinear[0][128]! - Math.pow(128 / 255, 563 / 256)) < 1e-4, 'its tone curve is gamma 2.2');
    }
    t.throws(() => parseRgbProfile(readFileSync(SYSTEM_PROFILES.grey)), /GRAY/, 'a grey profile is not an RGB one');
  },
);

t.test('tone curves: gamma, table and the parametric kinds', async (t) => {
  t.equal(evalCurve({ kind: 'gamma', gamma: 1 }, 0.3), 0.3);
  t.ok(Math.abs(evalCurve({ kind: 'table', table: new Float64Array([0, 0.25, 1]) }, 0.25) - 0.125) < 1e-12, 'a table is interpolated');
  const srgb = { kind: 'parametric' as const, type: 3, params: [2.4, 1 / 1.055, 0.055 / 1.055, 1 / 12.92, 0.04045] };
  t.ok(Math.abs(evalCurve(srgb, 0.5) - 0.214041) < 1e-5, 'type 3 is the sRGB curve');
  t.ok(Math.abs(evalCurve(srgb, 0.02) - 0.02 / 12.92) < 1e-9, 'with its linear toe');
  t.equal(evalCurve({ kind: 'parametric', type: 0, params: [2] }, 0.5), 0.25);
  t.equal(evalCurve({ kind: 'parametric', type: 1, params: [1, 2, -1] }, 0.25), 0, 'type 1 is 0 below -b/a');
  t.equal(evalCurve({ kind: 'parametric', type: 2, params: [1, 2, -1, 0.1] }, 0.25), 0.1);
  t.ok(Math.abs(evalCurve({ kind: 'parametric', type: 4, params: [1, 1, 0, 0.5, 0.5, 0.1, 0.2] }, 0.25) - 0.325) < 1e-12);
});

t.test('hostile and broken profiles are refused with a reason, never read past their end', async (t) => {
  const good = displayP3Profile();
  const edit = (f: (b: Buffer) => void) => {
    const b = Buffer.from(good);
    f(b);
    return b;
  };
  // A gamma profile whose red curve tag says one entry but is 12 bytes long.
  const gammaCut = () => {
    const b = Buffer.from(rgbProfile(DISPLAY_P3_D50, { gamma: 2.2 }));
    b.writeUInt32BE(12, 132 + 4 * 12 + 8);
    return b;
  };
  const cases: [string, Uint8Array, RegExp][] = [
    ['shorter than a header', good.subarray(0, 100), /shorter/],
    ['no acsp signature', edit((b) => b.write('xxxx', 36, 'latin1')), /acsp/],
    ['declares more bytes than it has', edit((b) => b.writeUInt32BE(good.length + 1000, 0)), /declares/],
    ['cut short after the header', good.subarray(0, 140), /declares/],
    ['a CMYK profile', edit((b) => b.write('CMYK', 16, 'latin1')), /CMYK/],
    ['a LUT-based (Lab) profile', edit((b) => b.write('Lab ', 20, 'latin1')), /LUT/],
    ['a million tags', edit((b) => b.writeUInt32BE(1_000_000, 128)), /tags/],
    ['a tag pointing past the end', edit((b) => b.writeUInt32BE(0xfffffff0, 132 + 4)), /outside/],
    ['a colorant of the wrong type', edit((b) => b.write('curv', b.readUInt32BE(132 + 12 + 4), 'latin1')), /XYZ/],
    [
      'a curve table longer than its tag',
      edit((b) => {
        const at = b.readUInt32BE(132 + 4 * 12 + 4);
        b.write('curv', at, 'latin1');
        b.writeUInt32BE(60000, at + 8);
      }),
      /does not fit/,
    ],
    ['a one-entry curve cut before its gamma', gammaCut(), /cut short/],
    ['a parametric curve of kind 9', edit((b) => b.writeUInt16BE(9, b.readUInt32BE(132 + 4 * 12 + 4) + 8)), /unknown kind/],
    [
      'colorants that are all zero',
      rgbProfile([
        [0, 0, 0],
        [0, 0, 0],
        [0, 0, 0],
      ]),
      /span/,
    ],
    ['larger than any camera writes', Buffer.alloc(5 * 1024 * 1024), /bytes/],
  ];
  for (const [name, bytes, reason] of cases) t.throws(() => parseRgbProfile(bytes), { name: 'ProfileError', message: reason }, name);
  // Without its rXYZ tag the profile is not a matrix/TRC one.
  const noRed = edit((b) => b.write('xXYZ', 132 + 12, 'latin1'));
  t.throws(() => parseRgbProfile(noRed), /rXYZ/, 'a tag missing');
});

t.test('fuzzed profiles: every broken byte pattern either parses or is refused as a profile error', async (t) => {
  // Seeded, so a failure names a case that can be replayed.
  let seed = 12345;
  const rnd = () => (seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const base = [displayP3Profile(), rgbProfile(DISPLAY_P3_D50, { gamma: 2.2 })];
  let refused = 0,
    parsed = 0;
  const other: string[] = [];
  for (let i = 0; i < 3000; i++) {
    const b = Buffer.from(base[i % 2]!);
    for (let k = 1 + Math.floor(rnd() * 4); k > 0; k--) b[Math.floor(rnd() * b.length)] = Math.floor(rnd() * 256);
    const cut = rnd() < 0.2 ? b.subarray(0, Math.floor(rnd() * b.length)) : b;
    try {
      const p = parseRgbProfile(cut);
      conversionToSrgb(p);
      parsed++;
    } catch (err) {
      if ((err as Error).name === 'ProfileError') refused++;
      else other.push(`case ${i}: ${(err as Error).name}: ${(err as Error).message}`);
    }
  }
  t.same(other, [], `${refused} refused, ${parsed} parsed, nothing else thrown`);
  t.ok(refused > 500 && parsed > 100, 'both outcomes are reached');
});
