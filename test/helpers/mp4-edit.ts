// Edits a real MP4's boxes (ISO/IEC 14496-12) to make what phones send and ffmpeg 5.1 cannot write:
// a Dolby Vision configuration box (dvcC / dvvC, Dolby's "Dolby Vision streams within the ISO base
// media file format") in the HEVC sample entry, as a Dolby Vision camera or encoder writes it.

interface Box {
  type: string;
  start: number;
  size: number;
}

function readBoxes(b: Buffer, start: number, end: number): Box[] {
  const out: Box[] = [];
  for (let at = start; at + 8 <= end; ) {
    const size = b.readUInt32BE(at);
    if (size < 8 || at + size > end) throw new Error(`box at ${at}: 64-bit or broken sizes are not edited here`);
    out.push({ type: b.toString('latin1', at + 4, at + 8), start: at, size });
    at += size;
  }
  return out;
}

function find(list: Box[], type: string): Box {
  const box = list.find((x) => x.type === type);
  if (!box) throw new Error(`no ${type} box`);
  return box;
}

const inside = (b: Buffer, box: Box, skip = 0) => readBoxes(b, box.start + 8 + skip, box.start + box.size);

export interface DolbyVisionConfig {
  /** 5: IPTPQc2 base layer, no compatible one; 8: a base layer in HDR10, SDR or HLG. */
  profile: number;
  level?: number;
  /** dv_bl_signal_compatibility_id: 0 none, 1 HDR10, 2 SDR, 4 HLG. */
  compatibility: number;
}

/**
 * The MP4 (HEVC, its moov after its mdat, as ffmpeg writes it) with a Dolby Vision
 * configuration box appended to the first video sample entry: dvcC for profiles up to 7, dvvC
 * after. Chunk offsets stay valid since nothing before the mdat moves.
 */
export function withDolbyVision(mp4: Buffer, dv: DolbyVisionConfig): Buffer {
  const top = readBoxes(mp4, 0, mp4.length);
  const moov = find(top, 'moov');
  if (moov.start < find(top, 'mdat').start) throw new Error('moov before mdat: chunk offsets would move');
  const trak = inside(mp4, moov).filter((x) => x.type === 'trak').find((t) => {
    const hdlr = find(inside(mp4, find(inside(mp4, t), 'mdia')), 'hdlr');
    return mp4.toString('latin1', hdlr.start + 16, hdlr.start + 20) === 'vide';
  });
  if (!trak) throw new Error('no video track');
  const mdia = find(inside(mp4, trak), 'mdia');
  const minf = find(inside(mp4, mdia), 'minf');
  const stbl = find(inside(mp4, minf), 'stbl');
  const stsd = find(inside(mp4, stbl), 'stsd');
  // stsd: version and flags, an entry count, then the entries; a visual sample entry has 78 bytes of fields before its boxes.
  const entry = inside(mp4, stsd, 8)[0];
  if (!entry || !['hvc1', 'hev1', 'dvh1', 'dvhe'].includes(entry.type)) throw new Error('not an HEVC sample entry');

  const body = Buffer.alloc(24);
  body[0] = 1; // dv_version_major
  body[1] = 0;
  const level = dv.level ?? 6;
  // dv_profile (7 bits), dv_level (6), rpu_present_flag, el_present_flag, bl_present_flag.
  body.writeUInt16BE((dv.profile << 9) | (level << 3) | 0b101, 2);
  body[4] = dv.compatibility << 4;
  const box = Buffer.alloc(8);
  box.writeUInt32BE(8 + body.length, 0);
  box.write(dv.profile > 7 ? 'dvvC' : 'dvcC', 4, 'latin1');
  const added = Buffer.concat([box, body]);

  const out = Buffer.concat([mp4.subarray(0, entry.start + entry.size), added, mp4.subarray(entry.start + entry.size)]);
  for (const parent of [entry, stsd, stbl, minf, mdia, trak, moov]) out.writeUInt32BE(parent.size + added.length, parent.start);
  return out;
}
