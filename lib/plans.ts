// The plans of SPEC §10 and their limits, in one place (the workspaces table checks the same names).
export const PLANS = ['free', 'starter', 'pro', 'business'] as const;
export type Plan = (typeof PLANS)[number];

const GB = 1024 ** 3;

/** `liveBroadcasts`: how many of a workspace's live streams may broadcast at once (SPEC §17). */
export const PLAN_LIMITS: Record<Plan, { storageBytes: number; monthlyBandwidthBytes: number | null; liveBroadcasts: number }> = {
  free: { storageBytes: 5 * GB, monthlyBandwidthBytes: 20 * GB, liveBroadcasts: 1 },
  starter: { storageBytes: 100 * GB, monthlyBandwidthBytes: null, liveBroadcasts: 3 },
  pro: { storageBytes: 500 * GB, monthlyBandwidthBytes: null, liveBroadcasts: 10 },
  business: { storageBytes: 2048 * GB, monthlyBandwidthBytes: null, liveBroadcasts: 50 },
};

/** A workspace's limits; an unknown plan name gets Free's. */
export function limitsOf(plan: string): (typeof PLAN_LIMITS)[Plan] {
  return PLAN_LIMITS[plan as Plan] ?? PLAN_LIMITS.free;
}
