// The pipeline since issue 11 (docs/transcoding.md): plan → passthrough (the source remuxed,
// playable in about a second) → ready → the ladder, all rungs of a chunk from one decode, the
// chunks of a long source spread over every transcode worker → stitch → final master.
import { isCancellation, patched } from '@temporalio/workflow';
import type { PlaylistRung } from '../../../lib/media/args';
import { capLadder } from '../../../lib/media/cap';
import { keepPassthrough, onRequestRungs, onRequestStart, planLadder, sourceIsTopRung, type Rung } from '../../../lib/media/ladder';
import type { AlignedChunk } from '../../../lib/media/jitEncode';
import { audioOnlyPipeline } from './audio-only';
import type { PipelineContext } from './context';
import { GroupProgress } from './progress';

/**
 * SPEC §19 (docs/audio.md): audio becomes its own renditions (an HLS AUDIO group) and the video
 * rungs carry none; audio-only sources take their own ladder. Runs started before it replay
 * the muxed layout.
 */
export const AUDIO_PATCH = 'audio-v1';
/** SPEC §23: just-in-time packaging of passthrough-eligible sources (docs/transcoding.md). */
export const JIT_PATCH = 'jit-packaging';
/** SPEC §23 item 2: the lowest rung encoded per segment on request for sources the passthrough cannot take. */
export const JIT_ENCODE_PATCH = 'jit-encode';
/**
 * SPEC §23 second round (issue 47): a source the passthrough refuses is ready with its rungs up to
 * 1080p encoded on request under their own names, and the ladder encodes the same segments.
 */
export const ON_REQUEST_PATCH = 'jit-on-request-rungs';
/** Issue 47: each ladder chunk signals its progress (the read shape's `progress` moves while chunks encode). */
export const LADDER_PROGRESS_PATCH = 'ladder-chunk-progress';
/** SPEC §24 (issue 48): a watermarked video's source is never passed through. */
export const WATERMARK_PATCH = 'watermark-v1';
/** The passthrough's folder (`hls/source/`; lib/outputs/passthrough.ts). */
const PASSTHROUGH_NAME = 'source';

/** The ladder over an on-request plan (issue 47): its chunks, their timeline, and a rung that has the plan. */
type Aligned = { chunks: AlignedChunk[]; timeline: { offset: number; start?: number; durationSeconds: number }; planRung: string };

export async function ladderPipeline(ctx: PipelineContext): Promise<void> {
  const { acts, io, state } = ctx;
  const { videoId, workspaceId, storageKey, source } = ctx.input;
  if (source.kind === 'url' && !(await acts.originalExists({ storageKey }))) {
    await io.importFromUrl({ videoId, workspaceId, storageKey, url: source.url });
  }
  // SPEC §14 clip: the original is cut from another video's original (only inputs made since outputs-v1).
  if (source.kind === 'clip' && !(await acts.originalExists({ storageKey }))) {
    await io.cutClip({ sourceStorageKey: source.sourceStorageKey, storageKey, startSeconds: source.startSeconds, endSeconds: source.endSeconds });
  }
  const audioGroup = patched(AUDIO_PATCH);
  const { info, passthrough: eligibility, chunks } = await io.planTranscode(audioGroup ? { storageKey, audioRenditions: true } : { storageKey });
  // SPEC §24: a watermarked source is never published as it is (the passthrough, just-in-time
  // packaging, the source as the top rung): it takes the encoded path, whose every rung carries
  // the mark. Only runs of watermarked videos reach the marker; every older history replays as it was.
  const passthrough = ctx.input.watermarked && patched(WATERMARK_PATCH) ? { eligible: false as const, reason: 'the video is watermarked' } : eligibility;
  const chunkProgress = patched(LADDER_PROGRESS_PATCH);
  if (audioGroup && info.hasVideo === false) return audioOnlyPipeline(ctx, info);
  // With the AUDIO group, rungs and the passthrough are video only.
  const rungAudio = info.hasAudio && !audioGroup;
  const { maxResolution } = ctx.input;
  const rungs = capLadder(planLadder({ width: info.width, height: info.height, rotation: info.rotation }), maxResolution);
  // max_resolution caps what viewers can get: a source above the cap is never published as-is.
  const aboveCap = maxResolution !== undefined && Math.min(info.width, info.height) > Number.parseInt(maxResolution, 10);
  // SPEC §21: a source that fits the top rung's size and cap is published AS that rung (remuxed,
  // never encoded again). Histories from before the marker replay without it.
  const encodingV1 = patched('encoding-v1');
  const top = rungs[rungs.length - 1];
  const sourceTop =
    encodingV1 && passthrough.eligible && !aboveCap && sourceIsTopRung({ width: info.width, height: info.height, rotation: info.rotation, videoBitrate: info.streams.video.bitrate }, top)
      ? top
      : undefined;
  const qualityJobs: Array<Promise<void>> = [];
  /** Measures a finished group's quality without holding the pipeline up; recorded as it comes. */
  const measure = (group: Rung[]) => {
    if (!encodingV1 || group.length === 0) return;
    const job = io
      .measureQuality({ workspaceId, videoId, storageKey, rungs: group.map((r) => ({ name: r.name, width: r.width, height: r.height })), fps: info.fps, durationSeconds: info.durationSeconds })
      .then((results) => {
        for (const q of results) {
          const entry = state.renditions.find((r) => r.name === q.name);
          if (!entry) continue;
          entry.quality = q.quality;
          if (q.bitrate !== null) entry.bitrate = q.bitrate;
        }
      })
      .catch((err) => {
        // Quality is reported, never a reason to fail a playable video; deletion still stops it.
        if (isCancellation(err)) throw err;
      });
    ctx.track(job.catch(() => undefined));
    qualityJobs.push(job);
  };
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
  // Handled at once: if an encode fails or is cancelled first, an unobserved rejection would fail the workflow task.
  ctx.track(thumbnail.catch(() => undefined));

  // SPEC §23 just-in-time packaging: an eligible source's playlists come from its keyframe index
  // at once (every segment listed, cut on first request), with the audio group cut the same way,
  // so `ready` does not wait for a remux or a full-length audio encode. Histories without the
  // marker replay the remux path. (patched() only where the path is possible: same commands.)
  const jitPossible = audioGroup && passthrough.eligible && !aboveCap && patched(JIT_PATCH);
  // SPEC §23 item 2: a source the passthrough cannot take plays from its lowest rung encoded per
  // segment on request, while the whole ladder is encoded behind it.
  const jitEncode = audioGroup && !jitPossible && !(passthrough.eligible && !aboveCap) && rungs.length > 0 && patched(JIT_ENCODE_PATCH);
  // The audio renditions, from their own decode, beside the first video work; the master names
  // them (and the video becomes ready) only once they are there. On the just-in-time path they
  // start once the video is ready, and replace the cut-on-demand audio from the next master on.
  const encodeAudio = () => {
    const job = io.encodeAudioTracks({ workspaceId, videoId, storageKey });
    ctx.track(job.catch(() => undefined));
    return job;
  };
  let audio: Promise<unknown> = audioGroup && !jitPossible && !jitEncode ? encodeAudio() : Promise.resolve(null);
  if (audioGroup) ctx.track(thumbnail.catch(() => undefined));
  let original: PlaylistRung | undefined;
  const ready: Rung[] = [];
  /** SPEC §21: HEVC/AV1 CMAF renditions, listed after the H.264 ladder. */
  const cmaf: PlaylistRung[] = [];
  /** SPEC §23 second round: the rungs listed on request (issue 47), until the ladder lands them. */
  let onRequest: { rungs: PlaylistRung[]; first?: string } | undefined;
  const stillOnRequest = () => onRequest?.rungs.filter((r) => !ready.some((x) => x.name === r.name)) ?? [];
  const publish = () =>
    io.publishMaster({
      workspaceId,
      videoId,
      rungs: rungs.filter((r) => ready.includes(r)),
      extra: [...(original && keepPassthrough(original, ready) ? [original] : []), ...cmaf],
      ...(audioGroup ? { videoOnly: true } : {}),
      ...(onRequest ? { onRequest: stillOnRequest(), ...(stillOnRequest().length && onRequest.first ? { first: onRequest.first } : {}) } : {}),
    });
  // The master names the audio renditions from their rows: they are written first. (Without the
  // marker, the call is made exactly as before, so older histories replay the same commands.)
  const publishMaster = () => (audioGroup ? audio.then(publish) : publish());
  const becomeReady = async () => {
    await thumbnail;
    await ctx.setStatus('ready');
    await ctx.emit('video.ready');
  };

  /**
   * Every chunk of the source into every rung of `group`; then stitched, published, reported.
   * `aligned` (issue 47): the chunks of the on-request plan, whose segments the ladder makes anew.
   */
  const encodeGroup = async (group: Rung[], aligned?: Aligned): Promise<void> => {
    const entries = group.map((r) => state.renditions[rungs.indexOf(r)]);
    for (const r of entries) r.status = 'processing';
    await Promise.all(entries.map((r) => acts.recordRendition({ videoId, name: r.name, status: 'processing', progress: 0 })));
    const names = group.map((r) => r.name);
    const jobs: Array<{ index: number; weight: number; encode: (progress?: { chunk: number; chunks: number }) => Promise<unknown> }> = aligned
      ? aligned.chunks.map((chunk) => ({
          index: chunk.index,
          weight: chunk.end - chunk.boundaries[0],
          encode: (progress) => io.encodeAlignedChunk({ workspaceId, videoId, storageKey, rungs: group, chunk, fps: info.fps, timeline: aligned.timeline, ...(progress ? { progress } : {}) }),
        }))
      : chunks.map((chunk) => ({
          index: chunk.index,
          weight: (chunk.end ?? info.durationSeconds ?? chunk.start + 1) - chunk.start,
          encode: (progress) =>
            io.encodeChunk({
              workspaceId,
              videoId,
              storageKey,
              rungs: group,
              chunk,
              hasAudio: rungAudio,
              fps: info.fps,
              durationSeconds: info.durationSeconds,
              signalProgress: chunks.length === 1 && !chunkProgress,
              ...(progress ? { progress } : {}),
            }),
        }));
    // Issue 47: each chunk's own progress, weighed by its length (before: only as chunks ended).
    const tracker = new GroupProgress(jobs.map((j) => j.weight));
    const advance = () => {
      for (const r of entries) r.progress = Math.max(r.progress, tracker.value());
      ctx.updateProgress();
    };
    if (chunkProgress) {
      ctx.onLadderProgress(names, (chunk, pct) => {
        tracker.set(jobs.findIndex((j) => j.index === chunk), pct);
        advance();
      });
    }
    let done = 0;
    // allSettled: on cancellation every chunk must have stopped before the pipeline unwinds,
    // or a deletion could remove files that a still-running encode then writes.
    const results = await Promise.allSettled(
      jobs.map(async (job, i) => {
        await job.encode(chunkProgress ? { chunk: job.index, chunks: jobs.length } : undefined);
        done++;
        if (chunkProgress) {
          tracker.done(i);
          advance();
          return;
        }
        for (const r of entries) r.progress = Math.max(r.progress, Math.floor((done / chunks.length) * 99));
        ctx.updateProgress();
      }),
    );
    if (chunkProgress) ctx.onLadderProgress(names, undefined);
    const rejected = results.find((x): x is PromiseRejectedResult => x.status === 'rejected');
    if (rejected) {
      if (isCancellation(rejected.reason) || state.status !== 'ready') throw rejected.reason;
      // Already playable: a group failing leaves the video ready without those rungs.
      for (const r of entries) r.status = 'failed';
      await Promise.all(entries.map((r) => acts.recordRendition({ videoId, name: r.name, status: 'failed', progress: r.progress })));
      return;
    }
    if (aligned) await io.finishAligned({ workspaceId, videoId, rungs: names, planRung: aligned.planRung });
    else await io.stitchRenditions({ workspaceId, videoId, rungs: names, chunks: chunks.length });
    // A rendition is reported ready only once the master playlist lists it.
    ready.push(...group);
    await publishMaster();
    await Promise.all(entries.map((r) => acts.recordRendition({ videoId, name: r.name, status: 'ready', progress: 100 })));
    for (const r of entries) {
      r.status = 'ready';
      r.progress = 100;
    }
    ctx.updateProgress();
    measure(group);
  };

  // SPEC §23 second round (issue 47): every rung up to 1080p on request at `ready`, named as the
  // rung it is, and the ladder behind it encoding the same segments into the same folders.
  const onRequestPath = jitEncode && patched(ON_REQUEST_PATCH);
  if (onRequestPath) {
    const offered = onRequestRungs(rungs);
    let prepared: Awaited<ReturnType<typeof io.prepareOnRequest>> = null;
    try {
      prepared = await io.prepareOnRequest({ workspaceId, videoId, storageKey, durationSeconds: info.durationSeconds, fps: info.fps, audioStreams: info.audioStreams, rungs: offered });
    } catch (err) {
      // Not playable this way: the lowest rung is encoded first, as before.
      if (isCancellation(err)) throw err;
    }
    if (prepared) {
      onRequest = { rungs: prepared.rungs, first: onRequestStart(offered)?.name };
      await publish();
      await becomeReady();
      audio = encodeAudio();
      await encodeGroup(rungs, { chunks: prepared.chunks, timeline: prepared.timeline, planRung: offered[0].name });
      return finish();
    }
    audio = encodeAudio();
  }
  if ((jitPossible || jitEncode) && !onRequestPath) {
    try {
      const lowest = rungs[0];
      const jit = await io.prepareJit({
        workspaceId,
        videoId,
        storageKey,
        name: sourceTop ? sourceTop.name : PASSTHROUGH_NAME,
        width: jitEncode ? lowest.width : info.width,
        height: jitEncode ? lowest.height : info.height,
        ...(passthrough.eligible ? { codecs: passthrough.codecs.replace(',mp4a.40.2', '') } : {}),
        demuxer: info.demuxer,
        durationSeconds: info.durationSeconds,
        audioStreams: info.audioStreams,
        ...(jitEncode ? { encode: { ...lowest, fps: info.fps } } : {}),
      });
      if (jit) {
        const rung: PlaylistRung = { name: jit.name, width: jit.width, height: jit.height, videoBitrate: jit.videoBitrate, maxrate: jit.maxrate, bufsize: 0, audioBitrate: jit.audioBitrate, codecs: jit.codecs };
        original = rung;
        // Playable now: the master (with the cut-on-demand audio group) and `ready`.
        await publish();
        if (sourceTop) {
          const entry = state.renditions[rungs.indexOf(sourceTop)];
          await acts.recordRendition({ videoId, name: entry.name, status: 'ready', progress: 100 });
          entry.status = 'ready';
          entry.progress = 100;
          entry.bitrate = rung.videoBitrate;
          ctx.updateProgress();
        }
        await becomeReady();
        // Behind `ready`: the full audio encode, and every segment not yet cut (one pass, the same
        // bytes), so later jobs find a complete rendition and the master its measured bandwidth.
        audio = encodeAudio();
        if (jitEncode) {
          // The whole ladder behind it; the encoded lowest rung replaces the per-segment one in the master.
          await encodeGroup(rungs);
          return finish();
        }
        try {
          const measured = await io.materializeJit({ workspaceId, videoId, name: rung.name });
          original = { ...rung, videoBitrate: measured.average, maxrate: measured.peak };
          if (sourceTop) state.renditions[rungs.indexOf(sourceTop)].bitrate = measured.average;
        } catch (err) {
          // Still playable: the segments keep being cut on request, the bandwidth stays estimated.
          if (isCancellation(err)) throw err;
        }
        const remaining = sourceTop ? rungs.filter((r) => r !== sourceTop) : rungs;
        if (remaining.length) await encodeGroup(remaining);
        else await publishMaster();
      }
    } catch (err) {
      if (isCancellation(err) || state.status === 'ready') throw err;
      // The remux below is the way to playable instead.
    }
    // Not ready this way: the audio group is encoded in full, as on the old path.
    if (state.status !== 'ready') audio = encodeAudio();
  }
  if (state.status === 'ready') {
    // Just-in-time path done: the ladder ran behind it above.
  } else if (passthrough.eligible && !aboveCap) {
    try {
      const codecs = audioGroup ? passthrough.codecs.replace(',mp4a.40.2', '') : passthrough.codecs;
      original = await io.remuxPassthrough({
        workspaceId,
        videoId,
        storageKey,
        hasAudio: rungAudio,
        width: info.width,
        height: info.height,
        codecs,
        ...(sourceTop ? { name: sourceTop.name } : {}),
      });
    } catch (err) {
      if (isCancellation(err)) throw err;
      // The ladder's lowest rung is the way to playable instead.
    }
  }
  if (state.status === 'ready') {
    // (just-in-time path)
  } else if (original && sourceTop) {
    // The remux IS the top rung: listed under its name with its measured bandwidth, ready now.
    const entry = state.renditions[rungs.indexOf(sourceTop)];
    await publishMaster();
    await acts.recordRendition({ videoId, name: entry.name, status: 'ready', progress: 100 });
    entry.status = 'ready';
    entry.progress = 100;
    entry.bitrate = original.videoBitrate;
    ctx.updateProgress();
    await becomeReady();
    const below = rungs.filter((r) => r !== sourceTop);
    if (below.length) await encodeGroup(below);
  } else if (original) {
    await publishMaster();
    await becomeReady();
    await encodeGroup(rungs);
  } else {
    await encodeGroup(rungs.slice(0, 1));
    await becomeReady();
    if (rungs.length > 1) await encodeGroup(rungs.slice(1));
  }
  return finish();

  /** After the H.264 ladder: extra codecs, the quality measures, the outputs. */
  async function finish(): Promise<void> {
    // SPEC §21 codecs: each extra codec's rungs (every rung, the source's too) once H.264 is complete.
    // A failed extra encode leaves the video as it is: H.264 always plays.
    const extraCodecs = (ctx.input.codecs ?? []).filter((c) => c !== 'h264');
    if (extraCodecs.length > 0 && state.status === 'ready' && patched('encoding-codecs-v1')) {
      for (const codec of extraCodecs) {
        const results = await Promise.allSettled(
          rungs.map((rung) => io.encodeCmafRendition({ workspaceId, videoId, storageKey, rung, codec, fps: info.fps, durationSeconds: info.durationSeconds })),
        );
        for (const r of results) {
          if (r.status === 'fulfilled') cmaf.push(r.value);
          else if (isCancellation(r.reason)) throw r.reason;
        }
      }
      if (cmaf.length > 0) {
        await publishMaster();
        await io.publishDash({ workspaceId, videoId, durationSeconds: info.durationSeconds, renditions: cmaf });
      }
    }
    await Promise.all(qualityJobs);
    await acts.recordState({ videoId, progress: state.progress });
    // SPEC §14 outputs (MP4, storyboard) run in their own workflow, from the finished ladder. New
    // marker here: transcode-* histories recorded before it replay without the request.
    if (patched('outputs-v1')) await acts.requestOutputs({ videoId, workspaceId });
  }
}
