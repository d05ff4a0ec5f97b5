// Pure: the live (sliding window) and recorded (VOD) playlists, written from live_segments rows.

export interface SegmentRow {
  seq: number;
  duration: number;
  discontinuity: boolean;
  program_date_time: Date | string;
  bytes?: number | string;
}

export interface RungInfo {
  name: string;
  width: number;
  height: number;
  bitrate: number;
}

const segName = (seq: number) => `seg_${String(seq).padStart(6, '0')}.ts`;
export const segmentFileName = segName;

function lines(rows: SegmentRow[], withDates: boolean): string[] {
  const out: string[] = [];
  rows.forEach((r, i) => {
    if (r.discontinuity && i > 0) out.push('#EXT-X-DISCONTINUITY');
    if (withDates || i === 0 || r.discontinuity) out.push(`#EXT-X-PROGRAM-DATE-TIME:${new Date(r.program_date_time).toISOString()}`);
    out.push(`#EXTINF:${r.duration.toFixed(3)},`, segName(r.seq));
  });
  return out;
}

const target = (rows: SegmentRow[], floor: number) => Math.max(floor, ...rows.map((r) => Math.ceil(r.duration)));

/**
 * A live media playlist: the window's rows (ascending), `mediaSequence` = how many segments of the
 * rung came before the window, `discontinuitySequence` = how many discontinuities they held.
 */
export function livePlaylist(rows: SegmentRow[], o: { mediaSequence: number; discontinuitySequence: number; targetFloor: number }): string {
  return [
    '#EXTM3U',
    '#EXT-X-VERSION:6',
    `#EXT-X-TARGETDURATION:${target(rows, o.targetFloor)}`,
    `#EXT-X-MEDIA-SEQUENCE:${o.mediaSequence}`,
    `#EXT-X-DISCONTINUITY-SEQUENCE:${o.discontinuitySequence}`,
    '#EXT-X-INDEPENDENT-SEGMENTS',
    ...lines(rows, true),
    '',
  ].join('\n');
}

/** The recording's media playlist: every segment, discontinuities where the feed broke. */
export function vodPlaylist(rows: SegmentRow[]): string {
  return ['#EXTM3U', '#EXT-X-VERSION:6', `#EXT-X-TARGETDURATION:${target(rows, 1)}`, '#EXT-X-PLAYLIST-TYPE:VOD', '#EXT-X-MEDIA-SEQUENCE:0', '#EXT-X-INDEPENDENT-SEGMENTS', ...lines(rows, false), '#EXT-X-ENDLIST', ''].join('\n');
}

/** Multivariant playlist, highest rung first (hls.js starts from the first listed unless told). */
export function masterPlaylist(rungs: Array<RungInfo & { bandwidth?: number }>): string {
  const sorted = [...rungs].sort((a, b) => b.height - a.height || b.bitrate - a.bitrate);
  const out = ['#EXTM3U', '#EXT-X-VERSION:6', '#EXT-X-INDEPENDENT-SEGMENTS'];
  for (const r of sorted) {
    out.push(`#EXT-X-STREAM-INF:BANDWIDTH=${Math.max(1, Math.round(r.bandwidth ?? r.bitrate))},RESOLUTION=${r.width}x${r.height}`, `${r.name}/index.m3u8`);
  }
  return `${out.join('\n')}\n`;
}

/** Peak bits/s over the rows (HLS BANDWIDTH), from their sizes; undefined when sizes are unknown. */
export function measuredBandwidth(rows: SegmentRow[]): number | undefined {
  let peak = 0;
  for (const r of rows) if (r.duration > 0 && Number(r.bytes ?? 0) > 0) peak = Math.max(peak, (Number(r.bytes) * 8) / r.duration);
  return peak > 0 ? Math.round(peak) : undefined;
}

/** Parses ffmpeg's own (local) HLS playlist: the segments it has finished. */
export function parseLocalPlaylist(text: string): Array<{ file: string; duration: number; programDateTime: string | null }> {
  const out: Array<{ file: string; duration: number; programDateTime: string | null }> = [];
  let duration: number | null = null;
  let pdt: string | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line.startsWith('#EXTINF:')) duration = Number.parseFloat(line.slice(8));
    else if (line.startsWith('#EXT-X-PROGRAM-DATE-TIME:')) pdt = line.slice(25);
    else if (line && !line.startsWith('#') && duration !== null) {
      out.push({ file: line, duration, programDateTime: pdt });
      duration = null;
      pdt = null;
    }
  }
  return out;
}
