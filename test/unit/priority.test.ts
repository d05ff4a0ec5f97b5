import assert from 'node:assert/strict';
import { PLANS } from '../../lib/plans';
import { fairness, inheritedFairness, isForeground, PLAN_WEIGHTS, Priority, priority } from '../../workflows/priority';

describe('priority and fairness (SPEC §25)', () => {
  it('orders the levels: the path to ready first, measured quality last, inside the server default of 5', () => {
    const levels = [Priority.critical, Priority.onRequest, Priority.normal, Priority.bulk, Priority.background];
    assert.deepEqual(levels, [1, 2, 3, 4, 5]);
  });

  it('weighs every plan, a higher plan more', () => {
    assert.deepEqual(Object.keys(PLAN_WEIGHTS).sort(), [...PLANS].sort());
    const weights = PLANS.map((p) => PLAN_WEIGHTS[p]);
    for (let i = 1; i < weights.length; i++) assert.ok(weights[i] > weights[i - 1], `${PLANS[i]} outweighs ${PLANS[i - 1]}`);
  });

  it('keys fairness by workspace, an unknown plan weighing as Free', () => {
    assert.deepEqual(fairness('ws_a', 'pro'), { fairnessKey: 'ws_a', fairnessWeight: PLAN_WEIGHTS.pro });
    assert.deepEqual(fairness('ws_a', 'enterprise'), { fairnessKey: 'ws_a', fairnessWeight: PLAN_WEIGHTS.free });
    assert.deepEqual(fairness('ws_a', null), { fairnessKey: 'ws_a', fairnessWeight: PLAN_WEIGHTS.free });
  });

  it('builds a Temporal priority, leaving unknown fields to inherit', () => {
    assert.deepEqual(priority(Priority.bulk, fairness('ws_b', 'business')), { priorityKey: 4, fairnessKey: 'ws_b', fairnessWeight: 8 });
    assert.deepEqual(priority(Priority.critical), { priorityKey: 1 });
    assert.deepEqual(priority(Priority.critical, { fairnessKey: 'ws_c' }), { priorityKey: 1, fairnessKey: 'ws_c' });
  });

  it("takes a workflow's fairness from its start, else its workspace at Free's weight", () => {
    assert.deepEqual(inheritedFairness({ priorityKey: 1, fairnessKey: 'ws_a', fairnessWeight: 4 }, 'ws_x'), { fairnessKey: 'ws_a', fairnessWeight: 4 });
    assert.deepEqual(inheritedFairness(undefined, 'ws_x'), { fairnessKey: 'ws_x', fairnessWeight: 1 });
    assert.deepEqual(inheritedFairness({ priorityKey: 3 }, 'ws_x'), { fairnessKey: 'ws_x', fairnessWeight: 1 });
  });

  it('runs the critical and on-request levels in the foreground, the rest niced', () => {
    assert.equal(isForeground(Priority.critical), true);
    assert.equal(isForeground(Priority.onRequest), true);
    assert.equal(isForeground(Priority.bulk), false);
    assert.equal(isForeground(Priority.background), false);
    assert.equal(isForeground(undefined), false);
  });
});
