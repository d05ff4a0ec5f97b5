// Every call goes to the public API (SPEC §15) with the session cookie; state changes carry the
// session's CSRF token. Only /dashboard/session is the dashboard's own.

export class ApiError extends Error {
  constructor(readonly status: number, readonly code: string, message: string) {
    super(message);
  }
}

let csrf = '';
export const setCsrf = (token: string) => {
  csrf = token;
};

export async function api<T = any>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method !== 'GET') headers['X-CSRF-Token'] = csrf;
  const res = await fetch(path.startsWith('/dashboard/') ? path : `/v1${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
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

export interface Workspace {
  id: string;
  name: string;
  plan: string;
  role: 'owner' | 'member';
}

export interface Me {
  person: { id: string; email: string };
  workspace_id: string | null;
  workspaces: Workspace[];
  csrf_token: string;
}

export interface Rendition {
  name: string;
  width: number;
  height: number;
  bitrate: number;
  status: string;
  progress: number;
}

export interface Video {
  id: string;
  title: string;
  description: string | null;
  visibility: 'public' | 'unlisted' | 'private';
  status: 'pending_upload' | 'processing' | 'ready' | 'failed';
  progress: number;
  duration_seconds: number | null;
  width: number | null;
  height: number | null;
  size_bytes: number | null;
  filename: string;
  hls_url: string | null;
  thumbnail_url: string | null;
  embed_url: string | null;
  /** SPEC §19 (absent from servers before it). */
  audio_tracks?: Array<{ language: string; name: string; default: boolean; channels: number; status: string }>;
  loudness_lufs?: number | null;
  renditions: Rendition[];
  error_message?: string | null;
  folder_id: string | null;
  tags: string[];
  created_at: string;
  captions?: Array<{ id?: string; language?: string; label?: string; name?: string; status?: string; url?: string }>;
  static_renditions?: Array<{ name?: string; status?: string; url?: string; size_bytes?: number }>;
}

export interface Page<T> {
  data: T[];
  has_more?: boolean;
  next_cursor?: string | null;
}
