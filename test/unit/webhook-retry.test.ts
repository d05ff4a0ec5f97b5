import assert from 'node:assert/strict';
import { MAX_RETRY_AFTER_MS, parseRetryAfter, retryDelay } from '../../lib/webhooks/retry';

describe('webhooks/retry', () => {
  const now = Date.parse('2026-11-21T12:00:00Z');

  it('reads Retry-After as seconds or as an HTTP date', () => {
    assert.equal(parseRetryAfter('120', now), 120_000);
    assert.equal(parseRetryAfter(' 0 ', now), 0);
    assert.equal(parseRetryAfter('Sat, 21 Nov 2026 12:05:00 GMT', now), 300_000);
    assert.equal(parseRetryAfter('Sat, 21 Nov 2026 11:00:00 GMT', now), 0);
  });

  it('ignores a missing or unreadable Retry-After', () => {
    assert.equal(parseRetryAfter(undefined, now), null);
    assert.equal(parseRetryAfter('', now), null);
    assert.equal(parseRetryAfter('soon', now), null);
    assert.equal(parseRetryAfter('-5', now), null);
  });

  it('waits the longer of the schedule and Retry-After, at most 24 h', () => {
    assert.equal(retryDelay(5_000, null), 5_000);
    assert.equal(retryDelay(5_000, 1_000), 5_000);
    assert.equal(retryDelay(5_000, 60_000), 60_000);
    assert.equal(retryDelay(5_000, 7 * 24 * 3_600_000), MAX_RETRY_AFTER_MS);
    assert.equal(MAX_RETRY_AFTER_MS, 86_400_000);
  });
});
