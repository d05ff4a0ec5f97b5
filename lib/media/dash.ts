// Pure: a static DASH manifest (ISO/IEC 23009-1, isoff-live profile) over the CMAF renditions'
// HLS segments (SPEC §21): the same init.mp4 and seg_NNNNN.m4s files serve both protocols.
// No I/O, no Node built-ins.

export type DashRepresentation = {
  /** The rendition's folder (`720p-av1`), relative to the manifest. */
  id: string;
  codecs: string;
  /** Peak bits/s, as measured (the MPD's bandwidth is the peak a client must sustain). */
  bandwidth: number;
  width: number;
  height: number;
  /** Each segment's duration in seconds, in order (the rendition's EXTINFs); numbering starts at 0. */
  segments: readonly number[];
};

/** Issue 28: an audio rendition's CMAF copy, one AdaptationSet per track (players pick by language). */
export type DashAudioRepresentation = {
  /** The folder relative to the manifest (`audio/a0-cmaf`). */
  id: string;
  /** BCP-47, or `und` (then no `lang`). */
  language: string;
  channels: number;
  isDefault: boolean;
  bandwidth: number;
  segments: readonly number[];
};

const iso = (seconds: number): string => `PT${(Math.round(seconds * 1000) / 1000).toFixed(3)}S`;
const safe = (s: string): string => {
  if (!/^[A-Za-z0-9._-]+$/.test(s)) throw new RangeError(`unsafe DASH attribute ${JSON.stringify(s)}`);
  return s;
};

/** `<S>` entries with run-length repeats, durations in milliseconds. */
function timeline(segments: readonly number[]): string[] {
  const out: string[] = [];
  let t = 0;
  let i = 0;
  while (i < segments.length) {
    const d = Math.round(segments[i] * 1000);
    let r = 0;
    while (i + r + 1 < segments.length && Math.round(segments[i + r + 1] * 1000) === d) r++;
    out.push(`<S t="${t}" d="${d}"${r ? ` r="${r}"` : ''}/>`);
    t += d * (r + 1);
    i += r + 1;
  }
  return out;
}

function segmentTemplate(id: string, segments: readonly number[]): string[] {
  return [
    `        <SegmentTemplate timescale="1000" initialization="${id}/init.mp4" media="${id}/seg_$Number%05d$.m4s" startNumber="0">`,
    '          <SegmentTimeline>',
    ...timeline(segments).map((s) => `            ${s}`),
    '          </SegmentTimeline>',
    '        </SegmentTemplate>',
  ];
}

/**
 * The MPD: one AdaptationSet per codec family (players switch rungs within a set, never across
 * codecs), its Representations lowest bandwidth first, each with its own SegmentTemplate and an
 * explicit SegmentTimeline (the segments are cut on keyframes, so durations vary). Each audio
 * track is an AdaptationSet of its own (audio/mp4, AAC-LC), the default one with Role main.
 */
export function dashManifest(durationSeconds: number, representations: readonly DashRepresentation[], audio: readonly DashAudioRepresentation[] = []): string {
  const families = new Map<string, DashRepresentation[]>();
  for (const r of representations) {
    const family = r.codecs.split('.')[0];
    families.set(family, [...(families.get(family) ?? []), r]);
  }
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<MPD xmlns="urn:mpeg:dash:schema:mpd:2011" profiles="urn:mpeg:dash:profile:isoff-live:2011" type="static" mediaPresentationDuration="${iso(durationSeconds)}" minBufferTime="PT2.000S">`,
    '  <Period id="0" start="PT0.000S">',
  ];
  let set = 0;
  for (const reps of families.values()) {
    lines.push(`    <AdaptationSet id="${set++}" contentType="video" mimeType="video/mp4" segmentAlignment="true" startWithSAP="1">`);
    for (const r of [...reps].sort((a, b) => a.bandwidth - b.bandwidth)) {
      const id = safe(r.id);
      lines.push(
        `      <Representation id="${id}" codecs="${safe(r.codecs)}" bandwidth="${Math.ceil(r.bandwidth)}" width="${r.width}" height="${r.height}">`,
        ...segmentTemplate(id, r.segments),
        '      </Representation>',
      );
    }
    lines.push('    </AdaptationSet>');
  }
  for (const a of audio) {
    const id = a.id.split('/').map(safe).join('/');
    const lang = a.language !== 'und' ? ` lang="${safe(a.language)}"` : '';
    lines.push(
      `    <AdaptationSet id="${set++}" contentType="audio" mimeType="audio/mp4"${lang} segmentAlignment="true" startWithSAP="1">`,
      `      <Role schemeIdUri="urn:mpeg:dash:role:2011" value="${a.isDefault ? 'main' : 'alternate'}"/>`,
      `      <Representation id="${id.replace(/\//g, '_')}" codecs="mp4a.40.2" bandwidth="${Math.ceil(a.bandwidth)}" audioSamplingRate="48000">`,
      `        <AudioChannelConfiguration schemeIdUri="urn:mpeg:dash:23003:3:audio_channel_configuration:2011" value="${Math.trunc(a.channels)}"/>`,
      ...segmentTemplate(id, a.segments),
      '      </Representation>',
      '    </AdaptationSet>',
    );
  }
  lines.push('  </Period>', '</MPD>', '');
  return lines.join('\n');
}
