import type { ActivityDeps } from '../deps';
import { broadcastActivities } from './broadcast';
import { liveEventActivities } from './events';
import { liveSessionActivities } from './session';

/** The live pillar's activities (SPEC §17): bookkeeping on the orchestration queue, the session on the live queue. */
export function liveActivities(deps: ActivityDeps) {
  return { ...broadcastActivities(deps), ...liveEventActivities(deps), ...liveSessionActivities(deps) };
}
