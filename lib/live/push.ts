// Pure: how the session's ffmpeg PUTs MPEG-TS to the live edge (LL-HLS rungs, the WebRTC rendition).

/** tee muxer escaping (ffmpeg's av_get_token): `\`, `:`, `|`, `[`, `]` and `'` are taken literally. */
export const teeEscape = (v: string) => v.replace(/[\\:|[\]']/g, (c) => `\\${c}`);

/**
 * A tee slave that PUTs MPEG-TS to the live edge (`url`, with `headers`): in a FIFO of its own (an
 * edge that stalls or restarts never holds up the other outputs; the PUT is opened again every
 * second until it is taken). 300 packets (~4 s of a 30 fps rung with its audio; ffmpeg's default
 * 60 is under a second): a PUT that stalls on a busy edge for a moment loses nothing. Past that,
 * packets are dropped until a keyframe of any stream (an audio packet counts), so the edge may
 * still see a gap in the video (ingest/hls's gapSkipper). Every packet is sent as it is muxed (no
 * 32 KB AVIO buffer, no mux delay): LL-HLS parts are 200 ms, WebRTC is real time.
 */
export function edgePushSlave(url: string, headers?: string): string {
  // Option values are unescaped twice (the slave list, then the slave's options), the file once.
  const value = (v: string) => teeEscape(teeEscape(v));
  const fifo = value(['queue_size=300', 'attempt_recovery=1', 'recovery_wait_time=1', 'drop_pkts_on_overflow=1', 'restart_with_keyframe=1'].join(':'));
  const h = headers ? `:headers=${value(headers)}` : '';
  return `[f=mpegts:method=PUT:flush_packets=1:max_delay=0:onfail=ignore${h}:use_fifo=1:fifo_options=${fifo}]${teeEscape(url)}`;
}
