import assert from 'node:assert/strict';
import { type FeedInfo, liveFfmpegArgs, planLiveLadder } from '../../lib/live/ladder';
import { planWebrtcRendition, webrtcOutputArgs, webrtcRenditionReason } from '../../lib/live/webrtc';
import { markBox, type Mark } from '../../lib/media/watermark';

// SPEC §22 (every broadcast over WHEP) and §24 (the mark in every live output): the pure parts.
const feed = (o: Partial<FeedInfo> = {}): FeedInfo => ({ videoCodec: 'h264', audioCodec: 'aac', width: 1280, height: 720, fps: 30, bitrate: 3_000_000, ...o });
const mark: Mark = { file: '/tmp/vidhost-mark-x/mark.png', format: 'png', width: 64, height: 32, position: 'top-left', padding: 0.05, scale: 0.25, opacity: 1 };
const WHIP = { protocol: 'whip', videoCodec: 'h264', audioCodec: 'opus' };

describe('live: the WebRTC rendition and the watermark (pure parts)', () => {
  it('WHEP gets a rendition for a mark, B-frames, HEVC or AAC; a WHIP H.264 + Opus source passes as is', () => {
    assert.equal(webrtcRenditionReason({ marked: false, feed: feed(), edge: WHIP }), null, 'WHIP: the feed the worker reads has AAC, the edge sees Opus');
    assert.equal(webrtcRenditionReason({ marked: false, feed: feed({ audioCodec: null }), edge: null }), null, 'video only, no B-frames');
    assert.equal(webrtcRenditionReason({ marked: true, feed: feed(), edge: WHIP }), 'watermarked');
    assert.equal(webrtcRenditionReason({ marked: false, feed: feed({ bFrames: true }), edge: { ...WHIP, protocol: 'rtmp' } }), 'B-frames');
    assert.equal(webrtcRenditionReason({ marked: false, feed: feed({ videoCodec: 'hevc' }), edge: null }), 'video codec hevc');
    assert.equal(webrtcRenditionReason({ marked: false, feed: feed(), edge: { protocol: 'rtmp', videoCodec: 'h264', audioCodec: 'aac' } }), 'audio codec aac');
    assert.equal(webrtcRenditionReason({ marked: false, feed: feed(), edge: null }), 'audio codec aac', 'an edge that does not see the source: the feed decides');
  });

  it('the rendition is the tallest ladder rung up to 720p, H.264 baseline without B-frames, 1 s keyframes, Opus, PUT to the edge', () => {
    assert.deepEqual(planWebrtcRendition(feed({ width: 1920, height: 1080 }), 'http://e/webrtc/ls_x/ingest'), { url: 'http://e/webrtc/ls_x/ingest', width: 1280, height: 720, videoBitrate: planWebrtcRendition(feed(), '').videoBitrate });
    assert.deepEqual([planWebrtcRendition(feed({ width: 640, height: 360 }), '')].map((r) => [r.width, r.height]), [[640, 360]]);
    const r = planWebrtcRendition(feed({ width: 640, height: 360 }), 'http://e/webrtc/ls_x/ingest');
    const args = webrtcOutputArgs({ ...r, hasAudio: true, preset: 'veryfast', headers: 'Authorization: Bearer s\r\n' });
    assert.deepEqual(args.slice(0, 14), ['-map', '0:v:0', '-map', '0:a:0', '-c:v', 'libx264', '-preset', 'veryfast', '-tune', 'zerolatency', '-profile:v', 'baseline', '-bf', '0']);
    assert.equal(args[args.indexOf('-vf') + 1], 'scale=640:360');
    assert.equal(args[args.indexOf('-force_key_frames') + 1], 'expr:gte(t,n_forced*1)');
    assert.deepEqual(args.slice(args.indexOf('-c:a'), args.indexOf('-c:a') + 4), ['-c:a', 'libopus', '-b:a', '64000']);
    const tee = args[args.length - 1];
    assert.match(tee, /^\[f=mpegts:method=PUT:flush_packets=1:max_delay=0:onfail=ignore:headers=Authorization\\\\\\: Bearer s\r\n:use_fifo=1:fifo_options=.*\]http\\:\/\/e\/webrtc\/ls_x\/ingest$/);
    assert.ok(!webrtcOutputArgs({ ...r, hasAudio: false, preset: 'veryfast' }).includes('-c:a'));
  });

  it('a watermarked stream encodes every rung (no passthrough) and burns the mark into each, and into the WebRTC rendition', () => {
    assert.ok(planLiveLadder(feed(), { passthrough: true }).some((r) => r.encode === null));
    const rungs = planLiveLadder(feed(), { passthrough: true, marked: true });
    assert.ok(rungs.every((r) => r.encode !== null));
    const webrtc = planWebrtcRendition(feed(), 'http://e/webrtc/ls_x/ingest');
    const args = liveFfmpegArgs({ input: 'rtmp://h/internal/ls_x', dir: '/w', rungs, startNumbers: {}, segmentSeconds: 1, preset: 'veryfast', hasAudio: true, mark, webrtc });
    const filters = args.filter((_, i) => args[i - 1] === '-vf');
    assert.equal(filters.length, rungs.length + 1);
    for (const [i, r] of [...rungs, webrtc].entries()) {
      const box = markBox(mark, r);
      assert.ok(filters[i].startsWith(`scale=${r.width}:${r.height}[wmbase];movie=filename=${mark.file}:f=png_pipe,scale=${box.width}:${box.height}`), filters[i]);
      assert.ok(filters[i].endsWith(`overlay=x=${box.x}:y=${box.y}:eof_action=repeat`), filters[i]);
    }
    // Without a mark: plain scales, and no WebRTC output unless asked for.
    const plain = liveFfmpegArgs({ input: 'rtmp://h/internal/ls_x', dir: '/w', rungs, startNumbers: {}, segmentSeconds: 1, preset: 'veryfast', hasAudio: true });
    assert.deepEqual(plain.filter((_, i) => plain[i - 1] === '-vf'), rungs.map((r) => `scale=${r.width}:${r.height}`));
    assert.ok(!plain.includes('libopus'));
  });
});
