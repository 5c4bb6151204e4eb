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

/** The last meaningful lines of a tool's stderr, without ffmpeg's banner noise. */
export function tailReason(stderr: string, maxChars = 400): string {
  const lines = stderr
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0);
  let text = lines.slice(-4).join('; ');
  if (text.length > maxChars) text = '…' + text.slice(text.length - maxChars);
  return text;
}
