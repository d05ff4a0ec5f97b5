import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import request from 'supertest';
import { createApp } from '../../api/app';
import { imageRequest } from '../../api/cdn/outputs/images';
import { ApiError } from '../../api/errors';
import { createLogger } from '../../lib/logger';
import { startStack, type Stack } from '../support/stack';

const b64 = (s: string) => Buffer.from(s).toString('base64');

// Issue 22 item 12, the smaller ones: content types, image parameters, the tus nonce in logs.
describe('security: smaller input and log checks', function () {
  this.timeout(120_000);
  let s: Stack;
  before(async () => {
    s = await startStack({ workers: [] });
  });

  it('takes JSON bodies only as application/json or a +json type', async () => {
    const post = (type: string) => request(s.url).post('/v1/folders').set('Authorization', `Bearer ${s.ws.fullKey}`).set('Content-Type', type).send(JSON.stringify({ name: `f ${type}` }));
    for (const type of ['text/plain; x=json', 'text/plain;charset=json', 'application/jsonp', 'text/json', 'application/x-json-stream', 'multipart/form-data; boundary=json']) {
      const res = await post(type);
      assert.equal(res.status, 400, `${type}: ${res.status}`);
      assert.equal(res.body.error.code, 'unsupported_content_type', type);
    }
    for (const type of ['application/json', 'Application/JSON; charset=utf-8', 'application/merge-patch+json', 'application/vnd.api+json ; charset=utf-8']) {
      assert.equal((await post(type)).status, 201, type);
    }
  });

  it('refuses hex, exponents and empty values in image parameters', () => {
    const bad: Array<[string, Record<string, string>]> = [
      ['thumbnail', { width: '0x10' }],
      ['thumbnail', { height: '0x20' }],
      ['thumbnail', { time: '' }],
      ['thumbnail', { time: '1e1' }],
      ['thumbnail', { time: ' 2' }],
      ['animated', { fps: '0x5' }],
      ['animated', { start: '' }],
      ['animated', { end: '0b11' }],
      ['animated', { width: '' }],
    ];
    for (const [kind, query] of bad) {
      assert.throws(
        () => imageRequest({ kind: kind as 'thumbnail' | 'animated', ext: kind === 'thumbnail' ? 'jpg' : 'gif' }, query, 30),
        (err: unknown) => err instanceof ApiError && err.status === 400 && err.code === 'invalid_parameters',
        `${kind} ${JSON.stringify(query)}`,
      );
    }
    const ok = imageRequest({ kind: 'thumbnail', ext: 'jpg' }, { width: '16', time: '2.5' }, 30);
    assert.deepEqual([ok.kind, ok.kind === 'thumbnail' && ok.width, ok.kind === 'thumbnail' && ok.time], ['thumbnail', 16, 2.5]);
  });

  it('never writes a tus upload\'s nonce to the log, terminated or not', async () => {
    const lines: string[] = [];
    const sink = new Writable({
      write(chunk, _enc, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const app = createApp({ config: s.config, db: s.db, storage: s.storage, temporal: s.temporal, log: createLogger('debug', 'capture', sink) });
    const server = http.createServer(app.callback());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const created = await request(url)
        .post('/v1/upload/tus')
        .set('Authorization', `Bearer ${s.ws.fullKey}`)
        .set('Tus-Resumable', '1.0.0')
        .set('Upload-Length', '1000')
        .set('Upload-Metadata', `filename ${b64('a.mp4')},filetype ${b64('video/mp4')}`)
        .expect(201);
      const location = new URL(created.headers.location);
      const nonce = /tus-[A-Za-z0-9_-]+$/.exec(location.pathname)?.[0];
      assert.ok(nonce, location.pathname);
      await request(url).patch(location.pathname).set('Tus-Resumable', '1.0.0').set('Upload-Offset', '0').set('Content-Type', 'application/offset+octet-stream').send(Buffer.alloc(100));
      await request(url).delete(location.pathname).set('Tus-Resumable', '1.0.0').expect(204);
      await new Promise((r) => setTimeout(r, 200));
      assert.ok(lines.some((l) => l.includes('"method":"DELETE"')), 'the log was captured');
      const leaks = lines.filter((l) => l.includes(nonce.slice(4)));
      assert.deepEqual(leaks, [], 'the nonce is in the log');
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await app.close();
    }
  });
});
