import type { PlaybackGrant } from '../../lib/playback/tokens';
import type { Restriction } from '../../lib/protection/restriction';

/** A broadcast a viewer may watch, as its HLS, LL-HLS and WHEP routes see it (api/cdn/live.ts resolves it). */
export interface Broadcast {
  liveStreamId: string;
  latencyMode: 'standard' | 'low';
  workspaceId: string;
  videoId: string;
  windowSeconds: number;
  targetFloor: number;
  restriction: Restriction | null;
  grant: PlaybackGrant | null;
  /** The recording is `aes-128`: its key encrypts the live segments too. */
  encrypted: boolean;
  /** SPEC §24: the stream has a watermark, so WHEP plays only its marked WebRTC rendition. */
  marked: boolean;
}
