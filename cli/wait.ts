import { getVideo, type VideoRead } from './api';
import type { CliOptions } from './config';
import { progressBar } from './upload';

/** Polls the video until ready or failed, showing its live transcode progress. */
export async function waitForReady(o: CliOptions, id: string, signal: AbortSignal): Promise<VideoRead> {
  const bar = o.json ? null : progressBar(`${id} processing`);
  bar?.start(100, 0, { done: '0%', all: '100%', speed: '-' });
  try {
    for (;;) {
      if (signal.aborted) throw signal.reason;
      const v = await getVideo(o.apiUrl, o.apiKey, id);
      bar?.update(v.progress ?? 0, { done: `${v.progress ?? 0}%`, all: '100%', speed: '-' });
      // `ready` means playable (SPEC §5); higher rungs may still be encoding.
      if (v.status === 'ready' || v.status === 'failed') return v;
      await new Promise((r) => setTimeout(r, 1000));
    }
  } finally {
    bar?.stop();
  }
}
