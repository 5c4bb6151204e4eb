/**
 * Why a media operation failed, in words an upload answer or /api/health can
 * show. `code` is stable and snake_case so the HTTP layer can map it to a
 * problem+json answer (unsupported_media → 415/422, media_unavailable → 503).
 */
export type MediaErrorCode = 'media_unavailable' | 'unsupported_media' | 'decode_failed' | 'encode_failed' | 'aborted';

export class MediaError extends Error {
  readonly code: MediaErrorCode;
  /** ffmpeg's / ffprobe's own words, when the tool said something. */
  readonly reason?: string;

  constructor(code: MediaErrorCode, message: string, reason?: string) {
    super(reason ? `${message}: ${reason}` : message);
    this.name = 'MediaError';
    this.code = code;
    this.reason = reason;
  }
}

// ffmpeg's aftermath of an error already said: it adds nothing a person could act on.
const AFTERMATH = [
  /^Error marking filters as finished$/,
  /^Last message repeated \d+ times?$/,
  /^Cannot determine format of input stream .* after EOF$/,
  /^Conversion failed!$/,
];

/**
 * The last meaningful lines of a tool's stderr, as an upload's refusal or a failed walk shows
 * them: without ffmpeg's banner noise, its "[demuxer @ 0x…]" context (a memory address), and the
 * server's path of the input (`input`: the file as the tool was given it), which a client must
 * not learn from an error.
 */
export function tailReason(stderr: string, input?: string, maxChars = 400): string {
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const raw of stderr.split(/\r?\n/)) {
    let line = raw.replace(/^\[[^\]]* @ 0x[0-9a-f]+\]\s*/i, '').trim();
    if (input) line = line.split(`file:${input}`).join('the file').split(input).join('the file');
    if (line.length === 0 || AFTERMATH.some((r) => r.test(line)) || seen.has(line)) continue;
    seen.add(line);
    lines.push(line);
  }
  let text = lines.slice(-4).join('; ');
  if (text.length > maxChars) text = '…' + text.slice(text.length - maxChars);
  return text;
}
