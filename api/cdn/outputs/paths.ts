// The grammar of the SPEC §14 CDN paths after `/v/`: nothing else reaches storage.
const SUBJECT = '(vid_[0-9a-f]{32}|[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+\\.[A-Za-z0-9_-]+)';
const LANG = '([A-Za-z0-9-]{2,35})';
const PATH_RE = new RegExp(
  `^${SUBJECT}\\/(?:subs\\/${LANG}\\/(index\\.m3u8|captions\\.vtt)|captions\\/${LANG}\\.vtt|download\\/(capped_1080p\\.mp4|audio\\.m4a)|storyboard\\.(vtt|jpg)|thumbnail\\.(jpg|png|webp)|animated\\.(gif|webp))$`,
);

export type OutputPath =
  /** `hls`: asked for through the subtitle playlist (subs/<lang>/…), not as the download (captions/<lang>.vtt). */
  | { kind: 'subtitle'; lang: string; file: 'index.m3u8' | 'captions.vtt'; hls: boolean }
  | { kind: 'download'; name: string }
  | { kind: 'storyboard'; ext: 'vtt' | 'jpg' }
  | { kind: 'thumbnail'; ext: 'jpg' | 'png' | 'webp' }
  | { kind: 'animated'; ext: 'gif' | 'webp' };

export function parseOutputPath(rest: string): { subject: string; isId: boolean; path: OutputPath } | null {
  const m = PATH_RE.exec(rest);
  if (!m) return null;
  const [, subject, subLang, subFile, capLang, download, storyboard, thumb, animated] = m;
  const isId = !subject.includes('.');
  const at = (path: OutputPath) => ({ subject, isId, path });
  if (subLang) return at({ kind: 'subtitle', lang: subLang, file: subFile as 'index.m3u8' | 'captions.vtt', hls: true });
  if (capLang) return at({ kind: 'subtitle', lang: capLang, file: 'captions.vtt', hls: false });
  if (download) return at({ kind: 'download', name: download });
  if (storyboard) return at({ kind: 'storyboard', ext: storyboard as 'vtt' | 'jpg' });
  if (thumb) return at({ kind: 'thumbnail', ext: thumb as 'jpg' | 'png' | 'webp' });
  return at({ kind: 'animated', ext: animated as 'gif' | 'webp' });
}
