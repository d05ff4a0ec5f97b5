import type { Client } from '@temporalio/client';
import type { Config } from '../lib/config';
import type { Db } from '../lib/db';
import type { Logger } from '../lib/logger';
import type { Storage } from '../lib/storage';

/**
 * What the server (or a test) builds once and hands to `createApp`; below api/deps.ts and
 * api/hot.ts (which builds the caches from it), so neither imports the other.
 */
export interface BaseDeps {
  config: Config;
  db: Db;
  storage: Storage;
  temporal: Client;
  log: Logger;
}
