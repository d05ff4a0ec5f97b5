import type { History } from '@temporalio/common/lib/proto-utils';

/** The patch ids a history's `patched()` markers carry (their ids are in a JSON payload, not plain text). */
export function patchIds(history: History): string[] {
  const ids: string[] = [];
  for (const e of history.events ?? []) {
    const payload = e.markerRecordedEventAttributes?.details?.['patch-data']?.payloads?.[0]?.data;
    if (e.markerRecordedEventAttributes?.markerName !== 'core_patch' || !payload) continue;
    ids.push((JSON.parse(Buffer.from(payload).toString('utf8')) as { id: string }).id);
  }
  return ids;
}

/** How many times a history scheduled an activity of this type. */
export function activitiesScheduled(history: History, type: string): number {
  return (history.events ?? []).filter((e) => e.activityTaskScheduledEventAttributes?.activityType?.name === type).length;
}
