import assert from 'node:assert/strict';
import { Worker } from '@temporalio/worker';
import type { Activities } from '../../activities';
import { completeUploadUpdate, deleteVideoSignal, videoStateQuery, type VideoWorkflowInput } from '../../workflows/defs';
import { temporalEnv } from '../support/hooks';
import { workflowBundle } from '../support/stack';
import { randomToken } from '../../lib/ids';

/**
 * The workflow alone, with stubbed activities: the order of steps and events, not ffmpeg.
 * (The pipeline tests run the same workflow with the real activities.)
 */
function stubs(log: string[], probe: Partial<Awaited<ReturnType<Activities['probeSource']>>> = {}): Partial<Activities> {
  const rec = (name: string) => async (arg: unknown) => {
    log.push(`${name}${summary(name, arg)}`);
  };
  return {
    recordState: rec('recordState') as Activities['recordState'],
    recordMetadata: rec('recordMetadata') as Activities['recordMetadata'],
    recordRendition: async () => undefined,
    emitEvent: (async (p: { type: string }) => {
      log.push(`event:${p.type}`);
      return { deliveries: 0 };
    }) as Activities['emitEvent'],
    originalExists: async () => true,
    probeSource: (async () => ({
      durationSeconds: 10,
      width: 1920,
      height: 1080,
      rotation: 0,
      fps: 30,
      videoCodec: 'h264',
      hasAudio: true,
      formatName: 'mp4',
      sizeBytes: 1000,
      ...probe,
    })) as Activities['probeSource'],
    makeThumbnail: rec('thumbnail') as Activities['makeThumbnail'],
    transcodeRendition: (async (p: { rung: { name: string } }) => {
      log.push(`transcode:${p.rung.name}`);
      return { segments: 2 };
    }) as Activities['transcodeRendition'],
    publishMaster: (async (p: { rungs: Array<{ name: string }> }) => {
      log.push(`master:${p.rungs.map((r) => r.name).join('+')}`);
    }) as Activities['publishMaster'],
    deleteVideoFiles: (async () => {
      log.push('deleteFiles');
      return { deleted: 3 };
    }) as Activities['deleteVideoFiles'],
    purgeVideo: rec('purge') as Activities['purgeVideo'],
  };
}

function summary(name: string, arg: unknown): string {
  if (name === 'recordState') {
    const a = arg as { status?: string };
    return a.status ? `:${a.status}` : '';
  }
  return '';
}

describe('video workflow with stubbed activities', function () {
  this.timeout(60_000);

  it('runs renditions lowest first, republishes the master after each, and is ready after the first', async () => {
    const env = await temporalEnv();
    const taskQueue = `stub-${randomToken(4)}`;
    const log: string[] = [];
    const worker = await Worker.create({
      connection: env.nativeConnection,
      taskQueue,
      workflowBundle: await workflowBundle(),
      activities: stubs(log),
    });
    const input: VideoWorkflowInput = {
      videoId: '00000000-0000-7000-8000-000000000001',
      workspaceId: 'ws_test',
      storageKey: 'originals/ws_test/x/a.mp4',
      source: { kind: 'upload', declaredSize: 1000, contentType: 'video/mp4', uploadTimeoutMs: 60_000 },
      transcodeQueue: taskQueue,
    };
    await worker.runUntil(async () => {
      const handle = await env.client.workflow.start('videoWorkflow', { taskQueue, workflowId: `stub-${randomToken(6)}`, args: [input] });
      assert.equal((await handle.query(videoStateQuery)).status, 'pending_upload');
      const rejection = (type: string) => (err: { cause?: { type?: string } }) => err.cause?.type === type;
      await assert.rejects(handle.executeUpdate(completeUploadUpdate, { args: [{ objectSize: 999 }] }), rejection('upload_size_mismatch'));
      await assert.rejects(handle.executeUpdate(completeUploadUpdate, { args: [{ objectSize: null }] }), rejection('upload_missing'));
      assert.deepEqual(await handle.executeUpdate(completeUploadUpdate, { args: [{ objectSize: 1000 }] }), { status: 'processing', first: true });
      // A second complete, before the status is even written, is accepted as a repeat.
      assert.equal((await handle.executeUpdate(completeUploadUpdate, { args: [{ objectSize: 1000 }] })).first, false);
      // The final progress write comes after every rung has landed and been published.
      const finished = () => log.lastIndexOf('recordState') > log.indexOf('event:video.ready');
      for (let i = 0; i < 200 && !finished(); i++) await new Promise((r) => setTimeout(r, 50));
      const done = await handle.query(videoStateQuery);
      assert.equal(done.status, 'ready');
      assert.equal(done.progress, 100);
      await handle.signal(deleteVideoSignal);
      await handle.result();
    });
    // Up to "ready" the order is fixed; then the higher rungs run at once and land in any order.
    const readyAt = log.indexOf('event:video.ready');
    assert.deepEqual(log.slice(0, readyAt + 1), [
      'recordState:processing',
      'event:video.uploaded',
      'recordMetadata',
      'thumbnail',
      'transcode:240p',
      'master:240p',
      'recordState:ready',
      'event:video.ready',
    ]);
    const rest = log.slice(readyAt + 1);
    assert.deepEqual(rest.filter((l) => l.startsWith('transcode:')).sort(), ['transcode:1080p', 'transcode:360p', 'transcode:480p', 'transcode:720p']);
    const masters = rest.filter((l) => l.startsWith('master:')).map((l) => l.slice(7).split('+'));
    assert.equal(masters.length, 4);
    // One publication per landed rung, each with at least the rungs landed so far.
    masters.forEach((m, i) => assert.ok(m.length >= i + 2, `master ${i} lists ${m.join('+')}`));
    assert.deepEqual(masters[3], ['240p', '360p', '480p', '720p', '1080p'], 'lowest first in the playlist');
    assert.deepEqual(rest.slice(-4), ['recordState', 'deleteFiles', 'event:video.deleted', 'purge']);
  });

  it('a delete while waiting for the upload removes files and emits video.deleted without processing', async () => {
    const env = await temporalEnv();
    const taskQueue = `stub-${randomToken(4)}`;
    const log: string[] = [];
    const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities: stubs(log) });
    await worker.runUntil(async () => {
      const handle = await env.client.workflow.start('videoWorkflow', {
        taskQueue,
        workflowId: `stub-${randomToken(6)}`,
        args: [
          {
            videoId: '00000000-0000-7000-8000-000000000002',
            workspaceId: 'ws_test',
            storageKey: 'originals/ws_test/y/a.mp4',
            source: { kind: 'upload', declaredSize: 10, contentType: 'video/mp4', uploadTimeoutMs: 60_000 },
            transcodeQueue: taskQueue,
          } satisfies VideoWorkflowInput,
        ],
      });
      await handle.signal(deleteVideoSignal);
      await handle.result();
    });
    assert.deepEqual(log, ['deleteFiles', 'event:video.deleted', 'purge']);
  });
});
