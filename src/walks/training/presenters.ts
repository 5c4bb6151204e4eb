import type { Readable } from 'node:stream';
import yazl from 'yazl';
import type { TrainingExport } from './queries.js';

export interface ExportMeta {
  organization_id: string;
  /** When the export was made (ISO 8601, UTC). */
  created_at: string;
}

/**
 * The export as a zip, streamed: images/<name>.jpg (the frames as stored, not re-encoded),
 * labels/<name>.txt (YOLO: class cx cy w h, normalised), classes.txt, and index.json saying where
 * every image came from (walk, frame, clip, time, the boxes and what each is: the model's, its
 * ripeness corrected, or added by staff) and which walks and frames were left out and why.
 */
export function trainingZip(exp: TrainingExport, meta: ExportMeta): Readable {
  const zip = new yazl.ZipFile();
  const mtime = new Date(meta.created_at);
  zip.addBuffer(Buffer.from(exp.classes.join('\n') + '\n'), 'classes.txt', { mtime });
  for (const f of exp.frames) {
    // JPEGs do not shrink: stored, so the zip is written as fast as the disk reads.
    zip.addFile(f.image, `images/${f.name}.jpg`, { compress: false, mtime });
    zip.addBuffer(Buffer.from(f.lines.length ? f.lines.join('\n') + '\n' : ''), `labels/${f.name}.txt`, { mtime });
  }
  const index = {
    format: 'yolo',
    classes: exp.classes,
    ...meta,
    filter: exp.filter,
    counts: {
      walks: exp.walks.length,
      images: exp.frames.length,
      boxes: exp.frames.reduce((n, f) => n + f.lines.length, 0),
      skipped_walks: exp.skipped_walks.length,
    },
    walks: exp.walks,
    skipped_walks: exp.skipped_walks,
    images: exp.frames.map((f) => ({
      image: `images/${f.name}.jpg`,
      label: `labels/${f.name}.txt`,
      walk_id: f.walk_id,
      frame: f.frame,
      clip: f.clip,
      time_s: f.time_s,
      width: f.width,
      height: f.height,
      boxes: f.boxes,
    })),
  };
  zip.addBuffer(Buffer.from(JSON.stringify(index, null, 1)), 'index.json', { mtime });
  zip.end();
  return zip.outputStream as Readable;
}
