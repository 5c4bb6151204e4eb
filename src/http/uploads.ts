import { createWriteStream, mkdirSync } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import type { Context } from 'koa';
import multerModule from '@koa/multer';
import { newId } from '../db/ids.js';
import { DomainError, Invalid, Refused, StorageFull, TooLarge, UnsupportedMedia, isStorageFull } from '../errors.js';
import type { MultipartSpec, RawBodySpec, UploadedFile } from './route.js';

const multer = multerModule as unknown as any;

/**
 * Uploads stream to disk under DATA_DIR/uploads/incoming with names the box
 * makes (never the client's), under a size cap checked while streaming, and are
 * removed after the request unless the handler moved them somewhere permanent.
 */
export function incomingDir(dataDir: string): string {
  const dir = path.join(dataDir, 'uploads', 'incoming');
  mkdirSync(dir, { recursive: true });
  return dir;
}

/**
 * At start, before any request: what is still in the incoming folder was being received when the
 * box stopped without cleaning up (kill -9, a power cut), since every request removes its own
 * uploads or moves them away. Nothing will ever claim it.
 */
export async function clearIncoming(dataDir: string): Promise<{ files: number; bytes: number }> {
  const dir = incomingDir(dataDir);
  let files = 0;
  let bytes = 0;
  for (const name of await readdir(dir)) {
    const file = path.join(dir, name);
    bytes += await stat(file).then(
      (s) => s.size,
      () => 0,
    );
    await rm(file, { recursive: true, force: true });
    files++;
  }
  return { files, bytes };
}

function mapMulterError(err: any, limit: number, spec: MultipartSpec): DomainError {
  if (isStorageFull(err)) return new StorageFull();
  switch (err?.code) {
    case 'LIMIT_FILE_SIZE':
      return new TooLarge(limit);
    case 'LIMIT_FILE_COUNT':
    case 'LIMIT_UNEXPECTED_FILE': {
      // busboy's file-count error carries no field name: with a single file field it can only be that one.
      const name = err.field ?? (spec.files.length === 1 ? spec.files[0]!.name : 'file');
      const max = spec.files.find((f) => f.name === name)?.maxCount;
      const expected = spec.files.map((f) => `"${f.name}" (${f.maxCount === 1 ? 'one file' : `up to ${f.maxCount} files`})`).join(' or ');
      const message = max
        ? `more than ${max} file${max === 1 ? '' : 's'} in this field`
        : `is not a file field of this operation, which takes ${expected || 'no file'}`;
      return new Invalid([{ in: 'body', name, message }], `${name}: ${message}`);
    }
    case 'LIMIT_FIELD_VALUE':
    case 'LIMIT_FIELD_COUNT':
    case 'LIMIT_FIELD_KEY':
    case 'LIMIT_PART_COUNT':
      return new TooLarge(null, 'A form field is too large, or there are too many fields.');
    default:
      return new Refused('malformed_multipart', `The multipart body could not be read: ${err?.message ?? 'unknown error'}.`);
  }
}

export async function receiveMultipart(
  ctx: Context,
  spec: MultipartSpec,
  dataDir: string,
): Promise<{ fields: Record<string, unknown>; files: UploadedFile[] }> {
  if (!ctx.is('multipart/form-data')) {
    throw new UnsupportedMedia('This operation takes a multipart/form-data body.');
  }
  const limit = spec.limitBytes(ctx);
  const dir = incomingDir(dataDir);
  const upload = multer({
    storage: multer.diskStorage({
      destination: dir,
      filename: (_req: unknown, _file: unknown, cb: (e: null, n: string) => void) => cb(null, newId()),
    }),
    limits: { fileSize: limit, files: spec.files.reduce((n, f) => n + f.maxCount, 0), fields: 50, fieldSize: 256 * 1024, parts: 100 },
  }).fields(spec.files.map((f) => ({ name: f.name, maxCount: f.maxCount })));
  try {
    await upload(ctx, async () => undefined);
  } catch (err) {
    throw mapMulterError(err, limit, spec);
  }
  const byField = (ctx.request as any).files as Record<string, UploadedFile[]> | undefined;
  const files: UploadedFile[] = [];
  for (const f of spec.files) for (const file of byField?.[f.name] ?? []) files.push(file);
  ctx.state.uploadedFiles = files;
  const fields = { ...((ctx.request as any).body ?? {}) } as Record<string, unknown>;
  return { fields, files };
}

/** Spools a raw request body (e.g. a climate file posted by a script) to disk under the cap. */
export async function receiveRawBody(ctx: Context, spec: RawBodySpec, dataDir: string): Promise<UploadedFile> {
  const limit = spec.limitBytes(ctx);
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limit) throw new TooLarge(limit);
  const file = path.join(incomingDir(dataDir), newId());
  const out = createWriteStream(file, { mode: 0o600 });
  let size = 0;
  const uploaded: UploadedFile = {
    fieldname: 'body',
    originalname: ctx.get('x-file-name') || 'upload',
    path: file,
    size: 0,
    mimetype: ctx.get('content-type') || 'application/octet-stream',
  };
  ctx.state.uploadedFiles = [uploaded];
  await new Promise<void>((resolve, reject) => {
    ctx.req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        ctx.req.unpipe(out);
        ctx.req.pause();
        out.destroy();
        reject(new TooLarge(limit));
        return;
      }
    });
    // A client gone mid-body (a cut link) is no fault of the box's: a 400 it will not read, not a 500 in the log.
    const gone = () => {
      out.destroy();
      reject(new Refused('request_aborted', 'The request body ended before its end.'));
    };
    ctx.req.on('aborted', gone);
    ctx.req.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNRESET' || err.message === 'aborted' ? gone() : reject(err)));
    out.on('error', reject);
    out.on('finish', () => resolve());
    ctx.req.pipe(out);
  });
  uploaded.size = size;
  return uploaded;
}

export async function cleanupUploads(ctx: Context): Promise<void> {
  const files = (ctx.state.uploadedFiles ?? []) as UploadedFile[];
  await Promise.all(files.map((f) => rm(f.path, { force: true })));
}
