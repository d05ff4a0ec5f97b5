import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type { Client } from '@temporalio/client';
import { mediaActivities } from '../../activities/transcode/media';
import { loadConfig } from '../../lib/config';
import { createLogger } from '../../lib/logger';
import { planLadder } from '../../lib/media/ladder';
import { keys, LocalStorage } from '../../lib/storage';
import { makeClip } from '../support/media';
import { noMarksDb } from '../support/no-marks-db';

// Expected failures are logged by the SDK at WARN; keep the report readable.
const mockEnv = () => new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });

/** One activity at a time, in a mock activity context, on real ffmpeg and a local storage dir. */
describe('media activities (MockActivityEnvironment)', function () {
  this.timeout(60_000);
  let dir: string;
  let storage: LocalStorage;
  const signals: unknown[] = [];
  const fakeClient = { workflow: { getHandle: () => ({ signal: async (_def: unknown, arg: unknown) => signals.push(arg) }) } } as unknown as Client;

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-act-'));
    storage = new LocalStorage(dir, 'http://x', new TextEncoder().encode('x'.repeat(32)));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const acts = (preset = 'ultrafast') =>
    mediaActivities({
      config: loadConfig({ X264_PRESET: preset, DATA_DIR: dir }),
      db: noMarksDb,
      storage,
      temporal: fakeClient,
      log: createLogger('silent'),
    });

  it('transcodeRendition heartbeats rising progress and publishes segments, then the playlist', async () => {
    const clip = await makeClip({ width: 640, height: 360, seconds: 4 });
    await storage.putFile('originals/w/v/a.mp4', clip);
    const env = mockEnv();
    const beats: Array<{ progress: number }> = [];
    env.on('heartbeat', (d) => beats.push(d));
    const [rung] = planLadder({ width: 640, height: 360 });
    const r: { segments: number } = await env.run(acts('veryfast').transcodeRendition, {
      workspaceId: 'w',
      videoId: 'v',
      storageKey: 'originals/w/v/a.mp4',
      rung,
      hasAudio: true,
      fps: 24,
      durationSeconds: 4,
    });
    assert.ok(r.segments >= 1);
    const listed = await storage.list(keys.rendition('w', 'v', '240p'));
    assert.ok(listed.some((k) => k.endsWith('index.m3u8')));
    assert.equal(listed.filter((k) => k.endsWith('.ts')).length, r.segments);
    const progress = beats.map((b) => b.progress).filter((p) => typeof p === 'number');
    assert.ok(progress.length >= 1, 'heartbeats carry progress');
    assert.deepEqual(progress, [...progress].sort((a, b) => a - b), 'progress never goes back');
    assert.ok(progress.every((p) => p >= 0 && p <= 100));
  });

  it('cancellation reaches ffmpeg: the activity stops early, removes its temp dir and publishes nothing', async () => {
    const clip = await makeClip({ width: 1280, height: 720, seconds: 12 });
    await storage.putFile('originals/w/c/a.mp4', clip);
    // A private TMPDIR: encodes of other tests may still run in this process and use the shared one.
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-tmpdir-'));
    const savedTmp = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    const env = mockEnv();
    let cancelled = false;
    env.on('heartbeat', () => {
      if (!cancelled) {
        cancelled = true;
        setTimeout(() => env.cancel(), 300);
      }
    });
    const started = Date.now();
    const run = env.run(acts('medium').transcodeRendition, {
        workspaceId: 'w',
        videoId: 'c',
        storageKey: 'originals/w/c/a.mp4',
        rung: planLadder({ width: 1280, height: 720 })[3],
        hasAudio: true,
        fps: 24,
        durationSeconds: 12,
      });
    try {
      await assert.rejects(run);
    } finally {
      if (savedTmp === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = savedTmp;
    }
    assert.ok(Date.now() - started < 15_000, 'stopped well before a full encode');
    assert.deepEqual(fs.readdirSync(tmp), [], 'temp dir removed');
    fs.rmSync(tmp, { recursive: true, force: true });
    assert.deepEqual(await storage.list(keys.rendition('w', 'c', '720p')), [], 'nothing published');
  });

  it('probeSource turns undecodable input into a non-retryable invalid_media failure', async () => {
    await storage.put('originals/w/bad/a.mp4', 'definitely not a video');
    const env = mockEnv();
    await assert.rejects(env.run(acts().probeSource, { storageKey: 'originals/w/bad/a.mp4' }), (err: { type?: string; nonRetryable?: boolean }) => {
      assert.equal(err.type, 'invalid_media');
      assert.equal(err.nonRetryable, true);
      return true;
    });
  });
});
