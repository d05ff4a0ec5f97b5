import assert from 'node:assert/strict';
import { type LiveStack, pushRtmp, startLiveStack, waitFor, waitLive } from './helpers';

describe('live: the S3 storage driver', function () {
  this.timeout(120_000);
  let s: LiveStack;
  before(async () => {
    s = await startLiveStack({ storage: 's3' });
  });
  after(() => s?.close());

  it('live segments go to S3, play from the CDN, and the recording is made of them', async () => {
    assert.equal(s.storage.driver, 's3');
    const ls = (await s.post('/v1/live-streams', { reconnect_window: 5 }).expect(201)).body;
    const push = pushRtmp(`${s.rtmpBase}/${ls.stream_key}`, { seconds: 30 });
    try {
      const active = await waitLive(s, ls.id);
      const media = await (await fetch(ls.hls_url.replace('master.m3u8', 'source/index.m3u8'))).text();
      const seg = /^(seg_\d{6}\.ts)$/m.exec(media)![1];
      const body = await fetch(ls.hls_url.replace('master.m3u8', `source/${seg}`));
      assert.equal(body.status, 200);
      const keys = await s.storage.list(`videos/${s.ws.id}/`);
      assert.ok(keys.some((k) => k.endsWith(`/hls/source/${seg}`)), 'the segment is not in the bucket');
      await s.post(`/v1/live-streams/${ls.id}/complete`).expect(200);
      const video = await waitFor('ready', async () => {
        const v = (await s.get(`/v1/videos/${active.active_video_id}`).expect(200)).body;
        return v.status === 'ready' && v;
      }, 30_000);
      const vod = await (await fetch(video.hls_url.replace('master.m3u8', 'source/index.m3u8'))).text();
      assert.ok(vod.includes(seg), 'the recording does not reuse the live segments');
      assert.equal((await fetch(video.thumbnail_url)).status, 200);
    } finally {
      push.stop();
    }
  });
});
