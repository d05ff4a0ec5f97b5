import type { Knex } from 'knex';
import { compileRestriction, type Restriction } from '../protection/restriction';

/**
 * SPEC §20 for live streams: the restriction in force on a stream (aliased `l`) — its own, else
 * the workspace's default, as for videos (lib/playback/access.ts) — selected with the stream's
 * row, so the CDN's live routes and the live embed page judge each request on the current rows.
 */
export const liveRestrictionColumn = (db: Knex) =>
  db.raw(`(select json_build_object('id', pr.id, 'allowed_domains', pr.allowed_domains, 'allow_no_referrer', pr.allow_no_referrer)
             from playback_restrictions pr
            where pr.id = coalesce(l.playback_restriction_id, (select w.default_playback_restriction_id from workspaces w where w.id = l.workspace_id))) as restriction`);

export function liveRestriction(raw: unknown): Restriction | null {
  return raw ? compileRestriction(raw as { id: string; allowed_domains: string[]; allow_no_referrer: boolean }) : null;
}
