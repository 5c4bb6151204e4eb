export { resolveFfmpeg, requireFfmpeg, type FfmpegResolution, type ToolInfo, type ToolSource } from './ffmpeg-path.js';
export { sniffMediaType, SNIFF_BYTES, type SniffedMedia, type MediaFormat } from './sniff.js';
export { probeMedia, type MediaInfo, MAX_PIXELS } from './probe.js';
export {
  decodeFrames,
  decodeImage,
  workingSize,
  DEFAULT_SAMPLE_SECONDS,
  DEFAULT_MAX_FRAMES,
  DEFAULT_MAX_LONG_SIDE,
  type DecodeOptions,
  type DecodedFrame,
} from './decode.js';
export { encodeJpeg } from './encode.js';
export { MediaError, type MediaErrorCode } from './errors.js';
export { readJpegOrientation, orientationRotation } from './exif.js';
