import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor } from '@temporalio/client';
import type { Config } from './config';

/**
 * A client whose connection is made on first use, so the API boots while Temporal is still starting.
 * The SDK's default retries an unreachable server for ~20 s; a request should instead be told within
 * ~2 s (5 attempts) that the service is unavailable and to come back (503 + Retry-After).
 */
export function createTemporalClient(config: Config): Client {
  const connection = Connection.lazy({
    address: config.temporal.address,
    interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: 5 }))],
  });
  return new Client({ connection, namespace: config.temporal.namespace });
}
