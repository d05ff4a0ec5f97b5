import { z } from 'zod';
import { mountPath } from '../../lib/playback/urls';
import { type DocContext, operation } from '../openapi/operation';

const html = (description: string) => ({ description, content: { 'text/html': { schema: z.string() } } });

/** `{player_url}/embed/<id>` (SPEC §7), documented on the player's own server URL. */
export function playerDocs(d: DocContext): void {
  const servers = [d.config.playerUrl];
  const prefix = mountPath(d.config.playerUrl);
  operation(d, {
    method: 'get', path: '/embed/{id}', operationId: 'embedPlayer', tag: 'Player', auth: false, servers, koaRoute: `${prefix}/embed/:id`,
    summary: 'The embeddable HLS player page (hls.js served by the project)',
    params: z.object({ id: z.string().meta({ description: '`vid_…` or UUID' }) }),
    query: z.object({
      token: z.string().optional().meta({ description: 'Playback token (private videos)' }),
      autoplay: z.string().optional(),
      muted: z.string().optional(),
      loop: z.string().optional(),
    }),
    responses: { 200: html('Player, or a processing/failed page'), 403: html('Private without a valid token, or over the bandwidth allowance'), 404: html('No such video') },
  });
  operation(d, {
    method: 'get', path: '/assets/{name}', operationId: 'playerAsset', tag: 'Player', auth: false, servers, koaRoute: `${prefix}/assets/:name`,
    summary: 'The player\'s scripts and styles (immutable, versioned URLs)',
    params: z.object({ name: z.string().meta({ example: 'embed.js' }) }),
    responses: {
      200: { description: 'The asset', content: { 'application/javascript': { schema: z.string() }, 'text/css': { schema: z.string() } } },
      404: html('No such asset'),
    },
  });
}
