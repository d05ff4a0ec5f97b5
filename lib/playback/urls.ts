import type { Config } from '../config';

/** The path part of a public URL: the CDN and the player are mounted under it on this server. */
export function mountPath(publicUrl: string): string {
  return new URL(publicUrl).pathname.replace(/\/+$/, '');
}

/** `{cdn_url}/v/<subject>/<file>`, where the subject is a `vid_` id or a playback token. */
export function cdnUrl(config: Config, subject: string, file: 'master.m3u8' | 'thumbnail.jpg'): string {
  return `${config.cdnUrl}/v/${subject}/${file}`;
}
