import assert from 'node:assert/strict';
import { beaconBody } from '../../lib/analytics/events';

// The SDK is a browser script with a CommonJS export for tests like this one.
const sdk = require('../../sdk/analytics.js');

type Ev = { event: string; seq: number; elapsed_ms: number; watch_ms: number; position: number; rendition?: string; bitrate?: number; error_code?: string; view_id: string };

/** Enough of an HTMLVideoElement for the tracker: state fields plus events. */
class FakeVideo extends EventTarget {
  paused = true;
  ended = false;
  seeking = false;
  readyState = 0;
  currentTime = 0;
  error: { code: number } | null = null;
  fire(type: string) {
    this.dispatchEvent(new Event(type));
  }
}

function setup(target?: (video: FakeVideo) => unknown) {
  const video = new FakeVideo();
  let clock = 1000;
  const sent: Array<{ events: Ev[]; leaving: boolean }> = [];
  const tracker = sdk.attach(target ? target(video) : video, {
    subject: 'vid_0123456789abcdef0123456789abcdef',
    now: () => clock,
    heartbeatMs: 3_600_000,
    transport: (events: Ev[], leaving: boolean) => {
      sent.push({ events, leaving });
      return Promise.resolve(true);
    },
  });
  const events = () => {
    tracker.inner?.flush?.(false);
    tracker.flush?.(false);
    return sent.flatMap((b) => b.events);
  };
  return { video, tracker: tracker.inner ?? tracker, sent, events, tick: (ms: number) => (clock += ms) };
}

describe('analytics SDK (sdk/analytics.js)', () => {
  it('turns media events into a view: startup, watch time, a rebuffer, viewend', () => {
    const { video, tracker, sent, events, tick } = setup();
    video.paused = false;
    video.fire('play');
    tick(700);
    video.readyState = 4;
    video.fire('playing');
    tick(2000);
    video.currentTime = 2;
    video.fire('waiting');
    tick(1500);
    video.fire('playing');
    tick(3000);
    video.currentTime = 5;
    tracker.heartbeat();
    video.seeking = true;
    video.fire('waiting'); // a seek's wait is not a rebuffer
    video.seeking = false;
    video.fire('seeked');
    video.paused = true;
    video.ended = true;
    video.fire('ended');
    tracker.end();
    const evs = events();
    assert.deepEqual(evs.map((e) => e.event), ['viewstart', 'playing', 'rebufferstart', 'rebufferend', 'heartbeat', 'seeked', 'ended', 'viewend']);
    assert.deepEqual(evs.map((e) => e.seq), [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.equal(new Set(evs.map((e) => e.view_id)).size, 1);
    assert.equal(evs[1].elapsed_ms, 700, 'startup: play intent → first frame');
    assert.equal(evs[3].elapsed_ms - evs[2].elapsed_ms, 1500, 'rebuffer duration');
    assert.equal(evs.at(-1)!.watch_ms, 5000, 'watch time excludes the stall');
    assert.equal(sent.at(-1)!.leaving, true, 'viewend goes out as the page leaves (sendBeacon)');
    // Everything the SDK sends passes the server's own schema.
    assert.ok(beaconBody.safeParse(evs).success, JSON.stringify(beaconBody.safeParse(evs).error?.issues));
  });

  it('starts a new view when a finished video is played again', () => {
    const { video, events } = setup();
    video.fire('play');
    video.fire('playing');
    video.fire('ended');
    video.fire('play');
    const evs = events();
    assert.equal(new Set(evs.map((e) => e.view_id)).size, 2);
    assert.equal(evs.at(-1)!.seq, 0);
  });

  it('reports hls.js renditions and fatal errors', () => {
    const handlers: Record<string, (e: string, d: unknown) => void> = {};
    let video!: FakeVideo;
    const { events } = setup((v) => {
      video = v;
      return { media: v, levels: [{ height: 240, bitrate: 300000 }, { height: 480, bitrate: 900000 }], loadSource() {}, on: (n: string, f: (e: string, d: unknown) => void) => (handlers[n] = f) };
    });
    video.fire('play');
    video.fire('playing');
    handlers.hlsLevelSwitched('hlsLevelSwitched', { level: 1 });
    handlers.hlsError('hlsError', { fatal: true, details: 'fragLoadError' });
    const evs = events();
    const r = evs.find((e) => e.event === 'rendition')!;
    assert.equal(r.rendition, '480p');
    assert.equal(r.bitrate, 900000);
    assert.equal(evs.find((e) => e.event === 'error')!.error_code, 'hls_fragLoadError');
  });

  it('reads Shaka Player variant tracks', () => {
    const listeners: Record<string, () => void> = {};
    let video!: FakeVideo;
    const tracks = [{ active: false, height: 240, bandwidth: 300000 }, { active: true, height: 720, bandwidth: 2500000 }];
    const { events } = setup((v) => {
      video = v;
      return { getMediaElement: () => v, getVariantTracks: () => tracks, addEventListener: (n: string, f: () => void) => (listeners[n] = f) };
    });
    video.fire('play');
    video.fire('playing');
    const evs = events();
    assert.equal(evs[1].rendition, '720p');
    assert.equal(evs[1].bitrate, 2500000);
  });

  it('reports the height the picture is shown at (letterboxed, device pixels) for upscale/downscale', () => {
    const { video, events } = setup();
    const v = video as unknown as Record<string, number>;
    video.fire('play');
    video.fire('playing'); // no layout yet: no height
    Object.assign(v, { clientWidth: 1280, clientHeight: 720, videoWidth: 640, videoHeight: 360 });
    video.fire('pause');
    Object.assign(v, { clientWidth: 1000, clientHeight: 1000 }); // a square box: 16:9 letterboxed to 562.5
    video.paused = false;
    video.fire('playing');
    const evs = events() as Array<Ev & { player_height?: number }>;
    assert.equal(evs[1].player_height, undefined);
    assert.equal(evs[2].player_height, 720);
    assert.equal(evs.at(-1)!.player_height, 563);
    assert.ok(beaconBody.safeParse(evs).success);
  });

  it('reports live latency: hls.js\'s own figure on a live level, the seekable end otherwise, none for on-demand', () => {
    let video!: FakeVideo;
    const hls = { media: null as unknown, currentLevel: 0, latency: 3.25, levels: [{ height: 720, bitrate: 1, details: { live: true } }], loadSource() {}, on() {} };
    const { events } = setup((v) => {
      video = v;
      hls.media = v;
      return hls;
    });
    video.fire('play');
    video.fire('playing');
    hls.levels[0].details.live = false;
    video.fire('pause');
    const evs = events() as Array<Ev & { latency?: number }>;
    assert.equal(evs[1].latency, 3.25);
    assert.equal(evs[2].latency, undefined, 'on-demand: no latency');
    const plain = setup();
    Object.assign(plain.video, { duration: Infinity, currentTime: 96, seekable: { length: 1, end: () => 100.5 } });
    plain.video.fire('play');
    plain.video.fire('playing');
    const p = plain.events() as Array<Ev & { latency?: number }>;
    assert.equal(p[1].latency, 4.5);
    assert.ok(beaconBody.safeParse(p).success);
  });

  it('sends a batch the server did not take again (backoff, Retry-After) until it is taken, and with the page when it goes away (issue 45)', async () => {
    const video = new FakeVideo();
    const answers: Array<boolean | number> = [false, 30, false, true];
    const tries: Array<{ seqs: number[]; leaving: boolean; at: number }> = [];
    const t0 = Date.now();
    const tracker = sdk.attach(video, {
      subject: 'vid_0123456789abcdef0123456789abcdef',
      heartbeatMs: 3_600_000,
      retryMs: 20,
      transport: (events: Ev[], leaving: boolean) => {
        tries.push({ seqs: events.map((e) => e.seq), leaving, at: Date.now() - t0 });
        return Promise.resolve(leaving ? true : answers.shift() ?? true);
      },
    });
    video.fire('play');
    tracker.flush(false);
    await new Promise((r) => setTimeout(r, 400));
    // Offline, then Retry-After 30 ms, then a 5xx, then taken: the same batch four times, spaced.
    assert.deepEqual(tries.map((x) => x.seqs), [[0], [0], [0], [0]]);
    assert.ok(tries[1].at - tries[0].at >= 18 && tries[2].at - tries[1].at >= 28 && tries[3].at - tries[2].at >= 75, JSON.stringify(tries));

    // A batch waiting for its retry leaves with the page.
    answers.push(false);
    video.fire('pause');
    tracker.flush(false);
    await new Promise((r) => setTimeout(r, 5));
    tracker.end();
    await new Promise((r) => setTimeout(r, 50));
    const last = tries.slice(4);
    assert.deepEqual(last.map((x) => [x.seqs, x.leaving]), [[[1], false], [[1], true], [[2], true]]);
  });

  it('refuses to attach without a subject', () => {
    assert.throws(() => sdk.attach(new FakeVideo(), {}), /subject/);
  });
});
