import { WorkflowUpdateRPCTimeoutOrCancelledError, isGrpcServiceError } from '@temporalio/client';

/** Which dependency an error says is out of reach, if any; such errors are 503s, not 500s. */
export type Outage = 'database' | 'temporal' | 'storage';

// Node socket errors: the peer is gone or not there yet.
const socketCodes = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'ECONNABORTED']);
// Postgres SQLSTATEs for a server that is shutting down or not accepting connections yet:
// class 08 (connection exception), 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now.
const pgShutdownCodes = new Set(['57P01', '57P02', '57P03']);
// Messages of pg and knex for a connection lost or never made (they carry no code).
const pgMessages = [/^Connection terminated/i, /connection error and is not queryable/i, /^Knex: Timeout acquiring a connection/i, /Client was closed and is not queryable/i];
// gRPC codes that mean Temporal did not answer (as opposed to answering "no").
const grpcOutageCodes = new Set<number>([14 /* UNAVAILABLE */, 4 /* DEADLINE_EXCEEDED */, 1 /* CANCELLED */]);

/** Every error in the chain: `cause`s and the members of AggregateErrors (a dial to ::1 and 127.0.0.1). */
function* chain(err: unknown, depth = 0): Generator<unknown> {
  if (!err || depth > 8) return;
  yield err;
  if (err instanceof AggregateError) for (const e of err.errors) yield* chain(e, depth + 1);
  if (typeof err === 'object' && 'cause' in err) yield* chain((err as { cause?: unknown }).cause, depth + 1);
}

function isSocketError(e: unknown): boolean {
  const code = (e as { code?: unknown })?.code;
  return typeof code === 'string' && socketCodes.has(code);
}

function isPgOutage(e: unknown): boolean {
  const err = e as { code?: unknown; name?: unknown; message?: unknown };
  if (err?.name === 'KnexTimeoutError') return true;
  if (typeof err?.code === 'string' && (pgShutdownCodes.has(err.code) || /^08[0-9A-Z]{3}$/.test(err.code))) return true;
  return typeof err?.message === 'string' && pgMessages.some((re) => re.test(err.message as string));
}

function isTemporalOutage(e: unknown): boolean {
  if (e instanceof WorkflowUpdateRPCTimeoutOrCancelledError) return true;
  if (isGrpcServiceError(e)) return grpcOutageCodes.has(e.code);
  // The lazy connection's first dial: "Failed to connect before the deadline".
  return e instanceof Error && e.name === 'TransportError';
}

/**
 * Classifies an error by the dependency it says is out of reach. A refused socket says nothing of
 * its peer: the S3 SDK's errors carry `$metadata`, the others are Postgres's (Temporal's gRPC
 * errors are recognised before).
 */
export function outageOf(err: unknown): Outage | undefined {
  const all = [...chain(err)];
  if (all.some(isPgOutage)) return 'database';
  if (all.some(isTemporalOutage)) return 'temporal';
  const fromS3 = all.some((e) => typeof e === 'object' && e !== null && '$metadata' in e);
  // The S3 client's own connect and idle bounds (lib/storage/s3.ts): a server that says nothing.
  if (fromS3 && all.some((e) => e instanceof Error && e.name === 'TimeoutError')) return 'storage';
  if (all.some(isSocketError)) return fromS3 ? 'storage' : 'database';
  return undefined;
}
