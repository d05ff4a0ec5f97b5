import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { LocalStorage, S3Storage, sanitizeFilename, type Storage } from '../../lib/storage';
import { randomToken } from '../../lib/ids';
import { s3Server } from '../support/hooks';
import { startStack, type Stack } from '../support/stack';

async function text(body: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of body) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks).toString('utf8');
}

const put = (url: string, body: Buffer | string, headers: Record<string, string>) => fetch(url, { method: 'PUT', body: body as BodyInit, headers });

/** One suite, both drivers: whatever one driver promises, the other keeps. */
for (const driver of ['local', 's3'] as const) {
  describe(`storage driver: ${driver}`, function () {
    let stack: Stack;
    let storage: Storage;
    before(async function () {
      this.timeout(120_000);
      // The local driver's upload URLs are served by the API, so it runs inside a stack.
      stack = await startStack({ storage: driver, workers: [] });
      storage = stack.storage;
    });

    it('accepts an upload through the presigned URL with the declared type and size', async () => {
      const key = `originals/t/${randomToken(4)}/a.mp4`;
      const body = Buffer.from('0123456789abcdef');
      const up = await storage.presignPut(key, { contentType: 'video/mp4', contentLength: body.length, expiresIn: 60 });
      const r = await put(up.url, body, up.headers);
      assert.equal(r.status, 200, await r.text());
      const { etag, ...info } = (await storage.head(key))!;
      assert.deepEqual(info, { size: 16, contentType: 'video/mp4' });
      assert.match(etag ?? '', /^"[^"]+"$/, 'a quoted validator for If-None-Match');
      const range = await storage.get(key, { start: 2, end: 5 });
      assert.equal(await text(range!.body), '2345');
    });

    it('rejects more bytes than declared', async () => {
      const key = `originals/t/${randomToken(4)}/big.mp4`;
      const up = await storage.presignPut(key, { contentType: 'video/mp4', contentLength: 10, expiresIn: 60 });
      const r = await put(up.url, Buffer.alloc(20, 1), up.headers);
      assert.ok(r.status >= 400 && r.status < 500, `status ${r.status}`);
      assert.equal(await storage.head(key), null);
    });

    it('rejects another content type', async () => {
      const key = `originals/t/${randomToken(4)}/type.mp4`;
      const up = await storage.presignPut(key, { contentType: 'video/mp4', contentLength: 4, expiresIn: 60 });
      const r = await put(up.url, 'abcd', { 'Content-Type': 'text/html' });
      assert.ok(r.status >= 400 && r.status < 500, `status ${r.status}`);
      assert.equal(await storage.head(key), null);
    });

    it('rejects an expired URL', async () => {
      const key = `originals/t/${randomToken(4)}/late.mp4`;
      const up = await storage.presignPut(key, { contentType: 'video/mp4', contentLength: 4, expiresIn: 1 });
      await new Promise((r) => setTimeout(r, 2100));
      const r = await put(up.url, 'abcd', up.headers);
      assert.equal(r.status, 403);
      assert.equal(await storage.head(key), null);
    });

    it('lists and deletes by prefix; a missing object is null', async () => {
      const prefix = `videos/t/${randomToken(4)}/`;
      await storage.put(`${prefix}hls/master.m3u8`, '#EXTM3U\n', { contentType: 'application/vnd.apple.mpegurl' });
      await storage.put(`${prefix}hls/240p/seg_00000.ts`, Buffer.alloc(100));
      await storage.put(`${prefix}thumbnail.jpg`, Readable.from([Buffer.from([0xff, 0xd8, 0xff])]));
      assert.deepEqual(await storage.list(prefix), [`${prefix}hls/240p/seg_00000.ts`, `${prefix}hls/master.m3u8`, `${prefix}thumbnail.jpg`]);
      assert.equal(await storage.deletePrefix(prefix), 3);
      assert.deepEqual(await storage.list(prefix), []);
      assert.equal(await storage.deletePrefix(prefix), 0);
      assert.equal(await storage.get(`${prefix}thumbnail.jpg`), null);
    });

    it('refuses keys that could escape the root', async () => {
      for (const key of ['../etc/passwd', '/abs', 'a/../../b', 'a//b', 'a\\b']) {
        await assert.rejects(storage.put(key, 'x'), /unsafe storage key/, key);
      }
    });
  });
}

describe('storage: local driver tokens', () => {
  it('a token signed with another secret is refused', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-local-'));
    const a = new LocalStorage(dir, 'http://x', new TextEncoder().encode('a'.repeat(32)));
    const b = new LocalStorage(dir, 'http://x', new TextEncoder().encode('b'.repeat(32)));
    const up = await a.presignPut('originals/w/v/a.mp4', { contentType: 'video/mp4', contentLength: 1, expiresIn: 60 });
    const token = up.url.split('/').pop()!;
    await assert.rejects(b.acceptUpload(token, 'video/mp4', 1, Readable.from([Buffer.from('x')])), /not valid/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});

describe('storage: S3 readiness', () => {
  it('check() fails for a bucket that does not exist and passes once created', async function () {
    this.timeout(60_000);
    const s3 = await s3Server();
    const storage = new S3Storage({ endpoint: s3.endpoint, region: 'us-east-1', bucket: `nb-${Date.now()}`, accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, forcePathStyle: true });
    await assert.rejects(storage.check());
    await storage.ensureBucket();
    await storage.check();
  });
});

describe('sanitizeFilename', () => {
  it('strips separators, dot-segments and control characters, and bounds the length', () => {
    assert.equal(sanitizeFilename('../../etc/passwd'), 'passwd');
    assert.equal(sanitizeFilename('..\\..\\win.ini'), 'win.ini');
    assert.equal(sanitizeFilename('a\u0000b\u001f.mp4'), 'ab.mp4');
    assert.equal(sanitizeFilename('..'), 'video');
    assert.equal(sanitizeFilename('.hidden.mp4'), 'hidden.mp4');
    assert.equal(sanitizeFilename('my video (1).mp4'), 'my video _1_.mp4');
    assert.ok(Buffer.byteLength(sanitizeFilename('é'.repeat(300))) <= 255);
  });
});
