import assert from 'node:assert/strict';
import { whepViewId } from '../../lib/analytics/whep';

describe('WHEP views: the view id of a session (lib/analytics/whep.ts)', () => {
  it('is a valid UUID that any API process derives alike from the stream and the session, and only from them', () => {
    const a = whepViewId('ls_0123456789abcdef0123456789abcdef', 'Abc_12-x');
    assert.match(a, /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.equal(whepViewId('ls_0123456789abcdef0123456789abcdef', 'Abc_12-x'), a);
    assert.notEqual(whepViewId('ls_0123456789abcdef0123456789abcdef', 'Abc_12-y'), a);
    assert.notEqual(whepViewId('ls_0123456789abcdef0123456789abcdee', 'Abc_12-x'), a);
  });
});
