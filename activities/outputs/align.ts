import path from 'node:path';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { AlignerError, runAligner } from '../../lib/outputs/align/aligner';
import { buildCues, toWebVtt } from '../../lib/outputs/align/cues';
import { ALIGN_THRESHOLDS } from '../../lib/outputs/align/protocol';
import { timeTokens } from '../../lib/outputs/align/timing';
import { ALIGN_MODELS, alignLanguage, tokenize } from '../../lib/outputs/align/transcript';
import { parseCaptions } from '../../lib/outputs/captions';
import { outputKeys } from '../../lib/outputs/keys';
import { subtitlePlaylist } from '../../lib/outputs/master';
import { republishMaster } from '../../lib/outputs/publish';
import { readText } from '../../lib/outputs/segments';
import { putSubtitleFiles } from '../../lib/outputs/timestampMap';
import { speechPcmArgs } from '../../lib/media/outputs';
import { createMediaTools } from '../../lib/media/tools';
import type { ActivityDeps } from '../deps';
import { toFailure } from '../transcode/media';
import { removeIfDeleted, withTempDir } from './common';

export interface AlignCaptionsInput {
  videoId: string;
  workspaceId: string;
  language: string;
}

export interface AlignCaptionsResult {
  cues: number;
  words: number;
  /** Words the dictionary had (the others were placed between their neighbours). */
  inDictionary: number;
  alignMs: number;
  peakRssMb: number;
  audioSeconds: number;
}

const fail = (code: string, message: string) => ApplicationFailure.nonRetryable(message, code);

/**
 * Captions from a transcript (issue 37): the video's first audio stream as 16 kHz mono PCM
 * (ffmpeg through MediaTools, sandboxed), the transcript's words force-aligned to it in a bounded
 * child process (lib/outputs/align/aligner.ts), the timed words grouped into cues, and the WebVTT
 * published as an ordinary caption track.
 */
export function alignActivities({ db, storage, config }: ActivityDeps) {
  const media = createMediaTools(config.media);

  return {
    async alignCaptions(p: AlignCaptionsInput): Promise<AlignCaptionsResult | null> {
      const ctx = Context.current();
      const video = await db('videos').where({ id: p.videoId }).first('id', 'workspace_id', 'storage_key', 'duration_seconds', 'deleted_at');
      const track = await db('captions').where({ video_id: p.videoId, language: p.language }).first('status');
      // Deleted meanwhile (the video, or the track by DELETE): nothing to make.
      if (!video || video.deleted_at || track?.status !== 'aligning') return null;
      const lang = alignLanguage(p.language);
      if (!lang) throw fail('language_unsupported', `No acoustic model for ${p.language}`);
      const transcript = await readText(storage, outputKeys.transcript(p.workspaceId, p.videoId, p.language));
      if (transcript === null) throw fail('transcript_missing', 'The transcript is gone');
      const tokens = tokenize(transcript, lang);
      const keys = tokens.flatMap((t) => t.keys);
      if (keys.length === 0) throw fail('transcript_empty', 'The transcript has no words to align');

      // A cancellation (the video's deletion) reaches an activity only with a heartbeat; the decode
      // and the aligner report progress rarely (once per window), so beat every second meanwhile.
      const beat = setInterval(() => ctx.heartbeat(), 1000);
      return withTempDir(async (dir) => {
        const pcm = path.join(dir, 'speech.f32');
        let audioSeconds: number;
        try {
          const input = await media.open(await storage.mediaSource(video.storage_key), ctx.cancellationSignal, { allowAudioOnly: true });
          if (!input.info.hasAudio) throw fail('no_audio', 'The video has no audio to align the transcript to');
          audioSeconds = input.info.durationSeconds ?? video.duration_seconds ?? 0;
          if (audioSeconds > config.align.maxSeconds) throw fail('video_too_long', `The audio is longer than ${config.align.maxSeconds / 60} minutes`);
          await media.ffmpeg(speechPcmArgs({ input: input.path, inputArgs: input.inputArgs, output: pcm }), input, {
            outputDir: dir, durationSeconds: audioSeconds || null, onProgress: (pct) => ctx.heartbeat({ decoding: pct }), signal: ctx.cancellationSignal,
          });
        } catch (err) {
          if (err instanceof ApplicationFailure) throw err;
          throw toFailure(err);
        }

        let run;
        try {
          run = await runAligner(
            { pcm, model: ALIGN_MODELS[lang], keys, ...ALIGN_THRESHOLDS },
            path.join(dir, 'job.json'),
            { timeoutMs: 60_000 + (audioSeconds / 60) * config.align.timeoutMsPerMinute, maxRssMb: config.align.maxRssMb },
            (info) => ctx.heartbeat({ aligning: info }),
            ctx.cancellationSignal,
          );
        } catch (err) {
          if (err instanceof AlignerError) throw fail(err.code, err.message);
          throw err;
        }
        const out = run.output;
        if (!out.ok) {
          if (out.code === 'transcript_not_in_dictionary') {
            throw fail('transcript_not_in_dictionary', `Only ${out.inDictionary} of the transcript's ${out.total} words are ${lang === 'en' ? 'English' : 'French'} words the aligner knows: is the transcript in another language?`);
          }
          if (out.code === 'speech_not_covered') {
            throw fail('transcript_mismatch', `The transcript does not match the speech: its words account for only ${Math.round((out.speechCoverage ?? 0) * 100)}% of the speech heard. Is it the transcript of this video, whole and in its language?`);
          }
          throw fail('transcript_mismatch', 'The transcript does not match the speech (no alignment of its words to the audio was found): is it the transcript of this video, in its language? Is there speech?');
        }
        const keyTimes = out.times.map((t) => (t ? { start: t[0], end: t[1] } : null));
        const cues = buildCues(timeTokens(tokens, keyTimes, audioSeconds));
        const vtt = toWebVtt(cues);
        const parsed = parseCaptions(vtt, 'vtt');
        if (!parsed.ok) throw new Error(`The aligned WebVTT is invalid at line ${parsed.problem.line}: ${parsed.problem.message}`);

        // Publish only if the track is still the one asked for (a DELETE or a PUT may have come meanwhile).
        const still = await db('captions').where({ video_id: p.videoId, language: p.language, status: 'aligning' }).first('language');
        if (!still) return null;
        await putSubtitleFiles(storage, p.workspaceId, p.videoId, p.language, parsed.vtt);
        const duration = Math.max(video.duration_seconds ?? 0, parsed.endSeconds, 1);
        await storage.put(outputKeys.subtitlePlaylist(p.workspaceId, p.videoId, p.language), subtitlePlaylist(duration, 'captions.vtt'), { contentType: 'application/vnd.apple.mpegurl' });
        const n = await db('captions')
          .where({ video_id: p.videoId, language: p.language, status: 'aligning' })
          .update({ status: 'ready', error_code: null, error_message: null, updated_at: db.fn.now() });
        if (!n) return null;
        await republishMaster(db, storage, { workspaceId: p.workspaceId, videoId: p.videoId });
        if (await removeIfDeleted(db, storage, p.workspaceId, p.videoId)) return null;
        return { cues: cues.length, words: keys.length, inDictionary: out.inDictionary, alignMs: run.ms, peakRssMb: run.peakRssMb, audioSeconds };
      }, 'vidhost-align-').finally(() => clearInterval(beat));
    },

    /** The track's failure, for reads (the workflow emits the event). Only an aligning track fails. */
    async markCaptionsFailed(p: { videoId: string; language: string; code: string; message: string }): Promise<void> {
      await db('captions')
        .where({ video_id: p.videoId, language: p.language, status: 'aligning' })
        .update({ status: 'failed', error_code: p.code, error_message: p.message.slice(0, 1000), updated_at: db.fn.now() });
    },
  };
}
