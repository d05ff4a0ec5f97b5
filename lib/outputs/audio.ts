// Pure HLS text for audio renditions (SPEC §19; RFC 8216 §4.3.4.1 EXT-X-MEDIA TYPE=AUDIO,
// §4.3.4.2 the AUDIO attribute of EXT-X-STREAM-INF). Applied to every master write, as the
// captions are (lib/outputs/publish.ts), from the audio_tracks rows.

export const AUDIO_GROUP = 'aud';
/** Issue 28: the same tracks as CMAF (fMP4) audio, the group of the HEVC/AV1 (CMAF) variants. */
export const CMAF_AUDIO_GROUP = 'aud-cmaf';
/** A variant whose playlist is a CMAF rendition (`720p-hevc/`, `720p-av1/`; lib/media/cmaf.ts). */
const CMAF_VARIANT = /^[^/]+-(?:hevc|av1)\/index\.m3u8$/;
const AAC = 'mp4a.40.2';

export interface AudioRendition {
  language: string;
  name: string;
  isDefault: boolean;
  channels: number;
  /** Relative to the master playlist. */
  uri: string;
  /** The CMAF copy's playlist, relative to the master, once it is packaged (issue 28). */
  cmafUri?: string;
}

const quoted = (s: string) => s.replace(/["\r\n]/g, "'");

/** The master playlist's relative URI of an audio rendition's playlist (also of its CMAF copy, `a0-cmaf`). */
export const audioUri = (rendition: string) => `audio/${rendition}/index.m3u8`;

/**
 * The master with exactly `tracks` as its AUDIO group: earlier audio lines and attributes are
 * removed first, so applying it twice, or with fewer tracks, is safe. Variants that reference
 * the group also name AAC in CODECS; the video rungs themselves carry no audio (docs/audio.md).
 * With no tracks the master is returned without any audio group (a silent video, or a video
 * encoded before audio renditions, whose rungs carry their own audio). Tracks with a CMAF copy
 * also form the CMAF group, which the CMAF (HEVC/AV1) variants reference instead (issue 28).
 */
export function withAudio(master: string, tracks: readonly AudioRendition[]): string {
  const lines = master
    .split('\n')
    .filter((l) => !l.startsWith('#EXT-X-MEDIA:TYPE=AUDIO'))
    .map((l) => {
      if (!l.startsWith('#EXT-X-STREAM-INF:') || !/,AUDIO="[^"]*"/.test(l)) return l;
      return l.replace(/,AUDIO="[^"]*"/, '').replace(`,${AAC}"`, '"');
    });
  if (tracks.length === 0) return lines.join('\n');
  const mediaLine = (t: AudioRendition, group: string, uri: string) =>
    `#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="${group}",NAME="${quoted(t.name)}",LANGUAGE="${quoted(t.language)}",` +
    `DEFAULT=${t.isDefault ? 'YES' : 'NO'},AUTOSELECT=YES,CHANNELS="${t.channels}",URI="${quoted(uri)}"`;
  // CMAF variants take the fMP4 copies when there are any (a CMAF group keeps a DEFAULT=YES track).
  const cmaf = tracks.filter((t) => t.cmafUri);
  const cmafDefault = cmaf.some((t) => t.isDefault) ? null : cmaf[0];
  const media = [
    ...tracks.map((t) => mediaLine(t, AUDIO_GROUP, t.uri)),
    ...cmaf.map((t) => mediaLine(t === cmafDefault ? { ...t, isDefault: true } : t, CMAF_AUDIO_GROUP, t.cmafUri!)),
  ];
  const firstVariant = lines.findIndex((l) => l.startsWith('#EXT-X-STREAM-INF:'));
  const at = firstVariant < 0 ? lines.length : firstVariant;
  const out = [...lines.slice(0, at), ...media, ...lines.slice(at)];
  return out
    .map((l, i) => {
      if (!l.startsWith('#EXT-X-STREAM-INF:')) return l;
      const codecs = /CODECS="([^"]*)"/.exec(l);
      const withCodec = codecs && !codecs[1].split(',').includes(AAC) ? l.replace(codecs[0], `CODECS="${codecs[1]},${AAC}"`) : l;
      const group = cmaf.length > 0 && CMAF_VARIANT.test(out[i + 1] ?? '') ? CMAF_AUDIO_GROUP : AUDIO_GROUP;
      return `${withCodec},AUDIO="${group}"`;
    })
    .join('\n');
}
