import type { Logger } from '../lib/logger';
import type { BaseDeps } from './base';
import type { Hot } from './hot';

export type { BaseDeps };

/** What every route needs, passed down explicitly: the base plus the app's caches and limiters. */
export interface Deps extends BaseDeps {
  hot: Hot;
}

export interface AuthState {
  keyId: string;
  workspaceId: string;
  access: 'read' | 'full';
  plan: string;
  /** The person acting: a session's, or the one who made the key (null for CLI-made keys). */
  personId?: string | null;
  /** Set for a session: the person's role in the workspace (docs/dashboard.md, "Roles"). Keys have none. */
  role?: 'owner' | 'member';
}

declare module 'koa' {
  interface DefaultState {
    requestId: string;
    envelope?: boolean;
    body?: unknown;
    /** A text body of a caption type (see middleware/body.ts). */
    text?: string;
    auth?: AuthState;
    log?: Logger;
    /** Adds bindings (key, workspace, person) to this request's log lines (api/middleware/request.ts). */
    logAs?: (bindings: Record<string, string>) => void;
  }
}
