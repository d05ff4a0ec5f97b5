// SPEC §25 (docs/fairness.md "Bounds"): a video's on-request jobs — alignments, added audio
// tracks, clips cut from it — how many are in flight, and stopping them when the video goes.
import { type Client, WorkflowNotFoundError } from '@temporalio/client';
import type { Knex } from 'knex';
import type { JobBounds } from '../config/jobs';
import type { Db } from '../db';
import { audioTrackWorkflowId } from '../../workflows/audio/defs';
import { alignCaptionsWorkflowId, outputsWorkflowId } from '../../workflows/jobs/defs';

type Queryable = Db | Knex.Transaction;

/**
 * One row per job in flight of the workspace, named by the video it is for (a clip by its
 * source): an aligning caption track, an added audio track not yet ready or failed, a clip still
 * being made. Every language tag of a video (en, en-US, fr…) is a job of that one video.
 */
const IN_FLIGHT = `
  select c.video_id from captions c join videos v on v.id = c.video_id
   where v.workspace_id = :ws and v.deleted_at is null and c.status = 'aligning'
  union all
  select a.video_id from audio_tracks a join videos v on v.id = a.video_id
   where v.workspace_id = :ws and v.deleted_at is null and a.origin = 'added' and a.status in ('pending_upload', 'processing')
  union all
  select v.source_video_id from videos v
   where v.workspace_id = :ws and v.deleted_at is null and v.source_video_id is not null and v.status in ('pending_upload', 'processing')`;

export interface JobsInFlight {
  video: number;
  workspace: number;
}

export async function jobsInFlight(q: Queryable, workspaceId: string, videoId: string): Promise<JobsInFlight> {
  const { rows } = (await q.raw(`select count(*)::int as workspace, count(*) filter (where video_id = :video)::int as video from (${IN_FLIGHT}) j`, { ws: workspaceId, video: videoId })) as {
    rows: JobsInFlight[];
  };
  return rows[0];
}

/** Which bound a new job would pass, if any. */
export function boundPassed(n: JobsInFlight, bounds: JobBounds): 'video' | 'workspace' | null {
  if (n.video >= bounds.perVideo) return 'video';
  if (n.workspace >= bounds.perWorkspace) return 'workspace';
  return null;
}

/**
 * Takes the workspace's job admission lock for the rest of the transaction: two requests at once
 * never both see room for one more job.
 */
export async function lockJobAdmission(tx: Knex.Transaction, workspaceId: string): Promise<void> {
  await tx.raw('select pg_advisory_xact_lock(hashtext(?))', [`vidhost-jobs:${workspaceId}`]);
}

/** The workflows a video's jobs may still run in: its outputs, its alignments, its added audio tracks. */
export async function videoJobWorkflowIds(db: Db, videoId: string): Promise<string[]> {
  const [captions, tracks] = await Promise.all([
    db('captions').where({ video_id: videoId, origin: 'aligned' }).select('language') as Promise<Array<{ language: string }>>,
    db('audio_tracks').where({ video_id: videoId, origin: 'added' }).select('rendition') as Promise<Array<{ rendition: string }>>,
  ]);
  return [outputsWorkflowId(videoId), ...captions.map((c) => alignCaptionsWorkflowId(videoId, c.language)), ...tracks.map((t) => audioTrackWorkflowId(videoId, t.rendition))];
}

/**
 * Cancels every job of a deleted video: queued ones leave their queue at once, running ones stop
 * their ffmpeg or aligner. With `waitMs`, waits (up to it) until each has closed — their
 * activities settle only once they have stopped writing files — so the files can go after.
 */
export async function cancelVideoJobs(temporal: Client, db: Db, videoId: string, opts: { waitMs?: number } = {}): Promise<void> {
  const ids = await videoJobWorkflowIds(db, videoId);
  await Promise.all(
    ids.map(async (id) => {
      const handle = temporal.workflow.getHandle(id);
      try {
        const { status } = await handle.describe();
        if (status.name !== 'RUNNING') return;
        await handle.cancel();
        if (opts.waitMs) await Promise.race([handle.result().catch(() => undefined), new Promise((r) => setTimeout(r, opts.waitMs).unref())]);
      } catch (err) {
        if (!(err instanceof WorkflowNotFoundError)) throw err;
      }
    }),
  );
}
