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
  if (params.tag) {
    q.whereExists((sub) =>
      sub.select(1).from('video_tags as vt').join('tags as t', 't.id', 'vt.tag_id').whereRaw('vt.video_id = v.id').andWhere('t.name', params.tag!),
    );
  }
  if (params.q) q.whereRaw(`lower(v.title) like ? escape '\\'`, [`%${params.q.toLowerCase().replace(/[\\%_]/g, (m) => `\\${m}`)}%`]);
  if (params.cursor) {
    const c = decodeCursor(params.cursor);
    const op = params.order === 'desc' ? '<' : '>';
    q.whereRaw(`(v.created_at, v.id) ${op} (?::timestamptz, ?::uuid)`, [c.t, c.i]);
  }
  return q
    .orderBy([
      { column: 'v.created_at', order: params.order },
      { column: 'v.id', order: params.order },
    ])
    .limit(params.limit + 1);
}
