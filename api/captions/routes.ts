import type Router from '@koa/router';
import { type CaptionRow, captionError, captionUrl } from '../../lib/outputs/read';
import { canonicalLanguage, parseCaptions } from '../../lib/outputs/captions';
import { outputKeys } from '../../lib/outputs/keys';
import { subtitlePlaylist } from '../../lib/outputs/master';
import { republishMaster } from '../../lib/outputs/publish';
import { putSubtitleFiles } from '../../lib/outputs/timestampMap';
import type { Deps } from '../deps';
import { ApiError, badRequest, notFound } from '../errors';
import { parseQuery } from '../middleware/validate';
import { findVideo } from '../videos/find';
import { alignRoutes } from './align';
import { captionFormat, captionQuery } from './schema';

const languageNames = new Intl.DisplayNames(['en'], { type: 'language', fallback: 'code' });

function languageOf(param: string): string {
  const lang = canonicalLanguage(param);
  if (!lang) throw badRequest('invalid_language', `"${param}" is not a BCP-47 language tag (e.g. en, pt-BR)`);
  return lang;
}

/**
 * Caption tracks (SPEC §14). A PUT validates the file, stores it as WebVTT with a one-segment
 * subtitle playlist, and republishes the master playlist with its SUBTITLES group; the
 * renditions' lines stay as they were, so players already playing are not disturbed.
 */
export function captionRoutes(r: Router, deps: Deps): void {
  const { db, storage, config } = deps;
  const shape = (c: CaptionRow) => ({ language: c.language, label: c.label, default: c.is_default, status: c.status, url: captionUrl(config, c.video_id, c.language), error: captionError(c) });
  const labelOf = (language: string) => languageNames.of(language) ?? language;
  alignRoutes(r, deps, { languageOf, labelOf, shape });

  r.get('/videos/:id/captions', async (ctx) => {
    const row = await findVideo(ctx, deps, ctx.params.id);
    const rows: CaptionRow[] = await db('captions').where({ video_id: row.id }).orderBy('language');
    ctx.body = { data: rows.map(shape) };
  });

  r.put('/videos/:id/captions/:language', async (ctx) => {
    const row = await findVideo(ctx, deps, ctx.params.id);
    const language = languageOf(ctx.params.language);
    const query = parseQuery(ctx, captionQuery);
    const format = captionFormat(ctx.get('content-type'));
    if (!format || ctx.state.text === undefined) {
      throw new ApiError(415, 'unsupported_content_type', 'Send the captions as WebVTT (Content-Type: text/vtt) or SRT (application/x-subrip)');
    }
    const parsed = parseCaptions(ctx.state.text, format);
    if (!parsed.ok) {
      const { line, message } = parsed.problem;
      throw badRequest('invalid_captions', `The ${format === 'srt' ? 'SRT' : 'WebVTT'} file is invalid at line ${line}: ${message}`, { line, message });
    }
    if (row.status === 'failed') throw badRequest('invalid_state', 'The video has failed; captions can be added once it is processed');
    const ws = row.workspace_id;
    // Cue time 0 is the media's first presentation time (lib/outputs/timestampMap.ts), once there is media.
    await putSubtitleFiles(storage, ws, row.id, language, parsed.vtt);
    const duration = Math.max(row.duration_seconds ?? 0, parsed.endSeconds, 1);
    await storage.put(outputKeys.subtitlePlaylist(ws, row.id, language), subtitlePlaylist(duration, 'captions.vtt'), { contentType: 'application/vnd.apple.mpegurl' });

    const existed = await db.transaction(async (tx) => {
      const before = await tx('captions').where({ video_id: row.id, language }).first();
      const isDefault = query.default ?? before?.is_default ?? false;
      if (isDefault) await tx('captions').where({ video_id: row.id }).whereNot({ language }).update({ is_default: false });
      await tx('captions')
        .insert({ video_id: row.id, language, label: query.label ?? before?.label ?? labelOf(language), is_default: isDefault, status: 'ready', origin: 'file', error_code: null, error_message: null })
        .onConflict(['video_id', 'language'])
        .merge(['label', 'is_default', 'status', 'origin', 'error_code', 'error_message', 'updated_at']);
      return Boolean(before);
    });
    await republishMaster(db, storage, { workspaceId: ws, videoId: row.id });
    deps.hot.files.dropVideo(row.id);
    const saved: CaptionRow = await db('captions').where({ video_id: row.id, language }).first();
    ctx.status = existed ? 200 : 201;
    ctx.body = { ...shape(saved), cues: parsed.cues };
  });

  r.delete('/videos/:id/captions/:language', async (ctx) => {
    const row = await findVideo(ctx, deps, ctx.params.id);
    const language = languageOf(ctx.params.language);
    const n = await db('captions').where({ video_id: row.id, language }).delete();
    if (!n) throw notFound('Caption track');
    // The master stops naming the track before its files go, so no player is sent to a 404.
    await republishMaster(db, storage, { workspaceId: row.workspace_id, videoId: row.id });
    deps.hot.files.dropVideo(row.id);
    await storage.deletePrefix(outputKeys.subtitleDir(row.workspace_id, row.id, language));
    await storage.deletePrefix(outputKeys.transcript(row.workspace_id, row.id, language));
    ctx.status = 204;
  });
}
