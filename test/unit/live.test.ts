import assert from 'node:assert/strict';
import { createLogger } from '../../lib/logger';
import { prefixUris } from '../../api/cdn/lowlatency';
import { FeedMeter, healthWarnings } from '../../lib/live/health';
import { parseCheckBody, startKeyCheckServer } from '../../lib/live/key-check';
import { hashStreamKey, newStreamKey, STREAM_KEY_RE } from '../../lib/live/keys';
import { type FeedInfo, liveFfmpegArgs, liveOutputRate, outOfBounds, planLiveLadder } from '../../lib/live/ladder';
import { livePlaylist, masterPlaylist, parseLocalPlaylist, vodPlaylist } from '../../lib/live/playlists';

const feed = (o: Partial<FeedInfo> = {}): FeedInfo => ({ videoCodec: 'h264', audioCodec: 'aac', width: 1280, height: 720, fps: 30, bitrate: 4_000_000, ...o });

describe('live: pure parts', () => {
  it('stream keys are RTMP-safe, random, and stored only as a hash', () => {
    const a = newStreamKey();
    assert.match(a, STREAM_KEY_RE);
    assert.notEqual(a, newStreamKey());
    assert.equal(hashStreamKey(a).length, 64);
    assert.ok(!hashStreamKey(a).includes(a));
  });

  it('input bounds of SPEC §17', () => {
    assert.equal(outOfBounds(feed()), null);
    assert.equal(outOfBounds(feed({ width: 1920, height: 1080, fps: 60 })), null);
    assert.equal(outOfBounds(feed({ width: 1080, height: 1920 })), null, 'portrait 1080p is within bounds');
    assert.match(outOfBounds(feed({ width: 2560, height: 1440 }))!, /over 1080p/);
    assert.match(outOfBounds(feed({ fps: 90 }))!, /over 60/);
    assert.match(outOfBounds(feed({ bitrate: 25_000_000 }))!, /over 20 Mb\/s/);
    assert.match(outOfBounds(feed({ videoCodec: 'vp8' }))!, /vp8/);
    assert.match(outOfBounds(feed({ audioCodec: 'mp3' }))!, /mp3/);
    assert.match(outOfBounds(feed({ videoCodec: null }))!, /no video/);
  });

  it('the ladder never upscales, and keeps an H.264/AAC source as a passthrough rung', () => {
    const p = planLiveLadder(feed(), { passthrough: true });
    assert.deepEqual(p.map((r) => r.name), ['source', '480p', '240p']);
    assert.equal(p[0].encode, null);
    assert.ok(p.every((r) => r.height <= 720));
    const hevc = planLiveLadder(feed({ videoCodec: 'hevc' }), { passthrough: true });
    assert.deepEqual(hevc.map((r) => r.name), ['720p', '360p', '240p']);
    assert.deepEqual(planLiveLadder(feed({ width: 320, height: 240 }), { passthrough: true }).map((r) => r.name), ['source']);
  });

  it("ffmpeg arguments read only the edge's MPEG-TS feed over http, with its credential, and write one HLS output per rung", () => {
    const args = liveFfmpegArgs({ input: 'http://edge:8889/feed/ls_x', dir: '/w', rungs: planLiveLadder(feed(), { passthrough: true }), startNumbers: { source: 7 }, segmentSeconds: 2, preset: 'veryfast', hasAudio: true, inputHeaders: 'Authorization: Bearer s3cr3t\r\n' });
    assert.equal(args[args.indexOf('-protocol_whitelist') + 1], 'http,tcp');
    assert.equal(args[args.indexOf('-format_whitelist') + 1], 'mpegts');
    assert.equal(args[args.indexOf('-headers') + 1], 'Authorization: Bearer s3cr3t\r\n');
    for (const o of ['-protocol_whitelist', '-format_whitelist', '-headers']) assert.ok(args.indexOf(o) < args.indexOf('-i'), `${o} is an input option`);
    assert.equal(args.filter((a) => a === 'hls').length, 3);
    assert.ok(args.includes('/w/source/seg_%06d.ts'));
    assert.equal(args[args.indexOf('-start_number') + 1], '7');
  });

  it('encoded rungs run at a constant, sane frame rate: never the input’s guessed 90 kHz (a WebRTC source on a loaded machine)', () => {
    assert.equal(liveOutputRate(15.02), '15.02');
    assert.equal(liveOutputRate(29.97), '30000/1001');
    assert.equal(liveOutputRate(60), '60');
    for (const bad of [90000, 0, null, undefined, Number.NaN, 0.5]) assert.equal(liveOutputRate(bad), '30', String(bad));
    const rungs = planLiveLadder(feed(), { passthrough: true });
    const webrtc = { url: 'http://edge/webrtc/ls_x/ingest', width: 640, height: 360, videoBitrate: 800_000 };
    const args = liveFfmpegArgs({ input: 'http://edge:8889/feed/ls_x', dir: '/w', rungs, startNumbers: {}, segmentSeconds: 2, preset: 'veryfast', hasAudio: true, fps: 90000, webrtc });
    // Each encoded output (the two rungs below the source, the WebRTC rendition) has its own; the copied source none.
    const rates = args.flatMap((a, i) => (a === '-r' ? [`${args[i - 2]} ${args[i - 1]} ${args[i + 1]}`] : []));
    assert.deepEqual(rates, ['-fps_mode cfr 30', '-fps_mode cfr 30', '-fps_mode cfr 30']);
  });

  it('live playlists slide with sequence numbers and program date times; VOD playlists end', () => {
    const rows = [
      { seq: 10, duration: 2, discontinuity: false, program_date_time: '2026-01-01T00:00:00Z' },
      { seq: 11, duration: 2, discontinuity: true, program_date_time: '2026-01-01T00:00:30Z' },
    ];
    const live = livePlaylist(rows, { mediaSequence: 10, discontinuitySequence: 1, targetFloor: 2 });
    assert.match(live, /#EXT-X-MEDIA-SEQUENCE:10\n/);
    assert.match(live, /#EXT-X-DISCONTINUITY-SEQUENCE:1\n/);
    assert.equal(live.match(/#EXT-X-PROGRAM-DATE-TIME:/g)?.length, 2);
    assert.match(live, /#EXT-X-DISCONTINUITY\n#EXT-X-PROGRAM-DATE-TIME:2026-01-01T00:00:30.000Z\n#EXTINF:2.000,\nseg_000011.ts/);
    assert.doesNotMatch(live, /ENDLIST/);
    const vod = vodPlaylist(rows);
    assert.match(vod, /#EXT-X-PLAYLIST-TYPE:VOD/);
    assert.match(vod, /#EXT-X-ENDLIST\n$/);
    const master = masterPlaylist([{ name: '240p', width: 426, height: 240, bitrate: 528_000 }, { name: 'source', width: 1280, height: 720, bitrate: 0, bandwidth: 3_000_000 }]);
    assert.ok(master.indexOf('source/index.m3u8') < master.indexOf('240p/index.m3u8'));
    assert.match(master, /BANDWIDTH=3000000,RESOLUTION=1280x720/);
  });

  it('reads the segments ffmpeg has finished from its own playlist', () => {
    const text = '#EXTM3U\n#EXT-X-TARGETDURATION:2\n#EXT-X-PROGRAM-DATE-TIME:2026-01-01T00:00:00.000+0000\n#EXTINF:2.000000,\nseg_000001.ts\n#EXTINF:1.5,\nseg_000002.ts\n';
    assert.deepEqual(parseLocalPlaylist(text), [
      { file: 'seg_000001.ts', duration: 2, programDateTime: '2026-01-01T00:00:00.000+0000' },
      { file: 'seg_000002.ts', duration: 1.5, programDateTime: null },
    ]);
  });
});

describe('live: the key check the edge asks (HTTP wrapper)', () => {
  let server: Awaited<ReturnType<typeof startKeyCheckServer>>;
  const seen: Array<[string, string | null]> = [];
  before(async () => {
    server = await startKeyCheckServer({
      host: '127.0.0.1',
      port: 0,
      log: createLogger('error', 'test'),
      // A stub check (the database side is checkStreamKey's, tested with a stack): admits one key.
      check: async (key, app) => {
        seen.push([key, app]);
        return key === `lsk${'a'.repeat(32)}` ? { ok: true, stream: { id: 'ls_x', workspace_id: 'ws_y' } } : { ok: false, code: 'unknown', why: 'unknown stream key' };
      },
    });
  });
  after(() => server.close());
  const post = (body: string) => fetch(`http://127.0.0.1:${server.port}/check`, { method: 'POST', body });

  it('answers {"key","app"} with 200 and the stream and workspace ids', async () => {
    const res = await post(JSON.stringify({ key: `lsk${'a'.repeat(32)}`, app: 'whip' }));
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { live_stream_id: 'ls_x', workspace_id: 'ws_y' });
    assert.deepEqual(seen.at(-1), [`lsk${'a'.repeat(32)}`, 'whip']);
  });

  it('still answers the bare key with 204 (the SRT gateway before the edge)', async () => {
    const res = await post(`lsk${'a'.repeat(32)}\n`);
    assert.equal(res.status, 204);
  });

  it('refuses unknown keys, unknown apps and malformed JSON with 403 and a code', async () => {
    let res = await post(JSON.stringify({ key: `lsk${'b'.repeat(32)}`, app: 'srt' }));
    assert.equal(res.status, 403);
    assert.deepEqual(await res.json(), { code: 'unknown', reason: 'unknown stream key' });
    for (const body of ['{"key": 1}', '{"key":"x","app":"ftp"}', '{not json']) {
      res = await post(body);
      assert.equal(res.status, 403, body);
      assert.equal(((await res.json()) as { code: string }).code, 'bad_key');
    }
    assert.equal(parseCheckBody('{"key":"k"}')?.app, null);
  });
});

describe('live: stream health measured on the feed (framecrc)', () => {
  it('reads codecs, size, fps, bitrate and keyframe interval, and warns past 4 s between keyframes', () => {
    let now = 0;
    const m = new FeedMeter(() => now);
    const head = '#tb 0: 1/1000\n#media_type 0: video\n#codec_id 0: h264\n#dimensions 0: 640x360\n#tb 1: 1/48000\n#codec_id 1: aac\n';
    const lines: string[] = [];
    // 6 s of 25 fps video, a keyframe every 5 s (125 frames), 5000-byte frames.
    for (let i = 0; i < 150; i++) lines.push(`0, ${i * 40}, ${i * 40}, 40, 5000, 0xabc${i % 125 === 0 ? '' : ', F=0x0'}`);
    m.push(head + lines.slice(0, 75).join('\n').slice(0, -7));
    m.push(lines.slice(0, 75).join('\n').slice(-7) + '\n');
    now = 3000;
    m.push(`${lines.slice(75).join('\n')}\n`);
    const h = m.health('rtmp');
    assert.deepEqual(h.video, { codec: 'h264', width: 640, height: 360, fps: 25 });
    assert.deepEqual(h.audio, { codec: 'aac' });
    assert.equal(h.keyframe_interval_s, 5);
    // 150 × 5000 bytes within the last 3 s.
    assert.equal(h.bitrate_kbps, 2000);
    assert.deepEqual(h.warnings.map((w) => w.code), ['keyframe_interval_high']);
    assert.deepEqual(healthWarnings({ bitrate_kbps: 25_000, keyframe_interval_s: 2 }).map((w) => w.code), ['bitrate_over_plan']);
    assert.deepEqual(new FeedMeter().health('srt'), { protocol: 'srt', video: null, audio: null, bitrate_kbps: null, keyframe_interval_s: null, warnings: [] });
  });
});

describe('live: the LL-HLS master from the edge (ll/ prefix)', () => {
  it('puts ll/ before every relative URI and refuses anything else', () => {
    const edge = '#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",URI="source/audio2_stream.m3u8"\n#EXT-X-STREAM-INF:BANDWIDTH=1,AUDIO="audio"\nsource/video1_stream.m3u8\n';
    assert.equal(prefixUris(edge, 'll/'), '#EXTM3U\n#EXT-X-MEDIA:TYPE=AUDIO,GROUP-ID="audio",URI="ll/source/audio2_stream.m3u8"\n#EXT-X-STREAM-INF:BANDWIDTH=1,AUDIO="audio"\nll/source/video1_stream.m3u8\n');
    assert.equal(prefixUris('#EXTM3U\nhttp://evil.example/x.m3u8\n', 'll/'), null);
    assert.equal(prefixUris('#EXTM3U\n../../v/x.m3u8\n', 'll/'), null);
    assert.equal(prefixUris('#EXTM3U\n#EXT-X-MEDIA:URI="/abs.m3u8"\n', 'll/'), null);
  });

  it('tees each rung to the edge with a FIFO of its own when LL-HLS is on', () => {
    const args = liveFfmpegArgs({ input: 'http://edge:8889/feed/ls_x', dir: '/w', rungs: planLiveLadder(feed(), { passthrough: true }), startNumbers: {}, segmentSeconds: 1, preset: 'veryfast', hasAudio: true, llhls: (r) => `http://edge:8889/hls/ls_x/${r}/ingest`, meter: true });
    const tees = args.filter((a, i) => args[i - 1] === '-f' && a === 'tee');
    assert.equal(tees.length, 3);
    const slave = args[args.indexOf('tee') + 1];
    assert.match(slave, /^\[f=hls:hls_time=1:.*hls_segment_filename=\/w\/source\/seg_%06d\.ts\]\/w\/source\/index\.m3u8\|\[f=mpegts:method=PUT:flush_packets=1:max_delay=0:onfail=ignore:use_fifo=1:fifo_options=queue_size=300\\\\\\:attempt_recovery=1\\\\\\:/);
    assert.ok(slave.endsWith('http\\://edge\\:8889/hls/ls_x/source/ingest'));
    assert.deepEqual(args.slice(-4), ['copy', '-f', 'framecrc', 'pipe:1']);
    assert.doesNotMatch(slave, /headers=/);
  });

  it('sends the edge its credential on each LL-HLS PUT (the tee slave\'s headers option)', () => {
    const args = liveFfmpegArgs({ input: 'http://edge:8889/feed/ls_x', dir: '/w', rungs: planLiveLadder(feed(), { passthrough: true }), startNumbers: {}, segmentSeconds: 1, preset: 'veryfast', hasAudio: true, llhls: (r) => `http://edge:8889/hls/ls_x/${r}/ingest`, llhlsHeaders: 'Authorization: Bearer s3cr3t\r\n' });
    const slave = args[args.indexOf('tee') + 1];
    assert.match(slave, /\[f=mpegts:method=PUT:[^\]]*:headers=Authorization\\\\\\: Bearer s3cr3t\r\n:use_fifo=1/);
  });
});
