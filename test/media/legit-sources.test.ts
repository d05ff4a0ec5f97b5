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
import { putFile } from '../support/flow';
import { ffprobeJson } from '../support/media';
import { legitSources, type Source } from '../support/sources';
import { startStack, type Stack } from '../support/stack';
import { noMarksDb } from '../support/no-marks-db';

const mockEnv = () => new MockActivityEnvironment(undefined, { logger: new DefaultLogger('ERROR') });
const fakeClient = { workflow: { getHandle: () => ({ signal: async () => undefined }) } } as unknown as Client;

/** Legitimate sources keep working under the allow-lists and the sandbox (issue 9). */
describe('legitimate sources under the hostile-media rules', function () {
  this.timeout(300_000);
  let sources: Source[];
  let dir: string;
  let storage: LocalStorage;

  before(async () => {
    sources = await legitSources();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-legit-'));
    storage = new LocalStorage(dir, 'http://x', new TextEncoder().encode('x'.repeat(32)));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('each is probed, thumbnailed and encoded to its first rung by the activities', async () => {
    const acts = mediaActivities({ config: loadConfig({ X264_PRESET: 'ultrafast', DATA_DIR: dir, NODE_ENV: 'test' }), db: noMarksDb, storage, temporal: fakeClient, log: createLogger('silent') });
    const failures: string[] = [];
    for (const [i, s] of sources.entries()) {
      const key = `originals/w/v${i}/${path.basename(s.file)}`;
      await storage.putFile(key, s.file);
      try {
        const info = (await mockEnv().run(acts.probeSource, { storageKey: key })) as Awaited<ReturnType<typeof acts.probeSource>>;
        const [rung] = planLadder({ width: info.width, height: info.height, rotation: info.rotation });
        await mockEnv().run(acts.makeThumbnail, { workspaceId: 'w', videoId: `v${i}`, storageKey: key, durationSeconds: info.durationSeconds });
        await mockEnv().run(acts.transcodeRendition, { workspaceId: 'w', videoId: `v${i}`, storageKey: key, rung, hasAudio: info.hasAudio, fps: info.fps, durationSeconds: info.durationSeconds });
        assert.ok(await storage.head(keys.thumbnail('w', `v${i}`)), 'thumbnail');
        const seg = path.join(dir, keys.rendition('w', `v${i}`, rung.name), 'seg_00000.ts');
        const probed = await ffprobeJson(seg);
        const video = probed.streams.find((x) => x.codec_type === 'video');
        assert.equal(video?.codec_name, 'h264');
        assert.equal(probed.streams.some((x) => x.codec_type === 'audio'), s.audio, 'audio kept');
        if (s.portrait) assert.ok(Number(video?.height) > Number(video?.width), `portrait output, got ${video?.width}x${video?.height}`);
      } catch (err) {
        failures.push(`${s.name}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    assert.deepEqual(failures, []);
  });

  describe('through the real upload flow', () => {
    let stack: Stack;
    before(async () => {
      stack = await startStack();
    });

    async function uploadAndSettle(s: Source): Promise<Record<string, any>> {
      const size = fs.statSync(s.file).size;
      const init = await stack.post('/v1/upload/init', { filename: path.basename(s.file), size, content_type: s.contentType });
      assert.equal(init.status, 201, JSON.stringify(init.body));
      const put = await putFile(init.body.upload_url, s.file, s.contentType, init.body.upload_headers);
      assert.equal(put.status, 200);
      assert.equal((await stack.post('/v1/upload/complete', { video_id: init.body.video_id })).status, 202);
      const deadline = Date.now() + 120_000;
      for (;;) {
        const v = (await stack.get(`/v1/videos/${init.body.video_id}`)).body;
        if (v.status === 'failed' || (v.status === 'ready' && v.renditions.every((r: { status: string }) => r.status === 'ready'))) return v;
        if (Date.now() > deadline) throw new Error(`${s.name} did not settle: ${JSON.stringify(v)}`);
        await new Promise((r) => setTimeout(r, 300));
      }
    }

    it('HEVC 10-bit rotated, VP9/Opus WebM and MJPEG AVI reach ready and play (portrait stays portrait)', async () => {
      const picked = sources.filter((s) => /HEVC|WebM|AVI/.test(s.name));
      assert.equal(picked.length, 3);
      const reads = await Promise.all(picked.map(uploadAndSettle));
      for (const [i, v] of reads.entries()) {
        assert.equal(v.status, 'ready', `${picked[i].name}: ${JSON.stringify(v)}`);
        const master = await fetch(v.hls_url);
        assert.equal(master.status, 200);
        const text = await master.text();
        assert.match(text, /#EXT-X-STREAM-INF/);
        if (picked[i].portrait) {
          assert.ok(v.renditions.every((r: { width: number; height: number }) => r.height > r.width), JSON.stringify(v.renditions));
        }
      }
    });
  });
});
