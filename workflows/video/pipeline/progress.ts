// A ladder group's progress from its chunks' (issue 47): each chunk weighs its length, a running
// chunk counts what it has signalled (ladderProgressSignal), a finished one 100. Before, only a
// source encoded in one chunk signalled, so a long source's renditions read 0 % until chunks
// ended. Pure: workflow code.

export class GroupProgress {
  private readonly parts: number[];
  private readonly total: number;

  /** `weights`: each chunk's length in seconds (any positive measure). */
  constructor(private readonly weights: readonly number[]) {
    this.parts = weights.map(() => 0);
    this.total = weights.reduce((s, w) => s + Math.max(0, w), 0);
  }

  /** A running chunk's own progress, 0–99 (never goes back). */
  set(chunk: number, pct: number): void {
    if (chunk < 0 || chunk >= this.parts.length || !Number.isFinite(pct)) return;
    this.parts[chunk] = Math.max(this.parts[chunk], Math.min(99, Math.max(0, pct)));
  }

  done(chunk: number): void {
    if (chunk >= 0 && chunk < this.parts.length) this.parts[chunk] = 100;
  }

  /** The group's progress, 0–99 until the group is published. */
  value(): number {
    if (this.total <= 0) return Math.floor((this.parts.filter((p) => p === 100).length / Math.max(1, this.parts.length)) * 99);
    const sum = this.parts.reduce((s, p, i) => s + p * Math.max(0, this.weights[i]), 0);
    return Math.min(99, Math.floor(sum / this.total));
  }
}

/** The key a group's progress is found by, from the rung names its signals carry. */
export const groupKey = (rungs: readonly string[]): string => rungs.join(',');
