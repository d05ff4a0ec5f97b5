/**
 * Records the transcode room's workflow histories (issue 11) into test/fixtures/histories/
 * as transcode-*.json. Existing files are never overwritten (fixtures are history: a running
 * video's past does not change). `scripts/record-transcode [name...]` provisions and runs it.
 *
 * A video that continues-as-new has one history per run: `<name>.json` is the processing run,
 * `<name>-idle.json` the idle run that followed it.
 */
import fs from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { allRenditionsReady, isStatus, putFile, uploadFormA, waitForVideo } from '../support/flow';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';
import { runMain } from '../support/main';
import { solidImage } from '../watermarks/images';
import { saveWorkflowRuns } from './save';

const outDir = path.join(__dirname, '..', 'fixtures', 'histories');

/** Saves every run of the video's workflow, oldest first, skipping fixtures that already exist. */
async function saveRuns(s: Stack, name: string, uuid: string): Promise<void> {
  await saveWorkflowRuns(s.temporal, name, `video-${uuid}`);
}

async function deleteAndSave(s: Stack, id: string, uuid: string, name: string): Promise<void> {
  await s.del(`/v1/videos/${id}`).expect(204);
  await s.temporal.workflow.getHandle(`video-${uuid}`).result();
  await saveRuns(s, name, uuid);
}

const scenarios: Record<string, (s: Stack) => Promise<void>> = {
  /** Upload → ready with every rung → idle run (continue-as-new) → delete in the idle run. */
  async 'transcode-ready-idle-delete'(s) {
    const clip = await makeClip({ width: 640, height: 360, seconds: 3 });
    const a = await uploadFormA(s, clip);
    const v = await waitForVideo(s, a.id, allRenditionsReady);
    await waitIdle(s, v.uuid);
    await deleteAndSave(s, a.id, v.uuid, 'transcode-ready-idle-delete');
  },
  /** Invalid media → failed → idle run; re-upload and retry there → ready → idle again → delete. */
  async 'transcode-failed-idle-retry-delete'(s) {
    const clip = await makeClip({ width: 640, height: 360, seconds: 3 });
    const garbage = path.join(outDir, '..', 'garbage-transcode.bin');
    fs.writeFileSync(garbage, Buffer.alloc(fs.statSync(clip).size, 'not a video'));
    try {
      const b = await uploadFormA(s, garbage);
      const failed = await waitForVideo(s, b.id, isStatus('failed'));
      await waitIdle(s, failed.uuid);
      await putFile(b.uploadUrl, clip);
      await s.post(`/v1/videos/${b.id}/retry`).expect(202);
      await waitForVideo(s, b.id, allRenditionsReady);
      await waitIdle(s, failed.uuid, 2);
      await deleteAndSave(s, b.id, failed.uuid, 'transcode-failed-idle-retry-delete');
    } finally {
      fs.rmSync(garbage, { force: true });
    }
  },
  /** Pipeline v2: passthrough → ready → ladder from one decode → idle → delete. */
  async 'transcode-passthrough-idle-delete'(s) {
    const a = await uploadFormA(s, await makeClip({ width: 640, height: 360, seconds: 3 }));
    const v = await waitForVideo(s, a.id, allRenditionsReady);
    await waitIdle(s, v.uuid);
    await deleteAndSave(s, a.id, v.uuid, 'transcode-passthrough-idle-delete');
  },
  /** Pipeline v2, HEVC source: no passthrough; the lowest rung first, then the rest together. */
  async 'transcode-fallback-hevc-idle-delete'(s) {
    const a = await uploadFormA(s, await makeClip({ width: 640, height: 360, seconds: 3, codec: 'hevc' }));
    const v = await waitForVideo(s, a.id, allRenditionsReady);
    await waitIdle(s, v.uuid);
    await deleteAndSave(s, a.id, v.uuid, 'transcode-fallback-hevc-idle-delete');
  },
  /** Pipeline v2, a source over the chunk threshold: 3 chunks × the ladder, stitched. */
  async 'transcode-chunks-idle-delete'(s) {
    const a = await uploadFormA(s, await makeClip({ width: 640, height: 360, seconds: 12 }));
    const v = await waitForVideo(s, a.id, allRenditionsReady);
    await waitIdle(s, v.uuid);
    await deleteAndSave(s, a.id, v.uuid, 'transcode-chunks-idle-delete');
  },
  /** Issue 28 (encoding-v1): the source IS the top rung (remuxed), the rung below encoded, its quality measured. */
  async 'encoding-source-top-quality-idle-delete'(s) {
    const a = await uploadFormA(s, await makeClip({ width: 640, height: 360, seconds: 3, videoBitrate: 400_000 }));
    const v = await waitForVideo(s, a.id, (x) => allRenditionsReady(x) && x.renditions.some((r: { quality: unknown }) => r.quality !== null));
    await waitIdle(s, v.uuid);
    await deleteAndSave(s, a.id, v.uuid, 'encoding-source-top-quality-idle-delete');
  },
  /** Issue 28 (encoding-v1): no passthrough (HEVC); the lowest rung first, then the rest, each group's quality measured. */
  async 'encoding-fallback-quality-idle-delete'(s) {
    const a = await uploadFormA(s, await makeClip({ width: 640, height: 360, seconds: 3, codec: 'hevc' }));
    const v = await waitForVideo(s, a.id, (x) => allRenditionsReady(x) && x.renditions.every((r: { quality: unknown }) => r.quality !== null));
    await waitIdle(s, v.uuid);
    await deleteAndSave(s, a.id, v.uuid, 'encoding-fallback-quality-idle-delete');
  },
  /** Issue 28 (encoding-codecs-v1): H.264 ladder, then HEVC and AV1 CMAF renditions and the DASH manifest. */
  async 'encoding-codecs-idle-delete'(s) {
    const a = await uploadFormA(s, await makeClip({ width: 320, height: 180, seconds: 2 }), { extra: { codecs: ['hevc', 'av1'] } });
    const v = await waitForVideo(s, a.id, allRenditionsReady);
    await waitIdle(s, v.uuid);
    await deleteAndSave(s, a.id, v.uuid, 'encoding-codecs-idle-delete');
  },
  /** SPEC §23 (jit-packaging): the source IS the top rung, published from its keyframe index, cut behind ready; no encode. */
  async 'jit-source-top-idle-delete'(s) {
    const a = await uploadFormA(s, await makeClip({ width: 320, height: 180, seconds: 3, videoBitrate: 300_000 }));
    const v = await waitForVideo(s, a.id, allRenditionsReady);
    await waitIdle(s, v.uuid);
    await deleteAndSave(s, a.id, v.uuid, 'jit-source-top-idle-delete');
  },
  /** SPEC §23 (jit-packaging): the source as `source/` from its index → ready → cut behind → the ladder → idle → delete. */
  async 'jit-passthrough-idle-delete'(s) {
    const a = await uploadFormA(s, await makeClip({ width: 640, height: 360, seconds: 3 }));
    const v = await waitForVideo(s, a.id, allRenditionsReady);
    await waitIdle(s, v.uuid);
    await deleteAndSave(s, a.id, v.uuid, 'jit-passthrough-idle-delete');
  },
  /** SPEC §23 item 2 (jit-encode): HEVC, the lowest rung encoded per segment on request → ready → the ladder → idle → delete. */
  async 'jit-encode-hevc-idle-delete'(s) {
    const a = await uploadFormA(s, await makeClip({ width: 640, height: 360, seconds: 3, codec: 'hevc' }));
    const v = await waitForVideo(s, a.id, allRenditionsReady);
    await waitIdle(s, v.uuid);
    await deleteAndSave(s, a.id, v.uuid, 'jit-encode-hevc-idle-delete');
  },
  /**
   * Issue 47 (jit-on-request-rungs, ladder-chunk-progress): HEVC, ready with its rungs encoded on
   * request under their names, then the ladder over the same segments in 3 aligned chunks, each
   * reporting its progress → idle → delete.
   */
  async 'jit-on-request-hevc-chunks-idle-delete'(s) {
    const a = await uploadFormA(s, await makeClip({ width: 640, height: 360, seconds: 12, codec: 'hevc' }));
    const v = await waitForVideo(s, a.id, allRenditionsReady);
    await waitIdle(s, v.uuid);
    await deleteAndSave(s, a.id, v.uuid, 'jit-on-request-hevc-chunks-idle-delete');
  },
  /** Issue 47 (ladder-chunk-progress): an eligible source packaged just in time, its ladder in 3 chunks with their progress → idle → delete. */
  async 'jit-passthrough-chunk-progress-idle-delete'(s) {
    const a = await uploadFormA(s, await makeClip({ width: 640, height: 360, seconds: 12 }));
    const v = await waitForVideo(s, a.id, allRenditionsReady);
    await waitIdle(s, v.uuid);
    await deleteAndSave(s, a.id, v.uuid, 'jit-passthrough-chunk-progress-idle-delete');
  },
  /** Pipeline v2: a delete while chunks encode cancels them all, then removes the files. */
  async 'transcode-chunks-delete-mid-encode'(s) {
    const a = await uploadFormA(s, await makeClip({ width: 1280, height: 720, seconds: 20 }));
    const v = await waitForVideo(s, a.id, isStatus('ready'));
    await deleteAndSave(s, a.id, v.uuid, 'transcode-chunks-delete-mid-encode');
  },
  /**
   * After the merge with uploads and outputs: a staged upload promoted once, a ladder capped by
   * max_resolution (no passthrough above the cap), the outputs requested after the ladder, then
   * the idle run takes the delete, which sleeps until the upload URL has died and sweeps it.
   */
  async 'transcode-merged-upload-ready-outputs-delete'(s) {
    const clip = await makeClip({ width: 640, height: 360, seconds: 3 });
    const a = await uploadFormA(s, clip, { extra: { mp4_support: 'capped_1080p', max_resolution: '480p', passthrough: 'rec' } });
    const v = await waitForVideo(s, a.id, (x) => allRenditionsReady(x) && x.static_renditions[0]?.status === 'ready' && x.storyboard_url !== null);
    await waitIdle(s, v.uuid);
    await deleteAndSave(s, a.id, v.uuid, 'transcode-merged-upload-ready-outputs-delete');
  },
  /**
   * SPEC §24 (watermark-v1): a watermarked upload whose source the passthrough would take is
   * never passed through: ready with its rungs encoded on request (marked), the ladder behind
   * them → idle → delete.
   */
  async 'watermark-upload-ready-idle-delete'(s) {
    const mark = await request(s.url).post('/v1/watermarks?position=bottom-right&scale=0.15').set('Authorization', `Bearer ${s.ws.fullKey}`)
      .set('Content-Type', 'image/png').send(await solidImage('magenta', 64, 32)).expect(201);
    const a = await uploadFormA(s, await makeClip({ width: 640, height: 360, seconds: 3 }), { extra: { watermark_id: mark.body.id } });
    const v = await waitForVideo(s, a.id, allRenditionsReady);
    await waitIdle(s, v.uuid);
    await deleteAndSave(s, a.id, v.uuid, 'watermark-upload-ready-idle-delete');
  },
};

/** Until the workflow has continued-as-new `runs` times (the idle run is the open one). */
async function waitIdle(s: Stack, uuid: string, runs = 1): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    let n = 0;
    let history = await s.temporal.workflow.getHandle(`video-${uuid}`).fetchHistory();
    while (history.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId) {
      n++;
      history = await s.temporal.workflow.getHandle(`video-${uuid}`, history.events[0].workflowExecutionStartedEventAttributes.continuedExecutionRunId).fetchHistory();
    }
    if (n >= runs) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`video-${uuid} did not go idle ${runs} time(s)`);
}

async function main(): Promise<void> {
  fs.mkdirSync(outDir, { recursive: true });
  const wanted = process.argv.slice(2);
  const s = await startStack({
    env: {
      LOG_LEVEL: 'warn',
      RATE_LIMIT_PER_MINUTE: '100000',
      TRANSCODE_CHUNK_THRESHOLD_SECONDS: '5',
      TRANSCODE_CHUNK_SECONDS: '4',
      // Short-lived upload URLs: a delete's final staging sweep waits for the URL to die.
      UPLOAD_URL_TTL_SECONDS: '30',
    },
  });
  for (const [name, run] of Object.entries(scenarios)) {
    if (wanted.length && !wanted.includes(name)) continue;
    if (fs.existsSync(path.join(outDir, `${name}.json`))) {
      console.log(`kept ${name}.json (fixtures are never re-recorded)`);
      continue;
    }
    await run(s);
  }
}

runMain(main);
