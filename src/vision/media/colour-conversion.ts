import { execFile } from 'node:child_process';

/**
 * Phones film in HDR by default: iPhones since the 12 record HLG in BT.2020 (Dolby Vision 8.4),
 * many Android phones HDR10 (PQ). Read as if it were sRGB, such a clip comes out dark and washed
 * out, and its hues turn: on a card of tomato skin colours a red loses half its CIELAB chroma
 * and moves 5–11° towards orange, a turning skin 9–15° towards yellow, and on a rendered row
 * most red fruit go uncounted (test/walks/hdr.test.ts). Ripeness is read from that hue,
 * so those clips are converted to sRGB first.
 */
export type ColourConversion = 'pq' | 'hlg' | 'bt2020';

/**
 * Whether a clip's colours are Dolby Vision's own: a base layer with no compatible standard
 * picture (compatibility id 0, as in profile 5), stored in IPTPQc2 and made viewable only by the
 * reshaping in its metadata, which ffmpeg 5.1 does not apply. Decoded, its skins come out in
 * false colours, so such a clip cannot be converted. Profiles 8.1, 8.2 and 8.4 (an iPhone's)
 * carry an HDR10, SDR or HLG base layer tagged as such, and are read by those tags.
 */
export function isDolbyVisionOnly(dolbyVision: { compatibility: number } | null | undefined): boolean {
  return dolbyVision != null && dolbyVision.compatibility === 0;
}

/** What conversion a stream's colour tags (ffprobe's color_transfer, color_primaries) call for; null for sRGB/BT.709 and untagged video. */
export function colourConversionFor(transfer: string | null, primaries: string | null): ColourConversion | null {
  if (transfer === 'smpte2084') return 'pq';
  if (transfer === 'arib-std-b67') return 'hlg';
  if (primaries === 'bt2020') return 'bt2020';
  return null;
}

/**
 * BT.2408's reference white: graphics white, and the diffuse white of an HDR scene, sit at
 * 203 cd/m² for both PQ and HLG. zscale's nominal peak set to it maps that white to 1.0 in linear
 * light, where SDR white is.
 */
export const REFERENCE_WHITE_NITS = 203;

/**
 * The ffmpeg filters that turn an HDR or BT.2020 frame into sRGB: to linear light, BT.2020
 * primaries to BT.709 in float, then the sRGB transfer in full range. Everything up to
 * reference white comes out as an SDR camera would have recorded it. Highlights above it are
 * clipped as an SDR camera clips them, but by the tonemap filter, which scales R, G and B of a
 * pixel by one factor, so a sunlit fruit keeps its hue (clipped channel by channel, a red
 * at three times reference white turns 1° towards orange and loses chroma). A roll-off curve
 * (Möbius, Hable) was tried and left: it darkens skin below reference white too, and the
 * detector's colour thresholds were set on SDR photos (a rendered row lost a third of its
 * turning fruit to green and red that way). Placed after the scale filter, the float stages
 * run on working-size frames only. zscale reads the input's colour from the frame's tags and
 * refuses a frame with one missing ("no path between colorspaces"); a clip tagged HLG but not
 * with its matrix would then fail to decode, so what the clip leaves out is given: the BT.2020
 * matrix and primaries an HDR clip is made in, limited range, and for BT.2020 SDR the BT.709
 * transfer (the same curve as BT.2020's).
 */
export function colourConversionFilters(tags: ColourTags): string[] {
  const missing = [
    tags.transfer ? '' : 'transferin=bt709:',
    tags.primaries ? '' : 'primariesin=bt2020:',
    tags.matrix ? '' : 'matrixin=bt2020nc:',
    tags.range ? '' : 'rangein=tv:',
  ].join('');
  return [
    `zscale=${missing}transfer=linear:npl=${REFERENCE_WHITE_NITS}`,
    'format=gbrpf32le',
    'zscale=primaries=bt709',
    'tonemap=tonemap=clip:desat=0',
    'zscale=transfer=iec61966-2-1:matrix=bt709:range=full',
    'format=gbrp',
  ];
}

/** A stream's colour tags as probeMedia reports them (null: untagged). */
export interface ColourTags {
  transfer: string | null;
  primaries: string | null;
  matrix: string | null;
  range: string | null;
}

const NEEDED_FILTERS = ['zscale', 'tonemap'] as const;
const known = new Map<string, Promise<boolean>>();

/**
 * Whether this ffmpeg has the filters for the conversion: zscale needs a build with libzimg
 * (Debian's, Ubuntu's and the static builds have it; a minimal build may not). Asked once per
 * binary.
 */
export function canConvertColour(ffmpeg: string): Promise<boolean> {
  let answer = known.get(ffmpeg);
  if (!answer) {
    answer = new Promise<boolean>((resolve) => {
      execFile(ffmpeg, ['-hide_banner', '-filters'], { timeout: 15_000, maxBuffer: 4 * 1024 * 1024 }, (error, stdout) => {
        if (error) return resolve(false);
        resolve(NEEDED_FILTERS.every((name) => filterListed(stdout, name)));
      });
    });
    known.set(ffmpeg, answer);
  }
  return answer;
}

/** `ffmpeg -filters` lists one filter per line: flags, name, pads, description. */
export function filterListed(listing: string, name: string): boolean {
  return listing.split('\n').some((line) => line.trim().split(/\s+/)[1] === name);
}
