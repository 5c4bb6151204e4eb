// Edits a real MP4's boxes (ISO/IEC 14496-12) to make what phones send and ffmpeg 5.1 cannot write:
// a Dolby Vision configuration box (dvcC / dvvC, Dolby's "Dolby Vision streams within the ISO base
// media file format") in the HEVC sample entry, as a Dolby Vision camera or encoder writes it.
import { children, find, readBoxes } from './iso-boxes.js';

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
  const trak = children(mp4, moov)
    .filter((x) => x.type === 'trak')
    .find((t) => {
      const hdlr = find(children(mp4, find(children(mp4, t), 'mdia')), 'hdlr');
      return mp4.toString('latin1', hdlr.start + 16, hdlr.start + 20) === 'vide';
    });
  if (!trak) throw new Error('no video track');
  const mdia = find(children(mp4, trak), 'mdia');
  const minf = find(children(mp4, mdia), 'minf');
  const stbl = find(children(mp4, minf), 'stbl');
  const stsd = find(children(mp4, stbl), 'stsd');
  // stsd: version and flags, an entry count, then the entries; a visual sample entry has 78 bytes of fields before its boxes.
  const entry = children(mp4, stsd, 8)[0];
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
  for (const parent of [entry, stsd, stbl, minf, mdia, trak, moov]) {
    if (parent.header !== 8) throw new Error(`${parent.type}: 64-bit box sizes are not edited here`);
    out.writeUInt32BE(parent.size + added.length, parent.start);
  }
  return out;
}
