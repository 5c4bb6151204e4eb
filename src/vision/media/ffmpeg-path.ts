import { execFile } from 'node:child_process';
import { MediaError } from './errors.js';

/**
 * Where ffmpeg and ffprobe come from, decided once per process as the design
 * card says: FFMPEG_PATH / FFPROBE_PATH, else the ffmpeg-static package's
 * binary when that optional package installed, else the names on PATH.
 */
export type ToolSource = 'env' | 'ffmpeg-static' | 'path';

export interface ToolInfo {
  path: string;
  source: ToolSource;
  /** First line of `-version`, e.g. "ffmpeg version 5.1.9-0+deb12u1". */
  version: string;
}

export type FfmpegResolution =
  { available: true; ffmpeg: ToolInfo; ffprobe: ToolInfo } | { available: false; reason: string; ffmpeg?: ToolInfo; ffprobe?: ToolInfo };

let cached: Promise<FfmpegResolution> | undefined;

/** Resolved once and cached; `refresh` re-runs the search (tests, health after an install). */
export function resolveFfmpeg(options: { refresh?: boolean } = {}): Promise<FfmpegResolution> {
  if (!cached || options.refresh) cached = resolveNow();
  return cached;
}

/** The two binary paths; throws MediaError('media_unavailable') with the reason when missing. */
export async function requireFfmpeg(): Promise<{ ffmpeg: string; ffprobe: string }> {
  const r = await resolveFfmpeg();
  if (!r.available) {
    throw new MediaError('media_unavailable', 'ffmpeg is not available', r.reason);
  }
  return { ffmpeg: r.ffmpeg.path, ffprobe: r.ffprobe.path };
}

async function resolveNow(): Promise<FfmpegResolution> {
  const candidatesFfmpeg: Array<{ path: string; source: ToolSource }> = [];
  const candidatesFfprobe: Array<{ path: string; source: ToolSource }> = [];
  const envFfmpeg = process.env.FFMPEG_PATH?.trim();
  const envFfprobe = process.env.FFPROBE_PATH?.trim();
  if (envFfmpeg) candidatesFfmpeg.push({ path: envFfmpeg, source: 'env' });
  if (envFfprobe) candidatesFfprobe.push({ path: envFfprobe, source: 'env' });
  const fromPackage = await staticBinary('ffmpeg-static');
  if (fromPackage) candidatesFfmpeg.push({ path: fromPackage, source: 'ffmpeg-static' });
  // ffmpeg-static ships no ffprobe; its sibling package does, when installed.
  const probeFromPackage = await staticBinary('ffprobe-static');
  if (probeFromPackage) candidatesFfprobe.push({ path: probeFromPackage, source: 'ffmpeg-static' });
  candidatesFfmpeg.push({ path: 'ffmpeg', source: 'path' });
  candidatesFfprobe.push({ path: 'ffprobe', source: 'path' });

  const [ffmpeg, ffprobe] = await Promise.all([firstWorking(candidatesFfmpeg), firstWorking(candidatesFfprobe)]);
  const reasons: string[] = [];
  if ('error' in ffmpeg) reasons.push(`ffmpeg: ${ffmpeg.error}`);
  if ('error' in ffprobe) reasons.push(`ffprobe: ${ffprobe.error}`);
  if ('error' in ffmpeg || 'error' in ffprobe) {
    return {
      available: false,
      reason: reasons.join('; ') + ' (install the ffmpeg package, or set FFMPEG_PATH and FFPROBE_PATH)',
      ffmpeg: 'error' in ffmpeg ? undefined : ffmpeg,
      ffprobe: 'error' in ffprobe ? undefined : ffprobe,
    };
  }
  return { available: true, ffmpeg, ffprobe };
}

async function staticBinary(pkg: string): Promise<string | undefined> {
  try {
    const mod: unknown = await import(pkg);
    const value = (mod as { default?: unknown }).default ?? mod;
    if (typeof value === 'string') return value;
    // ffprobe-static exports { path }.
    if (value && typeof (value as { path?: unknown }).path === 'string') return (value as { path: string }).path;
  } catch {
    // Optional package: absent is the normal case on a Debian box.
  }
  return undefined;
}

async function firstWorking(candidates: Array<{ path: string; source: ToolSource }>): Promise<ToolInfo | { error: string }> {
  const errors: string[] = [];
  for (const c of candidates) {
    try {
      const version = await versionOf(c.path);
      return { path: c.path, source: c.source, version };
    } catch (err) {
      errors.push(`${c.path} (${c.source}): ${(err as Error).message}`);
      // An explicit env path that does not work is a configuration mistake: say so, do not fall through silently.
      if (c.source === 'env') return { error: errors.join('; ') };
    }
  }
  return { error: errors.join('; ') };
}

function versionOf(binary: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(binary, ['-hide_banner', '-version'], { timeout: 10_000 }, (err, stdout) => {
      if (err) {
        const code = (err as NodeJS.ErrnoException).code;
        reject(new Error(code === 'ENOENT' ? 'not found' : err.message.split('\n')[0]));
        return;
      }
      const first = stdout.split('\n')[0]?.trim() ?? '';
      if (!/version/i.test(first)) reject(new Error(`unexpected -version output: ${first.slice(0, 80)}`));
      else resolve(first.replace(/\s+Copyright.*$/, ''));
    });
  });
}
