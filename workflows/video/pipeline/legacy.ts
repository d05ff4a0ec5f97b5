// FROZEN: the pipeline as it ran on main before issue 11 landed (per-rung encodes, lowest rung
// first), including the outputs room's clip cut, max_resolution cap and outputs request (issue 12).
// Videos whose processing started on that code replay it through here (patch 'transcode-v2' absent
// in their history), so its sequence of commands must never change. New work goes to ./ladder.ts.
import { isCancellation, patched } from '@temporalio/workflow';
import { capLadder } from '../../../lib/media/cap';
import { planLadder, type Rung } from '../../../lib/media/ladder';
import type { PipelineContext } from './context';

export async function legacyPipeline(ctx: PipelineContext): Promise<void> {
  const { acts, io, state } = ctx;
  const { videoId, workspaceId, storageKey, source } = ctx.input;
  if (source.kind === 'url' && !(await acts.originalExists({ storageKey }))) {
    await io.importFromUrl({ videoId, workspaceId, storageKey, url: source.url });
  }
  // Only inputs made since outputs-v1 have this kind, so older histories never reach it.
  if (source.kind === 'clip' && !(await acts.originalExists({ storageKey }))) {
    await io.cutClip({ sourceStorageKey: source.sourceStorageKey, storageKey, startSeconds: source.startSeconds, endSeconds: source.endSeconds });
  }
  const info = await io.probeSource({ storageKey });
  const rungs = capLadder(planLadder({ width: info.width, height: info.height, rotation: info.rotation }), ctx.input.maxResolution);
  state.renditions = rungs.map((r) => ({ name: r.name, width: r.width, height: r.height, bitrate: r.videoBitrate, status: 'queued', progress: 0 }));
  state.progress = 0;
  await acts.recordMetadata({
    videoId,
    durationSeconds: info.durationSeconds,
    width: info.width,
    height: info.height,
    sizeBytes: info.sizeBytes,
    renditions: state.renditions,
  });
  const thumbnail = io.makeThumbnail({ workspaceId, videoId, storageKey, durationSeconds: info.durationSeconds });
  // Handled at once: if a rendition fails or is cancelled first, an unobserved rejection would fail the workflow task.
  ctx.track(thumbnail.catch(() => undefined));
  const published: Rung[] = [];
  let publishing: Promise<void> = Promise.resolve();
  const publish = () => {
    publishing = publishing.then(() => io.publishMaster({ workspaceId, videoId, rungs: rungs.filter((x) => published.includes(x)) }));
    return publishing;
  };

  const renderRung = async (i: number): Promise<void> => {
    const rung = rungs[i];
    const r = state.renditions[i];
    r.status = 'processing';
    await acts.recordRendition({ videoId, name: r.name, status: 'processing', progress: 0 });
    try {
      await io.transcodeRendition({
        workspaceId,
        videoId,
        storageKey,
        rung,
        hasAudio: info.hasAudio,
        fps: info.fps,
        durationSeconds: info.durationSeconds,
      });
    } catch (err) {
      if (isCancellation(err) || state.status !== 'ready') throw err;
      r.status = 'failed';
      await acts.recordRendition({ videoId, name: r.name, status: 'failed', progress: r.progress });
      return;
    }
    published.push(rung);
    await publish();
    await acts.recordRendition({ videoId, name: r.name, status: 'ready', progress: 100 });
    r.status = 'ready';
    r.progress = 100;
    ctx.updateProgress();
  };

  await renderRung(0);
  await thumbnail;
  await ctx.setStatus('ready');
  await ctx.emit('video.ready');
  const rest = await Promise.allSettled(rungs.slice(1).map((_, j) => renderRung(j + 1)));
  const rejected = rest.find((x): x is PromiseRejectedResult => x.status === 'rejected');
  if (rejected) throw rejected.reason;
  await acts.recordState({ videoId, progress: state.progress });
  // SPEC §14 outputs (MP4, storyboard) run in their own workflow, from the finished ladder.
  if (patched('outputs-v1')) await acts.requestOutputs({ videoId, workspaceId });
}
