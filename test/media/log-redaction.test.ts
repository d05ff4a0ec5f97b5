import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import request from 'supertest';
import { createApp } from '../../api/app';
import { createLogger } from '../../lib/logger';
import { redactUrl } from '../../lib/redact';
import { startStack, type Stack } from '../support/stack';

describe('request log: tokens are redacted (SPEC §12)', function () {
  this.timeout(60_000);
  let stack: Stack;
  const lines: string[] = [];
  let app: ReturnType<typeof createApp>;

  before(async () => {
    stack = await startStack({ workers: [] });
    const sink = new Writable({
      write(chunk, _enc, cb) {
        lines.push(...String(chunk).split('\n').filter(Boolean));
        cb();
      },
    });
    // The real app on the stack's real deps, logging into the sink.
    app = createApp({ config: stack.config, db: stack.db, storage: stack.storage, temporal: stack.temporal, log: createLogger('info', 'api', sink) });
  });

  it('redacts upload tokens, playback tokens in CDN paths and ?token= in the player', async () => {
    const agent = request(app.callback());
    const init = await agent
      .post('/v1/upload/init')
      .set('Authorization', `Bearer ${stack.ws.fullKey}`)
      .send({ filename: 'a.mp4', size: 4, content_type: 'video/mp4' });
    assert.equal(init.status, 201, JSON.stringify(init.body));
    const uploadPath = new URL(init.body.upload_url).pathname;
    const uploadToken = uploadPath.split('/').pop() as string;
    assert.ok(uploadToken.length > 20);
    await agent.put(uploadPath).set('Content-Type', 'video/mp4').send(Buffer.from('abcd'));

    const playbackToken = 'eyJhbGciOiJIUzI1NiIsImtpZCI6ImsxIn0.eyJzdWIiOiJ4In0.c2lnbmF0dXJlLXNlY3JldC12YWx1ZQ';
    await agent.get(`/cdn/v/${playbackToken}/master.m3u8`);
    await agent.get(`/cdn/v/${playbackToken}/240p/seg_00000.ts`);
    await agent.get(`/player/embed/${init.body.video_id}?token=${playbackToken}&autoplay=1`);
    await agent.get(`/cdn/v/${init.body.video_id}/master.m3u8`);

    const requests = lines.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    assert.ok(requests.length >= 6, JSON.stringify(requests));
    const all = lines.join('\n');
    assert.ok(!all.includes(uploadToken), 'upload token in the log');
    assert.ok(!all.includes(playbackToken), 'playback token in the log');
    assert.ok(!all.includes(stack.ws.fullKey), 'API key in the log');
    const paths = requests.map((r) => r.path as string);
    assert.ok(paths.includes('/storage/upload/[redacted]'), paths.join(' '));
    assert.ok(paths.includes('/cdn/v/[redacted]/master.m3u8'), paths.join(' '));
    assert.ok(paths.includes('/cdn/v/[redacted]/240p/seg_00000.ts'), paths.join(' '));
    assert.ok(paths.includes(`/player/embed/${init.body.video_id}?token=[redacted]&autoplay=1`), paths.join(' '));
    // Public ids are not secrets and stay readable.
    assert.ok(paths.includes(`/cdn/v/${init.body.video_id}/master.m3u8`), paths.join(' '));
  });

  it('redactUrl keeps everything else as it was', () => {
    assert.equal(redactUrl('/v1/videos?limit=5&cursor=abc'), '/v1/videos?limit=5&cursor=abc');
    assert.equal(redactUrl('/api/v1/storage/upload/abc.def.ghi'), '/api/v1/storage/upload/[redacted]');
    assert.equal(redactUrl('/x?X-Amz-Signature=deadbeef&X-Amz-Credential=AK%2F1&a=1'), '/x?X-Amz-Signature=[redacted]&X-Amz-Credential=[redacted]&a=1');
    assert.equal(redactUrl('/cdn/v/0194f0b2-7c3a-7d1e-9a6b-1c2d3e4f5a6b/thumbnail.jpg'), '/cdn/v/0194f0b2-7c3a-7d1e-9a6b-1c2d3e4f5a6b/thumbnail.jpg');
    assert.equal(redactUrl('/cdn/v/%ZZ/x'), '/cdn/v/[redacted]/x');
    // A tus upload resource is a capability URL; the creation endpoint itself has no token.
    assert.equal(redactUrl('/v1/upload/tus/ws_1~abc~tus-n0nce'), '/v1/upload/tus/[redacted]');
    assert.equal(redactUrl('/upload/tus'), '/upload/tus');
  });
});
