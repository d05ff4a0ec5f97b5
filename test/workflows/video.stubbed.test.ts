import assert from 'node:assert/strict';
import { Worker } from '@temporalio/worker';
import type { Activities } from '../../activities';
import { ApplicationFailure } from '@temporalio/common';
import { completeUploadUpdate, deleteVideoSignal, ladderProgressSignal, retryUpdate, videoStateQuery, type VideoWorkflowInput } from '../../workflows/video/defs';
import { temporalEnv } from '../support/hooks';
import { workflowBundle } from '../support/stack';
import { randomToken } from '../../lib/ids';

/**
 * The workflow alone, with stubbed activities: the order of steps and events, not ffmpeg.
 * (The pipeline tests run the same workflow with the real activities.)
 */
function stubs(log: string[], probe: Partial<Awaited<ReturnType<Activities['probeSource']>>> = {}, passthrough = true): Partial<Activities> {
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
    publishMaster: (async (p: { rungs: Array<{ name: string }>; extra?: Array<{ name: string }>; onRequest?: Array<{ name: string }>; first?: string }) => {
      // On-request rungs (issue 47) are marked `*`, the one listed first `^`.
      const onRequest = (p.onRequest ?? []).map((r) => ({ name: `${r.name}*${r.name === p.first ? '^' : ''}` }));
      log.push(`master:${[...p.rungs, ...onRequest, ...(p.extra ?? [])].map((r) => r.name).join('+')}`);
    }) as Activities['publishMaster'],
    deleteVideoFiles: (async () => {
      log.push('deleteFiles');
      return { deleted: 3 };
    }) as Activities['deleteVideoFiles'],
    purgeVideo: rec('purge') as Activities['purgeVideo'],
    planTranscode: (async () => ({
      info: {
        durationSeconds: 10, width: 1920, height: 1080, rotation: 0, fps: 30, videoCodec: 'h264', hasAudio: true, formatName: 'mp4', sizeBytes: 1000,
        // What SPEC §21's source-as-top-rung check reads; 20 Mb/s is above every rung's cap.
        streams: { video: { codec: 'h264', profile: 'High', pixFmt: 'yuv420p', level: 40, bitrate: 20_000_000 }, audio: null },
        ...probe,
      },
      passthrough: passthrough ? { eligible: true, codecs: 'avc1.640028,mp4a.40.2' } : { eligible: false, reason: 'video codec hevc is not H.264' },
      chunks: [
        { index: 0, start: 0, end: 5 },
        { index: 1, start: 5, end: null },
      ],
    })) as unknown as Activities['planTranscode'],
    // SPEC §23's just-in-time path declines (no keyframe index here), so these tests follow the
    // remux / lowest-rung path they describe; test/transcode/jit.test.ts runs the JIT path for real.
    prepareJit: (async () => null) as unknown as Activities['prepareJit'],
    prepareOnRequest: (async () => null) as unknown as Activities['prepareOnRequest'],
    remuxPassthrough: (async () => {
      log.push('remux');
      return { name: 'source', width: 1920, height: 1080, videoBitrate: 1, maxrate: 1, bufsize: 0, audioBitrate: 0, codecs: 'x' };
    }) as Activities['remuxPassthrough'],
    encodeChunk: (async (p: { rungs: Array<{ name: string }>; chunk: { index: number } }) => {
      log.push(`encode:${p.chunk.index}:${p.rungs.map((r) => r.name).join('+')}`);
      return { segments: 2 };
    }) as Activities['encodeChunk'],
    stitchRenditions: (async (p: { rungs: string[] }) => {
      log.push(`stitch:${p.rungs.join('+')}`);
    }) as Activities['stitchRenditions'],
    requestOutputs: rec('outputs') as Activities['requestOutputs'],
    // SPEC §19 (audio-v1): the audio renditions, beside the video; not in the log, whose order is the video's.
    encodeAudioTracks: (async () => ({ tracks: 1, loudnessLufs: -20 })) as Activities['encodeAudioTracks'],
    // SPEC §21 (encoding-v1): each finished group's quality, beside the ladder; not in the log either.
    measureQuality: (async () => []) as Activities['measureQuality'],
  };
}

/**
 * Chunks of a group run at once and may land in any order: sort each run of encode lines. The
 * thumbnail runs beside the first encode; it is only checked to come before `ready`.
 */
/** A worker on a fresh queue of the shared test server, running the bundled workflows on these activities. */
async function stubWorker(activities: Partial<Activities>) {
  const env = await temporalEnv();
  const taskQueue = `stub-${randomToken(4)}`;
  const worker = await Worker.create({ connection: env.nativeConnection, taskQueue, workflowBundle: await workflowBundle(), activities });
  return { env, taskQueue, worker };
}

function ordered(log: string[]): string[] {
  assert.ok(log.indexOf('thumbnail') >= 0 && log.indexOf('thumbnail') < log.indexOf('recordState:ready'), log.join(' '));
  const out: string[] = [];
  for (const line of log.filter((l) => l !== 'thumbnail')) {
    let i = out.length;
    while (line.startsWith('encode:') && i > 0 && out[i - 1].startsWith('encode:') && out[i - 1] > line) i--;
    out.splice(i, 0, line);
  }
  return out;
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

  it('publishes the passthrough, is ready, then encodes every rung of each chunk at once and drops the passthrough', async () => {
    const log: string[] = [];
    const { env, taskQueue, worker } = await stubWorker(stubs(log));
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
      // ...and then the outputs (MP4, storyboard) are requested from their own workflow.
      const finished = () => log.lastIndexOf('recordState') > log.indexOf('event:video.ready') && log.includes('outputs');
      for (let i = 0; i < 200 && !finished(); i++) await new Promise((r) => setTimeout(r, 50));
      const done = await handle.query(videoStateQuery);
      assert.equal(done.status, 'ready');
      assert.equal(done.progress, 100);
      await handle.signal(deleteVideoSignal);
      await handle.result();
    });
    // Passthrough first, ready, then every rung of each chunk in one encode, stitched, published
    // (the passthrough leaves the master with the 1080p rung), then the idle run takes the delete.
    assert.deepEqual(ordered(log), [
      'recordState:processing',
      'event:video.uploaded',
      'recordMetadata',
      'remux',
      'master:source',
      'recordState:ready',
      'event:video.ready',
      'encode:0:240p+360p+480p+720p+1080p',
      'encode:1:240p+360p+480p+720p+1080p',
      'stitch:240p+360p+480p+720p+1080p',
      'master:240p+360p+480p+720p+1080p',
      'recordState',
      'outputs',
      'deleteFiles',
      'event:video.deleted',
      'purge',
    ]);
  });

  it('without a passthrough the lowest rung makes it ready, then the rest encode together', async () => {
    const log: string[] = [];
    const { env, taskQueue, worker } = await stubWorker(stubs(log, {}, false));
    await worker.runUntil(async () => {
      const handle = await env.client.workflow.start('videoWorkflow', {
        taskQueue,
        workflowId: `stub-${randomToken(6)}`,
        args: [{ videoId: '00000000-0000-7000-8000-000000000003', workspaceId: 'ws_test', storageKey: 'originals/ws_test/z/a.mp4', source: { kind: 'url', url: 'http://127.0.0.1:1/a.mp4' }, transcodeQueue: taskQueue } satisfies VideoWorkflowInput],
      });
      for (let i = 0; i < 200 && !log.includes('recordState'); i++) await new Promise((r) => setTimeout(r, 50));
      // Idle: the run that answers is a continuation of the first.
      let runId = handle.firstExecutionRunId;
      for (let i = 0; i < 200 && runId === handle.firstExecutionRunId; i++) {
        runId = (await env.client.workflow.getHandle(handle.workflowId).describe()).runId;
        if (runId === handle.firstExecutionRunId) await new Promise((r) => setTimeout(r, 50));
      }
      assert.notEqual(runId, handle.firstExecutionRunId, 'the idle run is a continuation of the first');
      assert.equal((await handle.query(videoStateQuery)).status, 'ready');
      await handle.signal(deleteVideoSignal);
      await handle.result();
    });
    assert.deepEqual(ordered(log).slice(0, 11), [
      'recordMetadata',
      'encode:0:240p',
      'encode:1:240p',
      'stitch:240p',
      'master:240p',
      'recordState:ready',
      'event:video.ready',
      'encode:0:360p+480p+720p+1080p',
      'encode:1:360p+480p+720p+1080p',
      'stitch:360p+480p+720p+1080p',
      'master:240p+360p+480p+720p+1080p',
    ]);
  });

  it('a delete while waiting for the upload removes files and emits video.deleted without processing', async () => {
    const log: string[] = [];
    const { env, taskQueue, worker } = await stubWorker(stubs(log));
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

  it('promotes a staged upload once, caps the ladder without a passthrough above the cap, requests outputs after a retry (even one accepted while failing), and sweeps the staging prefix after the delete', async () => {
    const log: string[] = [];
    let broken = true;
    let retryAccepted = () => {};
    const retried = new Promise<void>((r) => (retryAccepted = r));
    const base = stubs(log);
    const activities: Partial<Activities> = {
      ...base,
      promoteUpload: (async () => {
        log.push('promote');
      }) as Activities['promoteUpload'],
      sweepUploads: (async () => {
        log.push('sweep');
        return { deleted: 0 };
      }) as Activities['sweepUploads'],
      // The failure's event is held until the retry is accepted: the retry lands in the failing
      // run, before it continues-as-new, and must still write `processing` (no lost status).
      emitEvent: (async (p: Parameters<Activities['emitEvent']>[0]) => {
        if (p.type === 'video.failed') await retried;
        return base.emitEvent!(p);
      }) as Activities['emitEvent'],
      // The first processing run fails (a media error, not retried); the retry's run succeeds.
      encodeChunk: (async (p: Parameters<Activities['encodeChunk']>[0]) => {
        if (broken) {
          log.push(`encode-failed:${p.chunk.index}`);
          throw ApplicationFailure.create({ type: 'invalid_media', message: 'stub: broken', nonRetryable: true });
        }
        return base.encodeChunk!(p);
      }) as Activities['encodeChunk'],
    };
    const { env, taskQueue, worker } = await stubWorker(activities);
    await worker.runUntil(async () => {
      const handle = await env.client.workflow.start('videoWorkflow', {
        taskQueue,
        workflowId: `stub-${randomToken(6)}`,
        args: [
          {
            videoId: '00000000-0000-7000-8000-000000000004',
            workspaceId: 'ws_test',
            storageKey: 'originals/ws_test/w/a.mp4',
            // Already dead, so the final sweep runs without a wait.
            source: { kind: 'upload', declaredSize: 1000, contentType: 'video/mp4', uploadTimeoutMs: 60_000, uploadUrlExpiresAt: Date.now() - 60_000 },
            maxResolution: '720p',
            transcodeQueue: taskQueue,
          } satisfies VideoWorkflowInput,
        ],
      });
      await handle.executeUpdate(completeUploadUpdate, { args: [{ objectSize: 1000, sourceKey: 'uploads/ws_test/w/staged' }] });
      let status = '';
      for (let i = 0; i < 200 && status !== 'failed'; i++) {
        status = (await handle.query(videoStateQuery)).status;
        if (status !== 'failed') await new Promise((r) => setTimeout(r, 50));
      }
      assert.equal(status, 'failed', log.join(' '));
      broken = false;
      await handle.executeUpdate(retryUpdate, { args: [{ objectSize: 1000 }] });
      retryAccepted();
      for (let i = 0; i < 200 && !log.includes('outputs'); i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal((await handle.query(videoStateQuery)).status, 'ready');
      await handle.signal(deleteVideoSignal);
      await handle.result();
    });
    const failedAt = log.indexOf('event:video.failed');
    assert.ok(failedAt > 0, log.join(' '));
    assert.deepEqual(log.slice(0, 3), ['recordState:processing', 'promote', 'event:video.uploaded']);
    assert.deepEqual(log.slice(failedAt - 1, failedAt + 1), ['recordState:failed', 'event:video.failed']);
    // The retry, in the idle run: no second promotion, no passthrough above the 720p cap, the
    // lowest rung first, then the rest (up to 720p), then the outputs; the delete ends with the sweep.
    assert.deepEqual(ordered(log.slice(failedAt + 1)), [
      'recordState:processing',
      'recordMetadata',
      'encode:0:240p',
      'encode:1:240p',
      'stitch:240p',
      'master:240p',
      'recordState:ready',
      'event:video.ready',
      'encode:0:360p+480p+720p',
      'encode:1:360p+480p+720p',
      'stitch:360p+480p+720p',
      'master:240p+360p+480p+720p',
      'recordState',
      'outputs',
      'deleteFiles',
      'event:video.deleted',
      'purge',
      'sweep',
    ]);
    assert.equal(log.filter((l) => l === 'promote').length, 1);
    assert.ok(!log.includes('remux'), 'a source above max_resolution is not published as-is');
  });
  it('on request (issue 47): ready with the rungs up to 1080p listed at once, the 720p first; the ladder\u2019s progress moves while its chunks encode', async () => {
    const log: string[] = [];
    const base = stubs(log, { width: 3840, height: 2160 }, false);
    let release: () => void = () => {};
    const chunk0Held = new Promise<void>((r) => (release = r));
    let handleId = '';
    const { env, taskQueue, worker } = await stubWorker({
      ...base,
      prepareOnRequest: (async (p: Parameters<Activities['prepareOnRequest']>[0]) => {
        log.push(`prepare:${p.rungs.map((r) => r.name).join('+')}`);
        return {
          rungs: p.rungs.map((r) => ({ ...r, bufsize: 0, codecs: 'avc1.640028' })),
          chunks: [
            { index: 0, first: 0, last: 14, boundaries: [0], end: 30 },
            { index: 1, first: 15, last: 29, boundaries: [30], end: 90 },
          ],
          timeline: { offset: 0, start: 0, durationSeconds: 90 },
          segments: 30,
        };
      }) as unknown as Activities['prepareOnRequest'],
      // Chunk 1 (two thirds of the length) signals 50 %, then waits; chunk 0 waits too.
      encodeAlignedChunk: (async (p: Parameters<Activities['encodeAlignedChunk']>[0]) => {
        log.push(`encode:${p.chunk.index}:aligned:${p.rungs.map((r) => r.name).join('+')}`);
        assert.deepEqual(p.progress, { chunk: p.chunk.index, chunks: 2 });
        if (p.chunk.index === 1) {
          await env.client.workflow.getHandle(handleId).signal(ladderProgressSignal, { rungs: p.rungs.map((r) => r.name), chunk: 1, progress: 50 });
        }
        await chunk0Held;
        return { segments: 15 };
      }) as unknown as Activities['encodeAlignedChunk'],
      finishAligned: (async (p: { rungs: string[]; planRung: string }) => {
        log.push(`finish:${p.rungs.join('+')}:${p.planRung}`);
      }) as unknown as Activities['finishAligned'],
    });
    await worker.runUntil(async () => {
      handleId = `stub-${randomToken(6)}`;
      const handle = await env.client.workflow.start('videoWorkflow', {
        taskQueue,
        workflowId: handleId,
        args: [{ videoId: '00000000-0000-7000-8000-000000000005', workspaceId: 'ws_test', storageKey: 'originals/ws_test/v/a.mkv', source: { kind: 'url', url: 'http://127.0.0.1:1/a.mkv' }, transcodeQueue: taskQueue } satisfies VideoWorkflowInput],
      });
      let state = await handle.query(videoStateQuery);
      for (let i = 0; i < 200 && !(state.status === 'ready' && state.progress > 0); i++) {
        await new Promise((r) => setTimeout(r, 50));
        state = await handle.query(videoStateQuery);
      }
      // Chunk 1 is 60 of the 90 s at 50 %, chunk 0 at 0 %: a third of the ladder, while no chunk has ended.
      assert.equal(state.status, 'ready');
      assert.deepEqual(state.renditions.map((r) => [r.name, r.status, r.progress]), ['240p', '360p', '480p', '720p', '1080p', '1440p', '2160p'].map((n) => [n, 'processing', 33]));
      assert.equal(state.progress, 33);
      release();
      for (let i = 0; i < 200 && !log.includes('outputs'); i++) await new Promise((r) => setTimeout(r, 50));
      assert.equal((await handle.query(videoStateQuery)).progress, 100);
      await handle.signal(deleteVideoSignal);
      await handle.result();
    });
    assert.deepEqual(ordered(log).slice(0, 10), [
      'recordMetadata',
      'prepare:240p+360p+480p+720p+1080p',
      'master:240p*+360p*+480p*+720p*^+1080p*',
      'recordState:ready',
      'event:video.ready',
      'encode:0:aligned:240p+360p+480p+720p+1080p+1440p+2160p',
      'encode:1:aligned:240p+360p+480p+720p+1080p+1440p+2160p',
      'finish:240p+360p+480p+720p+1080p+1440p+2160p:240p',
      'master:240p+360p+480p+720p+1080p+1440p+2160p',
      'recordState',
    ]);
  });
});
