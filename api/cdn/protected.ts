import type { ParameterizedContext } from 'koa';
import type { PlaybackVideo } from '../../lib/playback/access';
import type { CachedFile } from '../../lib/playback/fileCache';
import type { PlaybackGrant } from '../../lib/playback/tokens';
import type { ViewerRequest } from '../../lib/protection/enforce';
import { cappedMaster, encryptedMediaPlaylist, isCmafRung, withoutCmafVariants } from '../../lib/protection/hls';
import { videoContentKey } from '../../lib/protection/keys';
import type { Storage } from '../../lib/storage';
import type { Deps } from '../deps';
import { forbidden, notFound } from '../errors';
import { clientAddress } from '../middleware/client';
import type { CdnFile } from './files';

// SPEC §20 on the CDN: what the HLS route does differently for protected videos and capped tokens.

/** The headers and address (TRUSTED_PROXIES decides it: api/middleware/client.ts) the restriction and the token's `ip` claim are judged on. */
export function viewerOf(ctx: ParameterizedContext): ViewerRequest {
  return { referer: ctx.get('referer') || undefined, origin: ctx.get('origin') || undefined, ip: clientAddress(ctx) };
}

/**
 * `{cdn_url}/v/<token>/key`: the video's AES-128 key, 16 raw bytes, only to a valid token that
 * passed the restriction (checked by the caller). A bare id never gets it, even for a public
 * video: the key is what makes a recording of the CDN's bytes useless without a token.
 */
export async function answerKey(ctx: ParameterizedContext, deps: Deps, video: PlaybackVideo, grant: PlaybackGrant | null): Promise<void> {
  if (!grant) throw forbidden('forbidden', 'The key is given only to a valid playback token (GET /playback/{id})');
  if (video.encryption !== 'aes-128') throw notFound('Key');
  const key = await videoContentKey(deps.db, deps.config.protection, video.id);
  ctx.set('Cache-Control', 'private, no-store');
  ctx.type = 'application/octet-stream';
  ctx.status = 200;
  ctx.body = Buffer.from(key);
}

/**
 * How a playlist is rewritten for this request, or undefined when it is served as stored: the
 * multivariant playlist lists only rungs within the token's `max_resolution`; an encrypted
 * video's rendition playlists get `#EXT-X-KEY` lines pointing at this subject's key URL.
 */
export function playlistRewrite(
  deps: Deps,
  video: PlaybackVideo,
  grant: PlaybackGrant | null,
  file: CdnFile,
  subject: string,
): ((text: string) => Promise<string>) | undefined {
  if (!file.rung) {
    const max = grant?.maxResolution;
    const encrypted = video.encryption === 'aes-128';
    if (max === undefined && !encrypted) return undefined;
    return async (text) => {
      const listed = encrypted ? withoutCmafVariants(text) : text;
      return max === undefined ? listed : cappedMaster(listed, max);
    };
  }
  if (video.encryption !== 'aes-128') return undefined;
  return async (text) => {
    const key = await videoContentKey(deps.db, deps.config.protection, video.id);
    return encryptedMediaPlaylist(text, `${deps.config.cdnUrl}/v/${subject}/key`, key, file.rung!);
  };
}

/**
 * An encrypted video's CMAF renditions (HEVC, AV1) and its DASH manifest are not served (409
 * `encryption_unsupported`): whole-segment AES-128 is HLS's, which DASH players cannot decrypt,
 * and CMAF with AES-128 is not tested with the players. Its H.264 ladder plays everywhere.
 */
export function cmafRefusal(video: PlaybackVideo, file: CdnFile): string | null {
  if (video.encryption !== 'aes-128') return null;
  if (file.rung ? isCmafRung(file.rung) : file.contentType === 'application/dash+xml') {
    return 'An encrypted video is served as HLS AES-128 over its H.264 renditions only: no DASH manifest and no HEVC/AV1 renditions';
  }
  return null;
}

/** A whole stored object (segments and playlists are small), or null when missing. */
export async function readWhole(deps: { storage: Storage }, key: string): Promise<CachedFile | null> {
  const object = await deps.storage.get(key);
  if (!object) return null;
  const chunks: Buffer[] = [];
  for await (const c of object.body) chunks.push(c as Buffer);
  return { body: Buffer.concat(chunks), etag: object.etag };
}
