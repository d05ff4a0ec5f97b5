import fs from 'node:fs';
import { Client, Connection, defaultGrpcRetryOptions, makeGrpcRetryInterceptor, type ConnectionOptions } from '@temporalio/client';
import type { Config } from './config';

/**
 * Where and how to reach Temporal, shared by the API's client and the workers' connections, so a
 * production server (mTLS, or Temporal Cloud with an API key) is configured in one place.
 * Certificates are read once, at connection time, from files (a Kubernetes Secret mounted as a volume).
 */
export function temporalConnectionOptions(config: Config): Pick<ConnectionOptions, 'address' | 'tls'> & { apiKey?: string } {
  const { address, tls, apiKey } = config.temporal;
  if (!tls) return { address };
  const read = (p?: string) => (p ? fs.readFileSync(p) : undefined);
  const cert = read(tls.certPath);
  const key = read(tls.keyPath);
  return {
    address,
    tls: {
      ...(cert && key ? { clientCertPair: { crt: cert, key } } : {}),
      ...(tls.caPath ? { serverRootCACertificate: read(tls.caPath) } : {}),
      ...(tls.serverName ? { serverNameOverride: tls.serverName } : {}),
    },
    ...(apiKey ? { apiKey } : {}),
  };
}

/**
 * A client whose connection is made on first use, so the API boots while Temporal is still starting.
 * The SDK's default retries an unreachable server for ~20 s; a request should instead be told within
 * ~2 s (5 attempts) that the service is unavailable and to come back (503 + Retry-After).
 */
export function createTemporalClient(config: Config): Client {
  const connection = Connection.lazy({
    ...temporalConnectionOptions(config),
    interceptors: [makeGrpcRetryInterceptor(defaultGrpcRetryOptions({ maxAttempts: 5 }))],
  });
  return new Client({ connection, namespace: config.temporal.namespace });
}
