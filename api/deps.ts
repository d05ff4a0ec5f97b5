import type { Client } from '@temporalio/client';
import type { Config } from '../lib/config';
import type { Db } from '../lib/db';
import type { Logger } from '../lib/logger';
import type { Storage } from '../lib/storage';

/** What every route needs; built once by the server (or a test) and passed down explicitly. */
export interface Deps {
  config: Config;
  db: Db;
  storage: Storage;
  temporal: Client;
  log: Logger;
}

export interface AuthState {
  keyId: string;
  workspaceId: string;
  access: 'read' | 'full';
  plan: string;
}

declare module 'koa' {
  interface DefaultState {
    requestId: string;
    envelope?: boolean;
    body?: unknown;
    auth?: AuthState;
    log?: Logger;
  }
}
