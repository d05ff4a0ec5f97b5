/**
 * What the SPEC §14 jobs add after `ready`, through the real stack, on this machine:
 *   - the static MP4 (remux of the top ≤1080p rung) and the storyboard: each activity's own
 *     time (from the outputs workflow's history) and when it was done, counted from the moment
 *     the whole ladder was;
 *   - a clip's cut (re-encode of the range) before its normal pipeline;
 *   - on-demand thumbnails: a render (cache miss) and the median of 20 cache hits.
 * `npm run bench:outputs -- --seconds 30`. The machine is shared: read the figures as rough.
 */
import { performance } from 'node:perf_hooks';
import request from 'supertest';
import { allRenditionsReady, uploadFormA, waitForVideo } from '../test/support/flow';
import { makeClip } from '../test/support/media';
import { startStack } from '../test/support/stack';
import { runMain } from '../test/support/main';
import { arg } from './args';


const seconds = arg('seconds', 30);

/** Durations of each activity type in a workflow's history, in seconds. */
async function activityTimes(s: Awaited<ReturnType<typeof startStack>>, workflowId: string): Promise<Record<string, number>> {
  const history = await s.temporal.workflow.getHandle(workflowId).fetchHistory();
  const scheduled = new Map<string, { type: string; at: number }>();
  const started = new Map<string, number>();
  const out: Record<string, number> = {};
  const ms = (t: { seconds?: unknown; nanos?: number | null } | null | undefined) => Number(t?.seconds ?? 0) * 1000 + (t?.nanos ?? 0) / 1e6;
  for (const e of history.events ?? []) {
    const id = String(e.eventId);
    if (e.activityTaskScheduledEventAttributes) scheduled.set(id, { type: e.activityTaskScheduledEventAttributes.activityType?.name ?? '?', at: ms(e.eventTime) });
    if (e.activityTaskStartedEventAttributes) started.set(String(e.activityTaskStartedEventAttributes.scheduledEventId), ms(e.eventTime));
    if (e.activityTaskCompletedEventAttributes) {
      const sid = String(e.activityTaskCompletedEventAttributes.scheduledEventId);
      const sch = scheduled.get(sid);
      if (sch) out[sch.type] = (out[sch.type] ?? 0) + (ms(e.eventTime) - (started.get(sid) ?? sch.at)) / 1000;
    }
  }
  return out;
}

async function main(): Promise<void> {
  const s = await startStack();
  const clip = await makeClip({ width: 1920, height: 1080, seconds, fps: 30 });
  const up = await uploadFormA(s, clip, { extra: { mp4_support: 'capped_1080p', visibility: 'public' } });
  const v = await waitForVideo(s, up.id, allRenditionsReady, 30 * 60_000);
  const ladderDone = Date.now();
  const done = await waitForVideo(s, up.id, (x) => x.static_renditions[0]?.status === 'ready' && x.storyboard_url !== null, 10 * 60_000);
  const allOutputs = Date.now();
  const jobs = await activityTimes(s, `outputs-${v.uuid}`);
  console.log(`source: ${seconds} s 1920x1080 30 fps; ladder ${v.renditions.map((r: { name: string }) => r.name).join(',')}`);
  console.log(`static MP4 (remux of ${done.static_renditions[0].name}, ${done.static_renditions[0].size_bytes} bytes): ${jobs.reconcileStaticRenditions?.toFixed(2)} s`);
  console.log(`storyboard: ${jobs.makeStoryboard?.toFixed(2)} s`);
  console.log(`both done ≤ ${((allOutputs - ladderDone) / 1000).toFixed(2)} s after the whole ladder was (poll interval 0.3 s)`);

  const cdn = (p: string) => request(s.url).get(`/cdn/v/${up.id}/${p}`);
  let t0 = performance.now();
  await cdn('thumbnail.jpg?time=12&width=640').expect(200);
  console.log(`thumbnail render (cache miss): ${(performance.now() - t0).toFixed(1)} ms`);
  const hits: number[] = [];
  for (let i = 0; i < 20; i++) {
    t0 = performance.now();
    const r = await cdn('thumbnail.jpg?time=12&width=640').expect(200);
    hits.push(performance.now() - t0);
    if (r.headers['x-render-cache'] !== 'hit') throw new Error('expected a cache hit');
  }
  hits.sort((a, b) => a - b);
  console.log(`thumbnail cache hit: median ${hits[10].toFixed(1)} ms, p90 ${hits[18].toFixed(1)} ms (20 requests)`);
  t0 = performance.now();
  await cdn('animated.gif?start=10&end=15&width=320&fps=10').expect(200);
  console.log(`animated GIF 5 s 320 px 10 fps (cache miss): ${(performance.now() - t0).toFixed(1)} ms`);

  const c = await s.post(`/v1/videos/${up.id}/clips`, { start_time: 5, end_time: 15 }).expect(202);
  const clipDone = await waitForVideo(s, c.body.id, allRenditionsReady, 30 * 60_000);
  const clipJobs = await activityTimes(s, `video-${clipDone.uuid}`);
  console.log(`clip 10 s of 1080p: cut ${clipJobs.cutClip?.toFixed(2)} s, then the usual pipeline (to ready+ladder ${((Date.parse(clipDone.updated_at) - Date.parse(clipDone.created_at)) / 1000).toFixed(1)} s)`);
}

runMain(main);
