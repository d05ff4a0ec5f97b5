import assert from 'node:assert/strict';
import { TIMED_OUT, within } from '../../lib/timeout';

describe('within', () => {
  it('gives the value when the promise settles in time', async () => {
    assert.equal(await within(Promise.resolve(7), 50), 7);
  });
  it('gives TIMED_OUT when it does not', async () => {
    assert.equal(await within(new Promise(() => undefined), 20), TIMED_OUT);
  });
  it('passes a rejection through', async () => {
    await assert.rejects(within(Promise.reject(new Error('boom')), 50), /boom/);
  });
});
