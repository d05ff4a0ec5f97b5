import assert from 'node:assert/strict';
import fs from 'node:fs';
import request from 'supertest';
import { allRenditionsReady, putFile, until } from '../support/flow';
import { loopedClip, makeClip } from '../support/media';
import { spokenClip } from '../support/speech';
import { startStack, type Stack, type Workspace } from '../support/stack';

const TEXT = 'Welcome to the studio. Today we talk about forced alignment, a way to time captions from a script.';
/** SPEC §23/§25: a 10 s clip is ready within 5 s of its upload's completion, idle or not. */
const READY_BOUND_MS = 5000;

/**
 * SPEC §25 proved on real parts: workspace A keeps both transcode slots busy with long ladders
 * (chunks of 4 s so they are many) and alignments; workspace B then uploads. B's clip is ready as
 * soon as when the service was idle, B's ladder and alignment finish while A's work is still
 * queued, and A's own new clip is not behind A's ladders. Both workspaces are on the same plan:
 * what B gets is priority and fairness, not weight. bench/neighbour.ts measures it at real sizes.
 */
describe('fair share: a busy neighbour does not hold another workspace back (real Temporal, real ffmpeg)', function () {
  this.timeout(300_000);
  let s: Stack;

  const upload = async (ws: Workspace, file: string) => {
    const init = await s.post('/v1/upload/init', { filename: 'a.mp4', size: fs.statSync(file).size, content_type: 'video/mp4' }, ws.fullKey);
    assert.equal(init.status, 201, JSON.stringify(init.body));
    assert.equal((await putFile(init.body.upload_url, file, 'video/mp4', init.body.upload_headers)).status, 200);
    assert.equal((await s.post('/v1/upload/complete', { video_id: init.body.video_id }, ws.fullKey)).status, 202);
    return { id: init.body.video_id as string, completed: Date.now() };
  };
  const read = async (ws: Workspace, id: string) => (await s.get(`/v1/videos/${id}`, ws.fullKey)).body;
  /** Milliseconds from the upload's completion until `done` holds of the video. */
  const until$ = async (ws: Workspace, v: { id: string; completed: number }, done: (video: Record<string, any>) => boolean, what: string, timeoutMs = 120_000) => {
    await until(async () => done(await read(ws, v.id)), timeoutMs, what, 100);
    return Date.now() - v.completed;
  };
  const ready = (v: Record<string, any>) => v.status === 'ready';
  const align = (ws: Workspace, id: string, lang: string) =>
    request(s.url).post(`/v1/videos/${id}/captions/${lang}/align`).set('Authorization', `Bearer ${ws.fullKey}`).set('Content-Type', 'text/plain').send(TEXT);
  const track = async (ws: Workspace, id: string, lang: string) => ((await s.get(`/v1/videos/${id}/captions`, ws.fullKey)).body.data as Array<{ language: string; status: string }>).find((t) => t.language === lang);
  /** Activity tasks waiting in the transcode queue (what `temporal task-queue describe` reports). */
  const backlog = async () => {
    const r = await s.temporal.workflowService.describeTaskQueue({ namespace: s.config.temporal.namespace, taskQueue: { name: s.config.temporal.transcodeQueue }, taskQueueType: 2, reportStats: true });
    return Number(r.stats?.approximateBacklogCount ?? 0);
  };

  it("B's clip is ready as fast as idle, its ladder and alignment finish while A's work waits, and A's own new clip is not behind A's ladders", async () => {
    s = await startStack({ env: { TRANSCODE_CHUNK_SECONDS: '4', TRANSCODE_CHUNK_THRESHOLD_SECONDS: '8', X264_PRESET: 'veryfast' } });
    const [a, b] = [await s.newWorkspace('free'), await s.newWorkspace('free')];
    const speech = await spokenClip(TEXT);
    const short = await makeClip({ width: 640, height: 360, seconds: 3 });
    const long = await loopedClip(await makeClip({ width: 1280, height: 720, seconds: 10 }), 6);

    // Idle: B's speech clip, to the same reads as under load.
    const idle = await upload(b, speech.file);
    const idleReady = await until$(b, idle, ready, 'idle ready');
    const idleLadder = await until$(b, idle, allRenditionsReady, 'idle ladder');

    // A: an alignment-ready video, then three minutes of 720p in 4 s chunks, then alignments.
    const aSpeech = await upload(a, speech.file);
    await until$(a, aSpeech, allRenditionsReady, "A's speech video");
    const aLong = [await upload(a, long), await upload(a, long), await upload(a, long)];
    await until(async () => (await backlog()) >= 6, 60_000, "A's ladders queued", 200);
    for (const lang of ['en', 'en-GB', 'en-US']) assert.equal((await align(a, aSpeech.id, lang)).status, 202);

    // B, with A's ladders queued behind both busy slots.
    const loaded = await upload(b, speech.file);
    const loadedReady = await until$(b, loaded, ready, "B's clip ready under load");
    assert.equal((await align(b, loaded.id, 'en')).status, 202);
    const aClip = await upload(a, short);
    const aClipReady = await until$(a, aClip, ready, "A's new clip ready");
    const loadedLadder = await until$(b, loaded, allRenditionsReady, "B's ladder");
    const ladderBacklog = await backlog();
    await until(async () => (await track(b, loaded.id, 'en'))?.status === 'ready', 120_000, "B's alignment", 100);
    const alignedAt = Date.now() - loaded.completed;
    const alignBacklog = await backlog();
    const aPending = (await Promise.all(aLong.map((v) => read(a, v.id)))).filter((v) => !allRenditionsReady(v)).length;
    console.log(
      `      B ready ${loadedReady} ms (idle ${idleReady}), B ladder ${loadedLadder} ms (idle ${idleLadder}), B aligned ${alignedAt} ms; ` +
        `A's new clip ready ${aClipReady} ms; A's tasks queued when B's ladder was done: ${ladderBacklog}, when aligned: ${alignBacklog}; A's long videos unfinished: ${aPending}/3`,
    );

    assert.ok(loadedReady <= Math.max(READY_BOUND_MS, idleReady + 1000), `B ready in ${loadedReady} ms under load (idle: ${idleReady} ms)`);
    assert.ok(aClipReady <= Math.max(READY_BOUND_MS, idleReady + 1000), `A's own new clip ready in ${aClipReady} ms, behind none of A's ladders`);
    assert.ok(ladderBacklog > 0, "B's ladder finished while A's tasks were still queued");
    assert.ok(alignBacklog > 0 && aPending > 0, "B's alignment finished while A's work was still queued");

    // A's work is cancelled with its videos (what is left of it need not run to prove anything).
    for (const v of [...aLong, aSpeech, aClip]) await s.del(`/v1/videos/${v.id}`, a.fullKey).expect(204);
  });
});
