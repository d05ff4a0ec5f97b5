// Pure HLS text for captions (RFC 8216 §4.3.4.1 EXT-X-MEDIA, §4.3.4.2 SUBTITLES attribute).

export const SUBTITLE_GROUP = 'subs';

export interface SubtitleTrack {
  language: string;
  label: string;
  isDefault: boolean;
  /** Relative to the master playlist. */
  uri: string;
}

const quoted = (s: string) => s.replace(/["\r\n]/g, "'");

/**
 * The master playlist with exactly `tracks` as its SUBTITLES group: earlier subtitle lines and
 * attributes are removed first, so applying it twice, or with fewer tracks, is safe. The
 * variant lines (the renditions) are kept as they are.
 */
export function withSubtitles(master: string, tracks: readonly SubtitleTrack[]): string {
  const lines = master
    .split('\n')
    .filter((l) => !l.startsWith('#EXT-X-MEDIA:TYPE=SUBTITLES'))
    .map((l) => (l.startsWith('#EXT-X-STREAM-INF:') ? l.replace(/,SUBTITLES="[^"]*"/, '') : l));
  if (tracks.length === 0) return lines.join('\n');
  const media = tracks.map(
    (t) =>
      `#EXT-X-MEDIA:TYPE=SUBTITLES,GROUP-ID="${SUBTITLE_GROUP}",NAME="${quoted(t.label)}",LANGUAGE="${quoted(t.language)}",` +
      `DEFAULT=${t.isDefault ? 'YES' : 'NO'},AUTOSELECT=YES,URI="${quoted(t.uri)}"`,
  );
  const firstVariant = lines.findIndex((l) => l.startsWith('#EXT-X-STREAM-INF:'));
  const at = firstVariant < 0 ? lines.length : firstVariant;
  const out = [...lines.slice(0, at), ...media, ...lines.slice(at)].map((l) =>
    l.startsWith('#EXT-X-STREAM-INF:') ? `${l},SUBTITLES="${SUBTITLE_GROUP}"` : l,
  );
  return out.join('\n');
}

/**
 * A subtitle media playlist of one WebVTT segment spanning the whole video (valid HLS: a segment
 * may be as long as TARGETDURATION says). `durationSeconds` is the video's.
 */
export function subtitlePlaylist(durationSeconds: number, segmentUri: string): string {
  const d = Math.max(0.001, Math.round(durationSeconds * 1000) / 1000);
  return [
    '#EXTM3U',
    '#EXT-X-VERSION:3',
    `#EXT-X-TARGETDURATION:${Math.ceil(d)}`,
    '#EXT-X-MEDIA-SEQUENCE:0',
    '#EXT-X-PLAYLIST-TYPE:VOD',
    `#EXTINF:${d.toFixed(3)},`,
    segmentUri,
    '#EXT-X-ENDLIST',
    '',
  ].join('\n');
}
