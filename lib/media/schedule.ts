// Which class of work the ffmpeg runs of an async context are (SPEC §25, docs/fairness.md): set
// once by whoever knows (the transcode worker, from the activity's Temporal priority), read where
// a run is started (tools.ts), so no activity has to pass it down.
import { AsyncLocalStorage } from 'node:async_hooks';

/** `foreground`: someone waits for it (the way to `ready`, a request); `background`: behind `ready`. */
export type MediaClass = 'foreground' | 'background';

const current = new AsyncLocalStorage<MediaClass>();

/** Runs `fn` with every ffmpeg it starts (however deep, however late) of class `c`. */
export function withMediaClass<T>(c: MediaClass, fn: () => T): T {
  return current.run(c, fn);
}

/** The class of the current async context; undefined outside any (the run's own flags decide). */
export function mediaClass(): MediaClass | undefined {
  return current.getStore();
}
