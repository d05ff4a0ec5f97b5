import type { Client } from '@temporalio/client';
import type { Config } from '../lib/config';
import type { Db } from '../lib/db';
import type { Logger } from '../lib/logger';
import type { Storage } from '../lib/storage';

export interface ActivityDeps {
  config: Config;
  db: Db;
  storage: Storage;
  temporal: Client;
  log: Logger;
}
