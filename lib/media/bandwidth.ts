// Pure: honest HLS bandwidth figures (Apple's HLS authoring rules, SPEC §21): a variant's
// BANDWIDTH is at least its measured peak segment bitrate and AVERAGE-BANDWIDTH its measured
// average, both from the real segment sizes and durations once the rendition is encoded.
import { codecsFor, type PlaylistRung } from './args';
import type { Rung } from './ladder';

export type MeasuredBandwidth = { peak: number; average: number };

/**
 * The rung as the master playlist should list it once measured: CODECS still from the rung's
 * nominal settings (its H.264 level), BANDWIDTH the measured peak and AVERAGE-BANDWIDTH the
 * measured average. The segments carry every stream of the rendition, so nothing is added.
 */
export function honestRung(rung: Rung | PlaylistRung, measured: MeasuredBandwidth | null | undefined, options: { fps?: number | null; hasAudio?: boolean } = {}): PlaylistRung {
  if (!measured || measured.peak <= 0 || measured.average <= 0) return rung;
  const codecs = 'codecs' in rung && rung.codecs ? rung.codecs : codecsFor(rung, options);
  return { ...rung, codecs, maxrate: measured.peak, videoBitrate: measured.average, audioBitrate: 0 };
}
