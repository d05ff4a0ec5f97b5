import type { Knex } from 'knex';
import { newId } from './ids';

/** A video's tag names as stored: trimmed, blanks dropped, each once. */
export const uniqueTagNames = (names: string[]): string[] => [...new Set(names.map((n) => n.trim()).filter(Boolean))];

/** Replaces a video's tags by name, creating missing tags in the workspace. */
export async function setVideoTags(tx: Knex, workspaceId: string, videoId: string, names: string[]): Promise<void> {
  const unique = uniqueTagNames(names);
  await tx('video_tags').where({ video_id: videoId }).delete();
  if (unique.length === 0) return;
  await tx('tags')
    .insert(unique.map((name) => ({ id: newId('tag'), workspace_id: workspaceId, name })))
    .onConflict(['workspace_id', 'name'])
    .ignore();
  const tags: Array<{ id: string }> = await tx('tags').where({ workspace_id: workspaceId }).whereIn('name', unique).select('id');
  await tx('video_tags').insert(tags.map((t) => ({ video_id: videoId, tag_id: t.id })));
}
