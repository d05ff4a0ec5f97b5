import { analyticsActivities } from './analytics/rollup';
import { audioActivities } from './audio';
import type { ActivityDeps } from './deps';
import { eventActivities } from './events';
import { fileActivities } from './upload/files';
import { importActivities } from './upload/import';
import { ladderActivities } from './transcode/ladder';
import { liveActivities } from './live';
import { mediaActivities } from './transcode/media';
import { outputActivities } from './outputs';
import { qualityActivities } from './transcode/quality';
import { codecActivities } from './transcode/codecs';
import { jitActivities } from './transcode/jit';
import { onRequestActivities } from './transcode/onRequest';
import { stateActivities } from './state';
import { webhookActivities } from './webhooks';

export type { ActivityDeps } from './deps';

/** Every activity, bound to its dependencies. Workflows import only the type. */
export function createActivities(deps: ActivityDeps) {
  return {
    ...stateActivities(deps),
    ...eventActivities(deps),
    ...fileActivities(deps),
    ...mediaActivities(deps),
    ...importActivities(deps),
    ...ladderActivities(deps),
    ...webhookActivities(deps),
    ...outputActivities(deps),
    ...analyticsActivities(deps),
    ...qualityActivities(deps),
    ...codecActivities(deps),
    ...jitActivities(deps),
    ...onRequestActivities(deps),
    ...audioActivities(deps),
    ...liveActivities(deps),
  };
}

export type Activities = ReturnType<typeof createActivities>;
