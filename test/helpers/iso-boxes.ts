// Reading the box tree of an ISO base media file (MP4, MOV, HEIF), for the helpers that edit real
// files into the variants phones and attackers send (heif-edit.ts, mp4-edit.ts).

export interface Box {
  type: string;
  start: number;
  size: number;
  /** Bytes before the payload: 8, or 16 with a 64-bit size. */
  header: number;
}

export function readBoxes(b: Buffer, start: number, end: number): Box[] {
  const out: Box[] = [];
  for (let at = start; at + 8 <= end;) {
    let size = b.readUInt32BE(at);
    let header = 8;
    if (size === 1) {
      size = Number(b.readBigUInt64BE(at + 8));
      header = 16;
    } else if (size === 0) size = end - at;
    if (size < header || at + size > end) throw new Error(`bad box at ${at}`);
    out.push({ type: b.toString('latin1', at + 4, at + 8), start: at, size, header });
    at += size;
  }
  return out;
}

/** Children of a box; `skip` bytes of fields come first (4 for a FullBox's version and flags). */
export function children(b: Buffer, box: Box, skip = 0): Box[] {
  return readBoxes(b, box.start + box.header + skip, box.start + box.size);
}

export function find(list: Box[], type: string): Box {
  const box = list.find((x) => x.type === type);
  if (!box) throw new Error(`no ${type} box`);
  return box;
}
