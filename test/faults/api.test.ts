import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import { makeClip } from '../support/media';
import { allReady, assertIntact, callRetrying, duplicateEvents, report, waitVideo } from './flow';
import { startFaultStack, type FaultStack } from './stack';

/** PUT the whole body, then SIGKILL the API the moment the last byte is on the wire. */
function putThenKill(url: string, body: Buffer, headers: Record<string, string>, kill: () => Promise<void>): Promise<{ status?: number; killed: Promise<void> }> {
  return new Promise((resolve) => {
    let killed: Promise<void> = Promise.resolve();
    const req = http.request(url, { method: 'PUT', headers: { ...headers, 'Content-Length': String(body.length) } }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode, killed }));
    });
    req.on('error', () => resolve({ killed }));
    req.end(body, () => {
      killed = kill();
    });
  });
}

describe('faults: API SIGKILL between an upload and its completion', function () {
  this.timeout(300_000);
  let s: FaultStack;
  let clip: string;

  before(async () => {
    s = await startFaultStack();
    clip = await makeClip({ width: 320, height: 180, seconds: 2 });
  });

  // Its APIs and workers would otherwise poll until the whole suite ends.
  after(() => s?.close());

  const restartApi = async () => {
    await s.apis[0].kill('SIGKILL');
    await s.startApi(s.apis[0].port);
  };
  const init = async () => {
    const size = fs.statSync(clip).size;
    const r = await callRetrying(s, 'POST', '/v1/upload/init', { filename: 'clip.mp4', size, content_type: 'video/mp4' });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    return r.body as { video_id: string; upload_url: string; upload_headers: Record<string, string> };
  };
  const videos: string[] = [];

  it('killed after the PUT answered, before complete: complete on the restarted API; processed once', async () => {
    const v = await init();
    const put = await fetch(v.upload_url, { method: 'PUT', body: fs.readFileSync(clip), headers: v.upload_headers });
    assert.equal(put.status, 200);
    await restartApi();
    const done = await callRetrying(s, 'POST', '/v1/upload/complete', { video_id: v.video_id });
    assert.equal(done.status, 202, JSON.stringify(done.body));
    await waitVideo(s, v.video_id, allReady);
    await assertIntact(s, v.video_id);
    videos.push(v.video_id);
  });

  it('killed with the last byte of the PUT on the wire: the client PUTs again (no answer came) and completes; processed once', async () => {
    const v = await init();
    const body = fs.readFileSync(clip);
    const first = await putThenKill(v.upload_url, body, v.upload_headers, () => s.apis[0].kill('SIGKILL'));
    await first.killed;
    await s.startApi(s.apis[0].port);
    if (first.status !== 200) {
      const again = await fetch(v.upload_url, { method: 'PUT', body, headers: v.upload_headers });
      assert.equal(again.status, 200, await again.text());
    }
    const done = await callRetrying(s, 'POST', '/v1/upload/complete', { video_id: v.video_id });
    assert.ok([200, 202].includes(done.status), JSON.stringify(done.body));
    await waitVideo(s, v.video_id, allReady);
    await assertIntact(s, v.video_id);
    videos.push(v.video_id);
  });

  it('killed while the complete is in flight: the client sends it again; one video.uploaded', async () => {
    const v = await init();
    const put = await fetch(v.upload_url, { method: 'PUT', body: fs.readFileSync(clip), headers: v.upload_headers });
    assert.equal(put.status, 200);
    const inFlight = s.call('POST', '/v1/upload/complete', { video_id: v.video_id }).catch(() => undefined);
    await new Promise((r) => setTimeout(r, 30));
    await restartApi();
    await inFlight;
    const again = await callRetrying(s, 'POST', '/v1/upload/complete', { video_id: v.video_id });
    assert.ok([200, 202].includes(again.status), JSON.stringify(again.body));
    await waitVideo(s, v.video_id, allReady);
    await assertIntact(s, v.video_id);
    videos.push(v.video_id);
    const fiveXX = s.seen.filter((x) => x.status >= 500).length;
    assert.equal(fiveXX, 0);
    report('API SIGKILL between upload and completion (single PUT)', { inFlight: videos.length, lost: 0, duplicateEvents: await duplicateEvents(s), fiveXX });
  });
});
