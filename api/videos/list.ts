import type { Knex } from 'knex';
import { z } from 'zod';
import { badRequest } from '../errors';

export const listQuery = z.object({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z.string().max(200).optional(),
  order: z.enum(['desc', 'asc']).default('desc'),
  status: z.enum(['pending_upload', 'uploading', 'processing', 'ready', 'failed']).optional(),
  visibility: z.enum(['public', 'unlisted', 'private']).optional(),
  folder_id: z.string().max(100).optional(),
  tag: z.string().max(64).optional(),
  q: z.string().max(200).optional(),
});

export type ListQuery = z.infer<typeof listQuery>;

interface Cursor {
  t: string; // created_at, ISO with microseconds as Postgres returns them
  i: string; // video uuid
}

export function encodeCursor(createdAt: string, id: string): string {
  return Buffer.from(JSON.stringify({ t: createdAt, i: id } satisfies Cursor)).toString('base64url');
}

function decodeCursor(text: string): Cursor {
  try {
    const c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
    if (typeof c.t === 'string' && typeof c.i === 'string' && /^[0-9a-f-]{36}$/.test(c.i) && !Number.isNaN(Date.parse(c.t))) return c;
  } catch {
    /* fall through */
  }
  throw badRequest('invalid_cursor', 'cursor is not a cursor returned by this endpoint');
}

/**
 * Keyset pagination on (created_at, id): a page never repeats or skips rows when new videos
 * arrive between requests. The cursor carries created_at as text so microseconds survive.
 */
export function applyListQuery(q: Knex.QueryBuilder, params: ListQuery, workspaceId: string): Knex.QueryBuilder {
  q.where('v.workspace_id', workspaceId).whereNull('v.deleted_at');
  if (params.status) q.where('v.status', params.status === 'uploading' ? 'pending_upload' : params.status);
  if (params.visibility) q.where('v.visibility', params.visibility);
  if (params.folder_id) {
    if (params.folder_id === 'root' || params.folder_id === 'null') q.whereNull('v.folder_id');
    else q.where('v.folder_id', params.folder_id);
  }
  // With a tag, the page is walked in video_tags' (tag_id, video_created_at, video_id) index, which
  // is list order for that tag; the keyset and the order are on that copy of (created_at, id).
  const key = params.tag ? ['vt.video_created_at', 'vt.video_id'] : ['v.created_at', 'v.id'];
  if (params.tag) {
    q.join('video_tags as vt', (on) =>
      on.on('vt.video_id', 'v.id').andOn('vt.tag_id', '=', q.client.raw('(select id from tags where workspace_id = ? and name = ?)', [workspaceId, params.tag!])),
    );
  }
  if (params.q) q.whereRaw(`lower(v.title) like ? escape '\\'`, [`%${params.q.toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`)}%`]);
  if (params.cursor) {
    const c = decodeCursor(params.cursor);
    const op = params.order === 'desc' ? '<' : '>';
    q.whereRaw(`(${key[0]}, ${key[1]}) ${op} (?::timestamptz, ?::uuid)`, [c.t, c.i]);
  }
  return q
    .orderBy([
      { column: key[0], order: params.order },
      { column: key[1], order: params.order },
    ])
    .limit(params.limit + 1);
}
