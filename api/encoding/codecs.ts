import type { Knex } from 'knex';
import { VIDEO_CODECS, type VideoCodec } from '../../lib/media/cmaf';

/** H.264 always, first; the others once each, in a stable order (SPEC §21). */
export function normalizeCodecs(list: readonly string[] | null | undefined): VideoCodec[] {
  return VIDEO_CODECS.filter((c) => c === 'h264' || list?.includes(c));
}

/** The codecs of a new video: its own `codecs`, else the workspace's default. */
export async function codecsForNewVideo(db: Knex, workspaceId: string, requested: readonly string[] | undefined): Promise<VideoCodec[]> {
  if (requested) return normalizeCodecs(requested);
  const w = await db('workspaces').where({ id: workspaceId }).first('default_codecs');
  return normalizeCodecs(w?.default_codecs as string[] | undefined);
}
