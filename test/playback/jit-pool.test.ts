import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../lib/config';
import { createDb, type Db } from '../../lib/db';
import { newVideoUuid } from '../../lib/ids';
import { createWorkspace } from '../../lib/keys';
import { JIT_PRESETS, jitPlaylist, type JitPlan } from '../../lib/media/jit';
import { planEncodeSegments } from '../../lib/media/jitEncode';
import { createMediaTools } from '../../lib/media/tools';
import { createJitCutter, jitCuts } from '../../lib/playback/jit';
import { jitPlanKey } from '../../lib/playback/jitPlan';
import { keys, LocalStorage } from '../../lib/storage';
import { testDatabase } from '../support/hooks';
import { makeClip } from '../support/media';

/**
 * Issue 45: a just-in-time cut held a transaction, and so a connection of the API's pool, for its
 * whole ffmpeg run (the advisory lock was a transaction's), so cuts under load took the pool and
 * every other query of that API process waited behind the encodes. Ten cuts at once on a pool of
 * two must leave it free: a plain query answers while they run.
 */
describe('just-in-time cuts leave the API\u2019s pool alone (issue 45)', function () {
  this.timeout(180_000);
  let db: Db;
  let dir: string;

  before(async () => {
    db = createDb((await testDatabase()).url, 2);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vidhost-jit-pool-'));
  });
  after(async () => {
    await db.destroy();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('ten concurrent cuts on a pool of two: a plain query still answers at once', async () => {
    const config = loadConfig({ DATA_DIR: dir, NODE_ENV: 'test' });
    const storage = new LocalStorage(dir, 'http://x', new TextEncoder().encode('x'.repeat(32)));
    const ws = await createWorkspace(db, 'jit-pool');
    const video = newVideoUuid();
    const storageKey = `originals/${ws.id}/${video}/a.mp4`;
    await db('videos').insert({ id: video, workspace_id: ws.id, title: 'pool', status: 'ready', filename: 'a.mp4', storage_key: storageKey });
    // 1080p HEVC into 720p: each cut is an encode of a second or more, so ten overlap.
    const clip = await makeClip({ width: 1920, height: 1080, seconds: 20, fps: 24, gop: 48, codec: 'hevc', audio: false });
    await storage.putFile(storageKey, clip, { contentType: 'video/mp4' });
    const planned = planEncodeSegments([0, 2, 4, 6, 8, 10, 12, 14, 16, 18], 20)!;
    const encode = { width: 1280, height: 720, videoBitrate: 2_800_000, maxrate: 2_996_000, bufsize: 4_200_000, fps: 24, preset: JIT_PRESETS[2], crf: 23 };
    const plan: JitPlan = { version: 1, storageKey, demuxer: 'mov', kind: 'video', offset: 0, start: 0, ...planned, durationSeconds: 20, encode };
    const prefix = keys.rendition(ws.id, video, '720p');
    await storage.put(jitPlanKey(prefix), JSON.stringify(plan), { contentType: 'application/json' });
    await storage.put(`${prefix}index.m3u8`, jitPlaylist(plan), { contentType: 'application/vnd.apple.mpegurl' });

    const cutter = createJitCutter({ storage, media: createMediaTools(config.media), db, limits: { concurrency: 10, queueMax: 64, timeoutMs: 120_000 }, formatCheck: true });
    try {
      const before = jitCuts.count;
      const cuts = planned.boundaries.map((_, i) => cutter.ensure(ws.id, video, '720p', `seg_0000${i}.ts`));
      // While they run (each holds its segment's lock), the API's own queries are not queued behind them.
      const waits: number[] = [];
      while (jitCuts.count - before < 2) {
        const t0 = performance.now();
        await db.raw('select 1');
        waits.push(performance.now() - t0);
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.deepEqual(await Promise.all(cuts), planned.boundaries.map(() => 'cut'));
      // Held by the cuts, the pool answered one query in all that time (it waited for a cut to end);
      // free, it answers every 50 ms. (A rare slow one is this process spawning ten sandboxes, not the pool.)
      const sorted = [...waits].sort((a, b) => a - b);
      const median = sorted[Math.floor(sorted.length / 2)];
      // The count is what a held pool cannot fake: the loop ends after two cuts, and a pool held by
      // the cuts answers each query only when a cut ends (≤ 2 queries). The median bounds the rest
      // loosely: on a machine at load 20 (CI's three shards), half the queries took over 250 ms.
      assert.ok(waits.length >= 10, `queried ${waits.length} times during the cuts: ${waits.map(Math.round).join(', ')}`);
      assert.ok(median < 1000, `half of the plain queries took under ${Math.round(median)} ms: ${waits.map(Math.round).join(', ')}`);
      for (let i = 0; i < planned.boundaries.length; i++) assert.ok((await storage.head(`${prefix}seg_0000${i}.ts`))!.size > 1000);
    } finally {
      await cutter.close();
    }
  });
});
