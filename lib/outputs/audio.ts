// Pure HLS text for audio renditions (SPEC §19; RFC 8216 §4.3.4.1 EXT-X-MEDIA TYPE=AUDIO,
// §4.3.4.2 the AUDIO attribute of EXT-X-STREAM-INF). Applied to every master write, as the
// captions are (lib/outputs/publish.ts), from the audio_tracks rows.

export const AUDIO_GROUP = 'aud';
const AAC = 'mp4a.40.2';

export interface AudioRendition {
  language: string;
  name: string;
  isDefault: boolean;
  channels: number;
  /** Relative to the master playlist. */
  uri: string;
}

const quoted = (s: string) => s.replace(/["\r\n]/g, "'");

/** The master playlist's relative URI of an audio rendition's playlist. */
export const audioUri = (rendition: string) => `audio/${rendition}/index.m3u8`;

/**
 * The master with exactly `tracks` as its AUDIO group: earlier audio lines and attributes are
 * removed first, so applying it twice, or with fewer tracks, is safe. Variants that reference
 * the group also name AAC in CODECS; the video rungs themselves carry no audio (docs/audio.md).
 * With no tracks the master is returned without any audio group (a silent video, or a video
 * encoded before audio renditions, whose rungs carry their own audio).
 */
export function withAudio(master: string, tracks: readonly AudioRendition[]): string {
  const lines = master
    .split('\n')
    .filter((l) => !l.startsWith('#EXT-X-MEDIA:TYPE=AUDIO'))
    .map((l) => {
      if (!l.startsWith('#EXT-X-STREAM-INF:') || !l.includes(`AUDIO="${AUDIO_GROUP}"`)) return l;
      return l.replace(`,AUDIO="${AUDIO_GROUP}"`, '').replace(`,${AAC}"`, '"');
    });
  if (tracks.length === 0) return lines.join('\n');
  const media = tracks.map(
    (t) =>
      `#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="${AUDIO_GROUP}",NAME="${quoted(t.name)}",LANGUAGE="${quoted(t.language)}",` +
      `DEFAULT=${t.isDefault ? 'YES' : 'NO'},AUTOSELECT=YES,CHANNELS="${t.channels}",URI="${quoted(t.uri)}"`,
  );
  const firstVariant = lines.findIndex((l) => l.startsWith('#EXT-X-STREAM-INF:'));
  const at = firstVariant < 0 ? lines.length : firstVariant;
  const out = [...lines.slice(0, at), ...media, ...lines.slice(at)].map((l) => {
    if (!l.startsWith('#EXT-X-STREAM-INF:')) return l;
    const codecs = /CODECS="([^"]*)"/.exec(l);
    const withCodec = codecs && !codecs[1].split(',').includes(AAC) ? l.replace(codecs[0], `CODECS="${codecs[1]},${AAC}"`) : l;
    return `${withCodec},AUDIO="${AUDIO_GROUP}"`;
  });
  return out.join('\n');
}
