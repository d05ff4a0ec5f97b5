import { keys } from '../../lib/storage';

export type FileKind = 'playlist' | 'segment' | 'thumbnail';

export interface CdnFile {
  kind: FileKind;
  contentType: string;
  key: (workspaceId: string, videoId: string) => string;
  /** For a rendition's playlist and segments: the rung and the file name in it. */
  rung?: string;
  name?: string;
}

// The whole grammar of a CDN path after `/v/`: the subject (a public id, a UUID or a token)
// and one of the published file names. Nothing else reaches storage, so no traversal. Audio
// (SPEC §19): `audio/<rendition>/…` of the AUDIO group, `audio-64k|audio-128k/…` of an audio-only ladder.
const PATH_RE =
  /^(vid_[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)\/(?:(master\.m3u8|manifest\.mpd|thumbnail\.jpg|key)|([1-9][0-9]{1,4}p(?:-hevc|-av1)?|source|audio-(?:64|128)k|audio\/[A-Za-z0-9-]{1,48})\/(index\.m3u8|seg_[0-9]{5,6}\.(?:ts|m4s)|init\.mp4))$/;

const PLAYLIST = 'application/vnd.apple.mpegurl';

/** Parses `<subject>/<file>`; null for anything that is not a file the pipeline publishes. `key` is the AES-128 key (SPEC §20). */
export function parseCdnPath(rest: string): { subject: string; isId: boolean; file: CdnFile | 'key' } | null {
  const m = PATH_RE.exec(rest);
  if (!m) return null;
  const [, subject, top, rung, name] = m;
  const isId = !subject.includes('.');
  if (top === 'key') return { subject, isId, file: 'key' };
  if (top === 'master.m3u8') return { subject, isId, file: { kind: 'playlist', contentType: PLAYLIST, key: keys.master } };
  if (top === 'manifest.mpd') return { subject, isId, file: { kind: 'playlist', contentType: 'application/dash+xml', key: keys.dashManifest } };
  if (top === 'thumbnail.jpg') return { subject, isId, file: { kind: 'thumbnail', contentType: 'image/jpeg', key: keys.thumbnail } };
  const key = (ws: string, vid: string) => keys.rendition(ws, vid, rung) + name;
  return name === 'index.m3u8'
    ? { subject, isId, file: { kind: 'playlist', contentType: PLAYLIST, key, rung, name } }
    : { subject, isId, file: { kind: 'segment', contentType: name.endsWith('.ts') ? 'video/mp2t' : 'video/mp4', key, rung, name } };
}

/** Whether this file is a segment the ladder will still write over (its rung is on request: issue 47). */
export const replaceable = (video: { on_request?: string[] }, file: Pick<CdnFile, 'kind' | 'rung'>): boolean =>
  file.kind === 'segment' && file.rung !== undefined && (video.on_request?.includes(file.rung) ?? false);

/** The headers a page on another origin may read from a CDN answer. */
export const CDN_EXPOSE_HEADERS = 'Content-Length, Content-Range, Accept-Ranges, ETag';
/** WHIP/WHEP (SPEC §22): the session resource and its ETag/Link must be readable by a page on another origin. */
export const REALTIME_EXPOSE_HEADERS = 'Location, ETag, Link, Accept-Patch, Content-Length';

const YEAR = 31_536_000;

/**
 * Segments never change. The master playlist gains a line per finished rendition, so it is
 * short-lived until the ladder is complete. Token URLs are private and never outlive the token:
 * a shared cache must not keep serving a private video after its signed URL expired.
 */
export function cacheControl(kind: FileKind, opts: { growing: boolean; tokenExpiresAt: Date | null; now?: number; replaceable?: boolean }): string {
  // A segment of a rung still encoded on request is rewritten by the ladder (issue 47): a minute.
  const base = kind === 'segment' ? (opts.replaceable ? 60 : YEAR) : kind === 'thumbnail' ? 3600 : opts.growing ? 5 : 300;
  const immutable = kind === 'segment' && !opts.replaceable ? ', immutable' : '';
  if (!opts.tokenExpiresAt) return `public, max-age=${base}${immutable}`;
  const left = Math.max(0, Math.floor((opts.tokenExpiresAt.getTime() - (opts.now ?? Date.now())) / 1000));
  return `private, max-age=${Math.min(base, left)}${immutable}`;
}

/** RFC 9110 §13.1.2: If-None-Match uses the weak comparison; `*` matches any current object. */
export function etagMatches(ifNoneMatch: string, etag: string): boolean {
  const opaque = (t: string) => t.trim().replace(/^W\//, '');
  if (ifNoneMatch.trim() === '*') return true;
  return ifNoneMatch.split(',').some((t) => opaque(t) === opaque(etag));
}
