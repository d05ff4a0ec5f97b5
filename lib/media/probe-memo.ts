import { stat } from 'node:fs/promises';
import { isRemoteInput } from './input';

/**
 * What ffprobe already said of a local file (its JSON), for the next job on the same bytes. Every job on a
 * video (thumbnail, keyframe split, loudness, ladder, audio, storyboard, MP4) opens the source
 * again, and each open was a sandboxed ffprobe: 7–8 per video, each about 90 ms of CPU of which
 * most is loading ffmpeg's 215 shared libraries. A file is the same bytes while its device, inode,
 * size, mtime and ctime are (storage writes by rename, so new bytes are a new inode); remote
 * inputs (presigned S3 URLs) are never remembered. Failures are not remembered either. The JSON is
 * kept, not its reading, so probes with other options (an audio-only source allowed or not) share it.
 */
export class ProbeMemo {
  private readonly entries = new Map<string, string>();

  constructor(private readonly capacity = 256) {}

  /** ffprobe's output for `input` (`variant` tells apart runs with different arguments). */
  async get(input: string, variant: string, probe: () => Promise<string>): Promise<string> {
    const key = isRemoteInput(input) ? undefined : await identity(input, variant);
    if (key === undefined) return probe();
    const hit = this.entries.get(key);
    if (hit) {
      // Most recently used last: the oldest goes first when full.
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit;
    }
    const info = await probe();
    // Stat again: bytes replaced while ffprobe read them are not remembered.
    if ((await identity(input, variant)) === key) {
      this.entries.set(key, info);
      if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
    }
    return info;
  }
}

async function identity(input: string, variant: string): Promise<string | undefined> {
  try {
    const st = await stat(input, { bigint: true });
    if (!st.isFile()) return undefined;
    return [input, st.dev, st.ino, st.size, st.mtimeNs, st.ctimeNs, variant].join('\0');
  } catch {
    return undefined;
  }
}
