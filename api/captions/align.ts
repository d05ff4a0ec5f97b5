import type Router from '@koa/router';
import { newId } from '../../lib/ids';
import { alignLanguage, tokenize } from '../../lib/outputs/align/transcript';
import { outputKeys } from '../../lib/outputs/keys';
import { republishMaster } from '../../lib/outputs/publish';
import type { CaptionRow } from '../../lib/outputs/read';
import { boundPassed, jobsInFlight, lockJobAdmission } from '../../lib/videos/jobs';
import { type AlignCaptionsWorkflowInput, alignCaptionsWorkflowId, alignRequestSignal } from '../../workflows/jobs/defs';
import { fairness, Priority, priority } from '../../workflows/priority';
import type { Deps } from '../deps';
import { ApiError, badRequest, conflict, tooManyJobs } from '../errors';
import { auth } from '../middleware/auth';
import { parseBody, parseQuery } from '../middleware/validate';
import { findVideo } from '../videos/find';
import { captionQuery, transcriptBody } from './schema';

/** The largest transcript taken: a 2-hour talk at 150 words a minute is about 100 KB. */
export const MAX_TRANSCRIPT_BYTES = 200 * 1024;
/** Nobody says more than this many words a second for long (fast speech is about 4). */
export const MAX_WORDS_PER_SECOND = 8;

/**
 * POST /v1/videos/{id}/captions/{language}/align (issue 37): a plain-text transcript becomes a
 * caption track timed to the speech by forced alignment. Everything that can be refused without
 * listening is refused here (size, NULs, language, word count against the duration); the rest is
 * the alignment workflow's (workflows/jobs/captions.ts), which turns the track `ready` or `failed`.
 */
export function alignRoutes(r: Router, deps: Deps, helpers: { languageOf: (p: string) => string; labelOf: (lang: string) => string; shape: (c: CaptionRow) => unknown }): void {
  const { db, storage, config } = deps;

  r.post('/videos/:id/captions/:language/align', async (ctx) => {
    const row = await findVideo(ctx, deps, ctx.params.id);
    const language = helpers.languageOf(ctx.params.language);
    const query = parseQuery(ctx, captionQuery);
    if (!alignLanguage(language)) {
      throw new ApiError(422, 'language_unsupported', `Transcripts can be aligned in English (en, en-*) and French (fr, fr-*) only, not ${language}`);
    }
    let text: string;
    if (ctx.state.text !== undefined) text = ctx.state.text;
    else if (/^\s*application\/(?:[\w.!#$&^-]+\+)?json\s*(;|$)/i.test(ctx.get('content-type'))) text = parseBody(ctx, transcriptBody).text;
    else throw new ApiError(415, 'unsupported_content_type', 'Send the transcript as text/plain, or as JSON {"text": "…"}');
    if (Buffer.byteLength(text, 'utf8') > MAX_TRANSCRIPT_BYTES) throw new ApiError(413, 'transcript_too_large', `The transcript is larger than ${MAX_TRANSCRIPT_BYTES / 1024} KB`);
    if (text.includes('\u0000')) throw badRequest('invalid_request', 'The transcript contains a NUL byte', [{ field: 'text', message: 'must not contain NUL (\\u0000)' }]);

    if (row.status !== 'ready') throw conflict('not_ready', 'Captions can be aligned once the video is ready');
    const duration = Number(row.duration_seconds ?? 0);
    if (duration > config.align.maxSeconds) throw new ApiError(422, 'video_too_long', `Transcripts can be aligned to videos up to ${config.align.maxSeconds / 60} minutes long`);
    const lang = alignLanguage(language)!;
    const words = tokenize(text, lang).reduce((n, t) => n + t.keys.length, 0);
    if (words === 0) throw badRequest('invalid_transcript', 'The transcript has no words');
    const most = Math.max(50, Math.ceil(duration * MAX_WORDS_PER_SECOND));
    if (words > most) {
      throw new ApiError(422, 'transcript_too_long', `The transcript has ${words} words; ${Math.round(duration)} s of audio cannot hold more than ${most}`, { words, max_words: most });
    }

    const ws = row.workspace_id;
    const started = await db.transaction(async (tx) => {
      // SPEC §25: alignments in flight are bounded per video (whatever their language tags) and per workspace.
      await lockJobAdmission(tx, ws);
      const before: CaptionRow | undefined = await tx('captions').where({ video_id: row.id, language }).forUpdate().first();
      if (before?.status === 'aligning') return null;
      const passed = boundPassed(await jobsInFlight(tx, ws, row.id), config.jobs);
      if (passed) throw tooManyJobs(passed, config.jobs);
      const isDefault = query.default ?? before?.is_default ?? false;
      if (isDefault) await tx('captions').where({ video_id: row.id }).whereNot({ language }).update({ is_default: false });
      await tx('captions')
        .insert({ video_id: row.id, language, label: query.label ?? before?.label ?? helpers.labelOf(language), is_default: isDefault, status: 'aligning', origin: 'aligned', error_code: null, error_message: null })
        .onConflict(['video_id', 'language'])
        .merge(['label', 'is_default', 'status', 'origin', 'error_code', 'error_message', 'updated_at']);
      return { replaced: before?.status === 'ready' };
    });
    if (!started) throw conflict('alignment_in_progress', `The ${language} track is being aligned already; wait for it to be ready or failed`);
    await storage.put(outputKeys.transcript(ws, row.id, language), text, { contentType: 'text/plain; charset=utf-8' });
    // A ready track being replaced leaves the master until its new timing is ready (reads say `aligning`).
    if (started.replaced) {
      await republishMaster(db, storage, { workspaceId: ws, videoId: row.id });
      deps.hot.files.dropVideo(row.id);
    }
    // The previous run of this track may not have closed yet (the track turned ready or failed a
    // moment ago): signal-with-start hands it this request, or starts a run when none is open.
    const request = newId('req');
    const input: AlignCaptionsWorkflowInput = { videoId: row.id, workspaceId: ws, language, transcodeQueue: config.temporal.transcodeQueue, request };
    try {
      await deps.temporal.workflow.signalWithStart('alignCaptionsWorkflow', {
        taskQueue: config.temporal.taskQueue,
        workflowId: alignCaptionsWorkflowId(row.id, language),
        args: [input],
        signal: alignRequestSignal,
        signalArgs: [{ request }],
        priority: priority(Priority.onRequest, fairness(ws, auth(ctx).plan)),
      });
    } catch (err) {
      // No workflow will finish the track: it must not stay `aligning` for ever.
      await db('captions').where({ video_id: row.id, language, status: 'aligning' }).update({ status: 'failed', error_code: 'processing_unavailable', error_message: 'The alignment could not be started; send the transcript again' });
      throw err;
    }
    const saved: CaptionRow = await db('captions').where({ video_id: row.id, language }).first();
    ctx.status = 202;
    ctx.body = { ...(helpers.shape(saved) as object), words };
  });
}
