import assert from 'node:assert/strict';
import request from 'supertest';
import { startStack, type Stack } from '../support/stack';

const NUL = '\u0000';
const b64 = (s: string) => Buffer.from(s).toString('base64');

// Issue 22 item 9: a NUL byte in any string field is a 400 `invalid_request`, never a 500.
describe('security: NUL bytes and hostile caption markup', function () {
  this.timeout(120_000);
  let s: Stack;
  let videoId: string;
  before(async () => {
    s = await startStack({ workers: [] });
    const init = await s.post('/v1/upload/init', { filename: 'a.mp4', size: 10, content_type: 'video/mp4', title: 'nul target' }).expect(201);
    videoId = init.body.video_id;
  });

  const refused = (res: request.Response, what: string) => {
    assert.equal(res.status, 400, `${what}: ${res.status} ${JSON.stringify(res.body)}`);
    assert.equal(res.body.error.code, 'invalid_request', what);
  };

  it('refuses NUL in every JSON body field with 400 invalid_request', async () => {
    const bodies: Array<[string, string, Record<string, unknown>, 'post' | 'patch']> = [
      ['folder name', '/v1/folders', { name: `a${NUL}b` }, 'post'],
      ['tag name', '/v1/tags', { name: `t${NUL}` }, 'post'],
      ['title', '/v1/upload/init', { filename: 'a.mp4', size: 10, content_type: 'video/mp4', title: `x${NUL}` }, 'post'],
      ['description', '/v1/upload/init', { filename: 'a.mp4', size: 10, content_type: 'video/mp4', description: `x${NUL}` }, 'post'],
      ['passthrough', '/v1/upload/init', { filename: 'a.mp4', size: 10, content_type: 'video/mp4', passthrough: `x${NUL}` }, 'post'],
      ['filename', '/v1/upload/init', { filename: `a${NUL}.mp4`, size: 10, content_type: 'video/mp4' }, 'post'],
      ['patched title', `/v1/videos/${videoId}`, { title: `x${NUL}` }, 'patch'],
      ['patched description', `/v1/videos/${videoId}`, { description: `x${NUL}` }, 'patch'],
      ['patched passthrough', `/v1/videos/${videoId}`, { passthrough: `x${NUL}` }, 'patch'],
      ['patched tags', `/v1/videos/${videoId}`, { tags: [`x${NUL}`] }, 'patch'],
      ['key name', '/v1/api-keys', { access: 'read', name: `k${NUL}` }, 'post'],
      ['webhook description', '/v1/webhooks', { url: 'http://127.0.0.1:9/h', description: `w${NUL}` }, 'post'],
      ['an object key', '/v1/folders', { [`na${NUL}me`]: 'x' }, 'post'],
    ];
    for (const [what, path, body, method] of bodies) refused(await (method === 'post' ? s.post(path, body) : s.patch(path, body)), what);
    const signIn = await request(s.url).post('/dashboard/session').set('Origin', s.url).send({ email: `a${NUL}@b.c`, password: 'whatever it is' });
    refused(signIn, 'sign-in email');
    assert.equal(await s.db('folders').where('name', 'like', 'a%b').first(), undefined);
  });

  it('refuses NUL in query parameters: q, tag, folder_id, caption label', async () => {
    for (const q of ['q=a%00b', 'tag=x%00', 'folder_id=%00', 'status=%00', 'cursor=%00']) refused(await s.get(`/v1/videos?${q}`), q);
    const label = await request(s.url)
      .put(`/v1/videos/${videoId}/captions/en?label=en%00glish`)
      .set('Authorization', `Bearer ${s.ws.fullKey}`)
      .set('Content-Type', 'text/vtt')
      .send('WEBVTT\n\n00:00.000 --> 00:01.000\nhello\n');
    refused(label, 'caption label');
  });

  it('refuses NUL in tus Upload-Metadata', async () => {
    const res = await request(s.url)
      .post('/v1/upload/tus')
      .set('Authorization', `Bearer ${s.ws.fullKey}`)
      .set('Tus-Resumable', '1.0.0')
      .set('Upload-Length', '100')
      .set('Upload-Metadata', `filename ${b64('a.mp4')},filetype ${b64('video/mp4')},title ${b64(`t${NUL}itle`)}`);
    refused(res, 'tus title');
  });

  it('answers 10,000 nested <b> in a caption file with 400 invalid_captions', async () => {
    const deep = `WEBVTT\n\n00:00.000 --> 00:01.000\n${'<b>'.repeat(10_000)}deep${'</b>'.repeat(10_000)}\n`;
    const res = await request(s.url).put(`/v1/videos/${videoId}/captions/en`).set('Authorization', `Bearer ${s.ws.fullKey}`).set('Content-Type', 'text/vtt').send(deep);
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.error.code, 'invalid_captions');
    assert.equal(res.body.error.details.line, 4);
    // Ordinary nesting still passes.
    const fine = await request(s.url)
      .put(`/v1/videos/${videoId}/captions/en`)
      .set('Authorization', `Bearer ${s.ws.fullKey}`)
      .set('Content-Type', 'text/vtt')
      .send('WEBVTT\n\n00:00.000 --> 00:01.000\n<b><i>fine</i></b>\n');
    assert.ok([200, 201].includes(fine.status), JSON.stringify(fine.body));
  });
});
