import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDb } from '../../lib/db';
import { createLogger } from '../../lib/logger';
import { FileCache } from '../../lib/playback/fileCache';
import { LocalStorage } from '../../lib/storage/local';
import { testDatabase } from '../support/hooks';

/** FileCache on a real storage directory and a real LISTEN connection. */
describe('hot: CDN file cache', () => {
  let dir: string;
  let cache: FileCache;
  let storage: LocalStorage;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-filecache-'));
    storage = new LocalStorage(dir, 'http://127.0.0.1:1', new TextEncoder().encode('secret-secret-secret'));
    // 1.6 KB in all, so at most 100 bytes a file.
    cache = new FileCache(storage, 1600, 60_000, (await testDatabase()).url, createLogger('silent'));
    await storage.put('probe', Buffer.from('p'));
    for (let i = 0; i < 100 && !(await cache.get('v0', 'probe')); i++) await new Promise((r) => setTimeout(r, 20)); // LISTEN up
    cache.dropVideo('v0');
  });
  after(async () => {
    await cache.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('keeps a small file, passes over a big one (the route streams it), and evicts the oldest past its budget', async () => {
    await storage.put('small', Buffer.alloc(100, 1));
    await storage.put('big', Buffer.alloc(101, 2));
    assert.equal((await cache.get('v1', 'small'))?.body.length, 100);
    await storage.put('small', Buffer.alloc(100, 9)); // behind its back: still the kept copy
    assert.equal((await cache.get('v1', 'small'))?.body[0], 1);
    assert.equal(await cache.get('v1', 'big'), null);
    assert.equal(await cache.get('v1', 'missing'), null);
    // Sixteen more files of 100 bytes: the budget (1600) pushes the first out.
    for (let i = 0; i < 16; i++) {
      await storage.put(`f${i}`, Buffer.alloc(100, 3));
      assert.ok(await cache.get('v2', `f${i}`));
    }
    assert.equal((await cache.get('v1', 'small'))?.body[0], 9, 'the oldest entry was not evicted');
    cache.dropVideo('v1');
  });

  it('drops a video’s files when it is dropped (the routes) or notified (every process)', async () => {
    await storage.put('a', Buffer.from('one'));
    assert.equal(String((await cache.get('v3', 'a'))?.body), 'one');
    await storage.put('a', Buffer.from('two'));
    cache.dropVideo('v3');
    assert.equal(String((await cache.get('v3', 'a'))?.body), 'two');
    await storage.put('a', Buffer.from('three'));
    const db = createDb((await testDatabase()).url, 1);
    try {
      await db.raw("select pg_notify('vidhost_playback', 'video:v3')");
    } finally {
      await db.destroy();
    }
    for (let i = 0; i < 100 && String((await cache.get('v3', 'a'))?.body) !== 'three'; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(String((await cache.get('v3', 'a'))?.body), 'three');
  });
});
