// Pure: the picture size an H.264 or HEVC sequence parameter set declares, for the media server's
// input bounds (lib/live/bounds.ts). Written here rather than taken from node-media-server's
// sps_info.js because the input is an encoder's (hostile) bytes: its H.264 parser loops over an
// unbounded `num_ref_frames_in_pic_order_cnt_cycle` (2^32 iterations from a 10-byte SPS). Every
// loop here is bounded by the spec's own limits and every read past the end fails.

class Bits {
  private pos = 0;
  constructor(private readonly b: Buffer) {}
  bits(n: number): number {
    let v = 0;
    for (let i = 0; i < n; i++) {
      const byte = this.pos >> 3;
      if (byte >= this.b.length) throw new RangeError('sps: past the end');
      v = v * 2 + ((this.b[byte] >> (7 - (this.pos & 7))) & 1);
      this.pos++;
    }
    return v;
  }
  flag(): boolean {
    return this.bits(1) === 1;
  }
  ue(): number {
    let zeros = 0;
    while (this.bits(1) === 0) if (++zeros > 31) throw new RangeError('sps: exp-golomb too long');
    return 2 ** zeros - 1 + this.bits(zeros);
  }
  se(): number {
    const k = this.ue();
    return k % 2 === 0 ? -(k / 2) : (k + 1) / 2;
  }
}

/** The NAL unit without emulation-prevention bytes (00 00 03 → 00 00). */
function rbsp(nal: Buffer): Buffer {
  const out = Buffer.alloc(nal.length);
  let n = 0;
  let zeros = 0;
  for (const byte of nal) {
    if (zeros >= 2 && byte === 3) {
      zeros = 0;
      continue;
    }
    zeros = byte === 0 ? zeros + 1 : 0;
    out[n++] = byte;
  }
  return out.subarray(0, n);
}

export interface PictureSize {
  width: number;
  height: number;
}

const HIGH_PROFILES = new Set([100, 110, 122, 244, 44, 83, 86, 118, 128, 138, 139, 134, 135]);

/** ITU-T H.264 7.3.2.1.1, from the NAL header byte on; null when it does not parse. */
export function h264SpsSize(nal: Buffer): PictureSize | null {
  try {
    const r = new Bits(rbsp(nal.subarray(0, 1024)));
    if ((r.bits(8) & 0x1f) !== 7) return null;
    const profile = r.bits(8);
    r.bits(16); // constraint flags, level
    r.ue(); // seq_parameter_set_id
    let chroma = 1;
    if (HIGH_PROFILES.has(profile)) {
      chroma = r.ue();
      if (chroma > 3) return null;
      if (chroma === 3) r.flag(); // separate_colour_plane_flag
      r.ue(); // bit depths
      r.ue();
      r.flag(); // qpprime_y_zero_transform_bypass_flag
      if (r.flag()) {
        for (let i = 0; i < (chroma === 3 ? 12 : 8); i++) {
          if (!r.flag()) continue;
          let last = 8;
          let next = 8;
          for (let j = 0; j < (i < 6 ? 16 : 64); j++) {
            if (next !== 0) next = (last + r.se() + 256) % 256;
            last = next === 0 ? last : next;
          }
        }
      }
    }
    r.ue(); // log2_max_frame_num_minus4
    const pocType = r.ue();
    if (pocType === 0) r.ue();
    else if (pocType === 1) {
      r.flag();
      r.se();
      r.se();
      const cycle = r.ue();
      if (cycle > 255) return null;
      for (let i = 0; i < cycle; i++) r.se();
    } else if (pocType !== 2) return null;
    r.ue(); // max_num_ref_frames
    r.flag(); // gaps_in_frame_num_value_allowed_flag
    const mbsWide = r.ue() + 1;
    const mapUnitsHigh = r.ue() + 1;
    const frameMbsOnly = r.flag() ? 1 : 0;
    if (!frameMbsOnly) r.flag();
    r.flag(); // direct_8x8_inference_flag
    let crop = [0, 0, 0, 0];
    if (r.flag()) crop = [r.ue(), r.ue(), r.ue(), r.ue()];
    const cropX = chroma === 1 || chroma === 2 ? 2 : 1;
    const cropY = (chroma === 1 ? 2 : 1) * (2 - frameMbsOnly);
    const width = mbsWide * 16 - cropX * (crop[0] + crop[1]);
    const height = (2 - frameMbsOnly) * mapUnitsHigh * 16 - cropY * (crop[2] + crop[3]);
    return width > 0 && height > 0 ? { width, height } : null;
  } catch {
    return null;
  }
}

/** ITU-T H.265 7.3.2.2.1, from the two-byte NAL header on; null when it does not parse. */
export function hevcSpsSize(nal: Buffer): PictureSize | null {
  try {
    const r = new Bits(rbsp(nal.subarray(0, 1024)));
    if (((r.bits(16) >> 9) & 0x3f) !== 33) return null;
    r.bits(4); // sps_video_parameter_set_id
    const subLayers = r.bits(3); // ≤ 7 by its width
    r.flag();
    r.bits(96); // general profile_tier_level (88 bits) and general_level_idc
    const present: Array<[boolean, boolean]> = [];
    for (let i = 0; i < subLayers; i++) present.push([r.flag(), r.flag()]);
    if (subLayers > 0) r.bits(2 * (8 - subLayers));
    for (const [profile, level] of present) {
      if (profile) r.bits(88);
      if (level) r.bits(8);
    }
    r.ue(); // sps_seq_parameter_set_id
    const chroma = r.ue();
    if (chroma > 3) return null;
    if (chroma === 3) r.flag();
    let width = r.ue();
    let height = r.ue();
    if (r.flag()) {
      const [l, rt, t, b] = [r.ue(), r.ue(), r.ue(), r.ue()];
      const sx = chroma === 1 || chroma === 2 ? 2 : 1;
      const sy = chroma === 1 ? 2 : 1;
      width -= sx * (l + rt);
      height -= sy * (t + b);
    }
    return width > 0 && height > 0 ? { width, height } : null;
  } catch {
    return null;
  }
}
