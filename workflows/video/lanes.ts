// SPEC §25 (docs/fairness.md): where each of a video's media activities queues, and at which
// priority. One table, so the pipelines keep calling `io.<activity>` and this decides.
import { type ActivityOptions, proxyActivities } from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { type Fairness, Priority, priority, type PriorityLevel } from '../priority';

type Proxy = ReturnType<typeof proxyActivities<Activities>>;

/**
 * `critical`: the transcode workers' critical lane (TEMPORAL_CRITICAL_QUEUE), a few slots of their
 * own that a backlog of encodes never fills, for short steps on the way to `ready`. `media`: the
 * transcode queue, where encodes wait their turn by priority and then by workspace.
 * `phase`: critical until the video is ready (the step is on the way to it), bulk after.
 */
export interface Placement {
  lane: 'critical' | 'media';
  level: PriorityLevel | 'phase';
}

export const PLACEMENTS: Partial<Record<keyof Activities, Placement>> = {
  // Short steps to `ready` (a probe, a keyframe index, one frame, playlists): the critical lane.
  planTranscode: { lane: 'critical', level: Priority.critical },
  makeThumbnail: { lane: 'critical', level: Priority.critical },
  prepareJit: { lane: 'critical', level: Priority.critical },
  prepareOnRequest: { lane: 'critical', level: Priority.critical },
  publishMaster: { lane: 'critical', level: Priority.critical },
  stitchRenditions: { lane: 'critical', level: Priority.critical },
  finishAligned: { lane: 'critical', level: Priority.critical },
  publishDash: { lane: 'critical', level: Priority.critical },
  makeAudioPoster: { lane: 'critical', level: Priority.critical },
  publishAudioOnlyMaster: { lane: 'critical', level: Priority.critical },
  // On the way to `ready` but as long as the source: first in the transcode queue, never on the lane.
  importFromUrl: { lane: 'media', level: Priority.critical },
  cutClip: { lane: 'media', level: Priority.critical },
  remuxPassthrough: { lane: 'media', level: Priority.critical },
  encodeAudioLadder: { lane: 'media', level: Priority.critical },
  // The ladder and the audio group: before `ready` only when `ready` waits for them.
  encodeChunk: { lane: 'media', level: 'phase' },
  encodeAlignedChunk: { lane: 'media', level: 'phase' },
  encodeAudioTracks: { lane: 'media', level: 'phase' },
  // Behind `ready`.
  materializeJit: { lane: 'media', level: Priority.bulk },
  encodeCmafRendition: { lane: 'media', level: Priority.bulk },
  measureQuality: { lane: 'media', level: Priority.background },
  // A deletion's file removal.
  deleteVideoFiles: { lane: 'media', level: Priority.onRequest },
  sweepUploads: { lane: 'media', level: Priority.onRequest },
};

/** Anything not in the table (the frozen pipeline's activities): the transcode queue, by phase. */
const OTHER: Placement = { lane: 'media', level: 'phase' };

export function placementOf(activity: string, ready: boolean, criticalQueue: string | undefined, transcodeQueue: string): { taskQueue: string; priorityKey: PriorityLevel } {
  const p = PLACEMENTS[activity as keyof Activities] ?? OTHER;
  const priorityKey = p.level === 'phase' ? (ready ? Priority.bulk : Priority.critical) : p.level;
  return { taskQueue: p.lane === 'critical' && criticalQueue ? criticalQueue : transcodeQueue, priorityKey };
}

/**
 * A proxy like `proxyActivities(options)` whose every call is placed by the table at the moment
 * it is made (`ready()` is read then). Runs started without a critical queue (before fair share)
 * keep every activity on the transcode queue; only the priorities are new to them.
 */
export function placedActivities(
  options: Omit<ActivityOptions, 'taskQueue' | 'priority'>,
  p: { transcodeQueue: string; criticalQueue?: string; fair: Fairness; ready: () => boolean },
): Proxy {
  const proxies = new Map<string, Proxy>();
  const proxyFor = (taskQueue: string, level: PriorityLevel): Proxy => {
    const key = `${taskQueue}\u0000${level}`;
    let proxy = proxies.get(key);
    if (!proxy) {
      proxy = proxyActivities<Activities>({ ...options, taskQueue, priority: priority(level, p.fair) });
      proxies.set(key, proxy);
    }
    return proxy;
  };
  return new Proxy({} as Proxy, {
    get(_, name) {
      if (typeof name !== 'string') return undefined;
      const { taskQueue, priorityKey } = placementOf(name, p.ready(), p.criticalQueue, p.transcodeQueue);
      return proxyFor(taskQueue, priorityKey)[name as keyof Activities];
    },
  });
}
