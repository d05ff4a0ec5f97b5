import type { ActivityDeps } from './deps';

// URL import (SPEC §4) is built in issue 6; until then the activity refuses plainly.
export function importActivities(_deps: ActivityDeps) {
  return {
    async importFromUrl(_p: { videoId: string; workspaceId: string; storageKey: string; url: string }): Promise<{ size: number }> {
      throw new Error('URL import is not available yet');
    },
  };
}
