// SPEC §19 audio-only sources (MP3, AAC/M4A, WAV, FLAC, Ogg/Opus; docs/audio.md): the same
// lifecycle as a video with an audio-only ladder (64 and 128 kb/s AAC, one decode), a poster
// that is the cover art or the waveform, then ready and the outputs (M4A with mp4_support).
import { AUDIO_ONLY_LADDER } from '../../../lib/media/audio';
import type { PipelineContext } from './context';

export interface AudioOnlyInfo {
  durationSeconds: number | null;
  sizeBytes: number | null;
  coverArt?: boolean;
}

export async function audioOnlyPipeline(ctx: PipelineContext, info: AudioOnlyInfo): Promise<void> {
  const { acts, io, state } = ctx;
  const { videoId, workspaceId, storageKey } = ctx.input;
  state.renditions = AUDIO_ONLY_LADDER.map((r) => ({ name: r.name, width: 0, height: 0, bitrate: r.bitrate, status: 'processing', progress: 0 }));
  state.progress = 0;
  await acts.recordMetadata({ videoId, durationSeconds: info.durationSeconds, width: 0, height: 0, sizeBytes: info.sizeBytes, renditions: state.renditions });
  const poster = io.makeAudioPoster({ workspaceId, videoId, storageKey, durationSeconds: info.durationSeconds, coverArt: info.coverArt ?? false });
  ctx.track(poster.catch(() => undefined));
  await io.encodeAudioLadder({ workspaceId, videoId, storageKey });
  await io.publishAudioOnlyMaster({ workspaceId, videoId, rungs: AUDIO_ONLY_LADDER.map((r) => r.name) });
  await Promise.all(state.renditions.map((r) => acts.recordRendition({ videoId, name: r.name, status: 'ready', progress: 100 })));
  for (const r of state.renditions) {
    r.status = 'ready';
    r.progress = 100;
  }
  ctx.updateProgress();
  await poster;
  await ctx.setStatus('ready');
  await ctx.emit('video.ready');
  await acts.recordState({ videoId, progress: state.progress });
  await acts.requestOutputs({ videoId, workspaceId });
}
