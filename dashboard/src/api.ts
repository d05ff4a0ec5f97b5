// Every call goes to the public API (SPEC §15) with the session cookie; state changes carry the
// session's CSRF token. Only /dashboard/session is the dashboard's own.
// The answers' types are the generated contract's (@vidhost/client, type-only: nothing of it is
// bundled), so a change to the API's read shape fails `tsc -p dashboard`.
import type { components } from '@vidhost/client';

/** Every named schema of the OpenAPI document: `Schemas['Video']`, `Schemas['FolderList']`, … */
export type Schemas = components['schemas'];

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

let csrf = '';
export const setCsrf = (token: string) => {
  csrf = token;
};

/** `body`: JSON, or a Blob (a File) sent as it is with its own type (a watermark's image, SPEC §24). */
export async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  const raw = body instanceof Blob;
  if (body !== undefined) headers['Content-Type'] = raw ? body.type || 'application/octet-stream' : 'application/json';
  if (method !== 'GET') headers['X-CSRF-Token'] = csrf;
  const res = await fetch(path.startsWith('/dashboard/') ? path : `/v1${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : raw ? body : JSON.stringify(body),
    credentials: 'same-origin',
  });
  if (res.status === 204) return undefined as T;
  const data = await res.json().catch(() => ({}));
  if (!res.ok) {
    const e = data.error ?? {};
    if (res.status === 401 && !path.startsWith('/dashboard/session')) window.dispatchEvent(new Event('vh:signed-out'));
    throw new ApiError(res.status, e.code ?? 'error', e.message ?? `HTTP ${res.status}`);
  }
  return data as T;
}

export const qs = (params: Record<string, string | number | undefined | null>) => {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null && v !== '') s.set(k, String(v));
  const t = s.toString();
  return t ? `?${t}` : '';
};

/** The document types a session's workspaces loosely (`{ id }` and more); these are the fields it has. */
export interface Workspace {
  id: string;
  name: string;
  plan: string;
  role: Role;
}

/** A person's role in the current workspace: what the pages offer follows the API's rules (docs/dashboard.md, "Roles"). */
export type Role = 'owner' | 'member';

export type Me = Omit<Schemas['DashboardSession'], 'workspaces'> & { workspaces: Workspace[] };

export type Rendition = Schemas['Rendition'];

export type Video = Schemas['Video'];

/** A list answer (`VideoList`, `FolderList`, …): every one has this shape. */
export interface Page<T> {
  data: T[];
  has_more: boolean;
  next_cursor: string | null;
}
