import { z } from 'zod';

/**
 * Shapes every operation shares: the error body (bare and Form B), the Form B envelope, ids.
 * Components get their names from `.meta({ id })`, which zod-to-openapi turns into `$ref`s.
 */

export const ErrorDetail = z
  .object({
    code: z.string().meta({ description: 'Stable machine-readable code; see docs/api.md for the list.', example: 'invalid_parameters' }),
    message: z.string(),
    details: z.unknown().optional().meta({ description: 'Per-field problems for `invalid_parameters`, or extra context.' }),
  })
  .meta({ id: 'ErrorDetail' });

export const ErrorBody = z
  .object({ error: ErrorDetail, request_id: z.string().meta({ example: 'req_01J…' }) })
  .meta({ id: 'Error', description: 'Every failure outside Form B.' });

export const EnvelopeError = z
  .object({ success: z.literal(false), error: ErrorDetail, request_id: z.string() })
  .meta({ id: 'EnvelopeError', description: 'Form B failures: the error inside `{success: false}`.' });

/** Form B answers wrap their data: `{success: true, data}` (SPEC §1). */
export const envelope = <T extends z.ZodType>(data: T) => z.object({ success: z.literal(true), data });

export const isoDate = z.iso.datetime({ offset: true });
export const publicVideoId = z.string().meta({ description: '`vid_` + 32 hex digits', example: 'vid_0193a1b2c3d4e5f60718293a4b5c6d7e' });
export const videoIdParam = z.object({
  id: z.string().meta({ description: 'A video id: `vid_…` or the UUID', example: 'vid_0193a1b2c3d4e5f60718293a4b5c6d7e' }),
});

/** Statuses with the one stable code each failure carries; listed on each operation. */
export const STATUS_TEXT: Record<number, string> = {
  400: 'Bad JSON or parameters (`invalid_json`, `invalid_parameters`, …)',
  401: 'Missing or invalid API key (`unauthorized`)',
  403: 'Forbidden (`insufficient_scope`, `workspace_mismatch`, quota codes)',
  404: 'Not found, or another workspace\'s resource (`not_found`)',
  409: 'State conflict (`invalid_state`, `not_ready`, `idempotency_key_in_use`, …)',
  413: 'Body too large (`payload_too_large`)',
  422: 'Idempotency-Key reused with another request (`idempotency_key_reused`)',
  429: 'Rate limited (`rate_limited`, with Retry-After)',
  500: 'Internal error, without internals (`internal_error`)',
  503: 'A backing service is unavailable (`temporarily_unavailable`)',
};
