import { Client, Connection } from '@temporalio/client';
import type { Config } from './config';

/** A client whose connection is made on first use, so the API boots while Temporal is still starting. */
export function createTemporalClient(config: Config): Client {
  const connection = Connection.lazy({ address: config.temporal.address });
  return new Client({ connection, namespace: config.temporal.namespace });
}
