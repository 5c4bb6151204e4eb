import { open } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type { RgbImage } from '../types.js';
import { MediaError } from './errors.js';

/**
 * HEIF photos. An iPhone's camera saves HEIC (HEVC in HEIF) by default, and ffmpeg 5.1 (Debian 12's)
 * cannot read HEIF images, so these are read with libheif compiled to WebAssembly (libheif-js):
 * no native build, nothing to install on the box. libheif applies the image's rotation and mirror
 * properties while decoding and converts to RGB by the image's own colour matrix.
 */

/** Brands of HEVC-coded HEIF images and image sequences; AVIF ('avif', 'avis') is HEIF too but AV1, which this libheif build cannot decode. */
export const HEIC_BRANDS: ReadonlySet<string> = new Set(['heic', 'heix', 'heim', 'heis', 'hevc', 'hevx']);

/** Above this a HEIF file is refused before it is read into memory: a 48-megapixel iPhone HEIC is about 10 MB. */
export const MAX_HEIF_BYTES = 64 * 1024 * 1024;

/** An enum value of the binding: compared by identity. */
type HeifEnum = object;
/** Contexts, image handles and images are binding objects. */
type HeifObject = object;
interface HeifError {
  code: HeifEnum;
  message?: string;
}
interface HeifChannel {
  id: number;
  data: Uint8Array;
  stride: number;
  width: number;
  height: number;
}
interface DecodedHeif extends Partial<HeifError> {
  image?: HeifObject;
  channels?: HeifChannel[];
}
/** The part of libheif's emscripten binding (libheif-wasm/libheif.d.ts) used here. */
interface LibHeif {
  heif_context_alloc(): HeifObject | null;
  heif_context_free(ctx: HeifObject): void;
  heif_context_read_from_memory(ctx: HeifObject, data: Uint8Array): HeifError;
  /** The handle, or an error (an object with a code). */
  heif_js_context_get_primary_image_handle(ctx: HeifObject): HeifObject | HeifError | null;
  heif_image_handle_get_width(handle: HeifObject): number;
  heif_image_handle_get_height(handle: HeifObject): number;
  heif_image_handle_release(handle: HeifObject): void;
  heif_js_decode_image2(handle: HeifObject, colorspace: HeifEnum, chroma: HeifEnum): DecodedHeif | Promise<DecodedHeif>;
  heif_image_release(image: HeifObject): void;
  heif_error_code: { heif_error_Ok: HeifEnum };
  heif_colorspace: { heif_colorspace_RGB: HeifEnum };
  heif_chroma: { heif_chroma_interleaved_RGB: HeifEnum };
  heif_channel: { heif_channel_interleaved: number };
}

let loaded: LibHeif | null = null;
/** Loaded on first use (about 0.1 s): a box that never sees a HEIF photo never pays for it. */
function libheif(): LibHeif {
  loaded ??= createRequire(import.meta.url)('libheif-js/wasm-bundle') as LibHeif;
  return loaded;
}

/**
 * Runs `use` on the primary image of a HEIF file, given its size as displayed (after its rotation)
 * once checked against `maxPixels`. Everything that goes wrong is a MediaError: the binding throws
 * plain errors on some malformed input, whose stack holds the whole bundle, so only the message is kept.
 */
async function withPrimaryImage<T>(file: string, maxPixels: number, use: (lib: LibHeif, handle: HeifObject) => Promise<T> | T): Promise<T> {
  const data = await readCapped(file);
  try {
    return await readPrimaryImage(data, maxPixels, use);
  } catch (err) {
    if (err instanceof MediaError) throw err;
    throw new MediaError('unsupported_media', 'not a HEIF image libheif can read', err instanceof Error ? err.message : String(err));
  }
}

async function readPrimaryImage<T>(
  data: Uint8Array,
  maxPixels: number,
  use: (lib: LibHeif, handle: HeifObject) => Promise<T> | T,
): Promise<T> {
  const lib = libheif();
  const ctx = lib.heif_context_alloc();
  if (!ctx) throw new MediaError('decode_failed', 'libheif could not allocate a context');
  try {
    const read = lib.heif_context_read_from_memory(ctx, data);
    if (read.code !== lib.heif_error_code.heif_error_Ok)
      throw new MediaError('unsupported_media', 'not a HEIF image libheif can read', read.message);
    const handle = lib.heif_js_context_get_primary_image_handle(ctx);
    if (!handle || 'code' in handle) {
      throw new MediaError(
        'unsupported_media',
        'the HEIF file holds no primary image',
        handle && 'code' in handle ? handle.message : undefined,
      );
    }
    try {
      const width = lib.heif_image_handle_get_width(handle),
        height = lib.heif_image_handle_get_height(handle);
      if (!(width > 0 && height > 0)) throw new MediaError('unsupported_media', `the HEIF file holds a picture of ${width}×${height}`);
      // A decompression bomb declares a huge size in a small file: refused before any pixel is decoded.
      if (width * height > maxPixels)
        throw new MediaError('unsupported_media', `picture of ${width}×${height} is larger than this appliance scores`);
      return await use(lib, handle);
    } finally {
      lib.heif_image_handle_release(handle);
    }
  } finally {
    lib.heif_context_free(ctx);
  }
}

async function readCapped(file: string): Promise<Uint8Array> {
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    if (size > MAX_HEIF_BYTES)
      throw new MediaError('unsupported_media', `HEIF photo of ${size} bytes is larger than this appliance reads (${MAX_HEIF_BYTES})`);
    const buf = new Uint8Array(size);
    const { bytesRead } = await fh.read(buf, 0, size, 0);
    return buf.subarray(0, bytesRead);
  } finally {
    await fh.close();
  }
}

/** The displayed size of a HEIF photo's primary image, read from its container without decoding pixels; at most `maxPixels`. */
export async function probeHeif(file: string, maxPixels: number): Promise<{ width: number; height: number }> {
  return withPrimaryImage(file, maxPixels, (lib, handle) => ({
    width: lib.heif_image_handle_get_width(handle),
    height: lib.heif_image_handle_get_height(handle),
  }));
}

/** The primary image as RGB, upright; its declared size is checked against `maxPixels` first. */
export async function decodeHeif(file: string, maxPixels: number): Promise<RgbImage> {
  return withPrimaryImage(file, maxPixels, async (lib, handle) => {
    const decoded = await lib.heif_js_decode_image2(
      handle,
      lib.heif_colorspace.heif_colorspace_RGB,
      lib.heif_chroma.heif_chroma_interleaved_RGB,
    );
    if (!decoded || decoded.code !== undefined || !decoded.channels)
      throw new MediaError('decode_failed', 'libheif could not decode this HEIF image', decoded?.message);
    try {
      const plane = decoded.channels.find((c) => c.id === lib.heif_channel.heif_channel_interleaved);
      if (!plane || plane.width < 1 || plane.height < 1 || plane.stride < plane.width * 3)
        throw new MediaError('decode_failed', 'libheif gave no RGB plane for this HEIF image');
      // Rows may be padded (stride); the pipeline's images are packed RGB.
      const out = new Uint8Array(plane.width * plane.height * 3);
      for (let y = 0; y < plane.height; y++)
        out.set(plane.data.subarray(y * plane.stride, y * plane.stride + plane.width * 3), y * plane.width * 3);
      return { width: plane.width, height: plane.height, data: out };
    } finally {
      if (decoded.image) lib.heif_image_release(decoded.image);
    }
  });
}
