import {
  ActivityCancellationType,
  allHandlersFinished,
  CancellationScope,
  condition,
  continueAsNew,
  patched,
  proxyActivities,
  setHandler,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { Activities } from '../../activities';
import { inheritedFairness, Priority, priority } from '../priority';
import {
  completeSignal,
  type ConnectedSignal,
  connectedSignal,
  deleteLiveSignal,
  type DisconnectedSignal,
  disconnectedSignal,
  type LiveState,
  liveStateQuery,
  type LiveStatus,
  type LiveWorkflowInput,
  playableSignal,
  type SessionResult,
} from './defs';

/**
 * One workflow per live stream (SPEC §17), one run per broadcast:
 *   idle → (encoder connects) → active (media playable) → disconnected (encoder gone, waiting up
 *   to reconnect_window) → active again on the same recording, or → idle (broadcast over: the
 *   recording turns ready) → continue-as-new.
 * The media server signals connect/disconnect; the session activity (on the live task queue)
 * owns one ffmpeg per connection and signals when the first segments are playable.
 */
export async function liveStreamWorkflow(input: LiveWorkflowInput): Promise<void> {
  const { liveStreamId, workspaceId } = input;
  // SPEC §25: viewers are watching; the session has a queue of its own, its bookkeeping goes first.
  const critical = priority(Priority.critical, inheritedFairness(workflowInfo().priority, workspaceId));
  const acts = proxyActivities<Activities>({ startToCloseTimeout: '20 seconds', retry: { initialInterval: '500ms', maximumInterval: '10 seconds' }, priority: critical });
  // The session holds a heartbeat a few seconds long: a worker SIGKILLed mid-broadcast is noticed
  // within it and the session starts again on another live worker (a discontinuity, not a failure).
  const session = proxyActivities<Activities>({
    taskQueue: input.liveQueue,
    startToCloseTimeout: '13 hours',
    heartbeatTimeout: input.tuning?.heartbeatTimeoutMs ?? 4000,
    retry: { initialInterval: '200ms', backoffCoefficient: 1.5, maximumInterval: '2 seconds', maximumAttempts: 30 },
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    priority: critical,
  });
  const finishing = proxyActivities<Activities>({ startToCloseTimeout: '5 minutes', retry: { initialInterval: '500ms', maximumInterval: '10 seconds' }, priority: critical });

  const state: LiveState = { status: 'idle', videoId: null, sessionId: null, broadcasts: input.broadcasts ?? 0 };
  let pending: ConnectedSignal | undefined = input.pending;
  let gone: DisconnectedSignal | undefined;
  /** The connection whose session just ended, and its disconnect if that arrives only afterwards. */
  let endedSessionId: string | null = null;
  let lateGone: DisconnectedSignal | undefined;
  let playable = false;
  let completed: string | undefined;
  let deleted = false;

  setHandler(liveStateQuery, () => state);
  setHandler(connectedSignal, (s) => {
    pending = s;
  });
  setHandler(disconnectedSignal, (s) => {
    if (s.sessionId === state.sessionId) gone = s;
    else if (endedSessionId !== null && s.sessionId === endedSessionId) lateGone = s;
    if (pending?.sessionId === s.sessionId) pending = undefined;
  });
  setHandler(playableSignal, ({ videoId }) => {
    if (videoId === state.videoId) playable = true;
  });
  setHandler(completeSignal, ({ reason }) => {
    if (state.status !== 'idle') completed = reason;
    pending = undefined;
  });
  setHandler(deleteLiveSignal, () => {
    deleted = true;
  });

  const emit = (type: string, extra: { videoId?: string | null; reason?: string } = {}) =>
    acts.emitLiveEvent({ eventId: `evt_${uuid4().replace(/-/g, '')}`, liveStreamId, workspaceId, type, videoId: extra.videoId ?? state.videoId, reason: extra.reason });
  const setStatus = async (status: LiveStatus, reason?: string) => {
    await acts.recordLiveStatus({ liveStreamId, status, videoId: state.videoId, reason });
    state.status = status;
  };

  // idle: wait for an encoder.
  await condition(() => pending !== undefined || deleted);
  if (deleted) return;

  // A broadcast: one recording, one or more connections.
  const { videoId, reconnectWindowSeconds } = await acts.startBroadcast({ liveStreamId, workspaceId });
  state.videoId = videoId;
  await emit('live_stream.connected');
  let first = true;
  let restarts = 0;
  let endReason = 'encoder disconnected';
  for (;;) {
    const conn = pending!;
    pending = undefined;
    gone = undefined;
    lateGone = undefined;
    endedSessionId = null;
    playable = false;
    state.sessionId = conn.sessionId;
    let result = undefined as SessionResult | undefined;
    let failed = false as boolean;
    const scope = new CancellationScope();
    const running = scope.run(() => session.runLiveSession({ liveStreamId, workspaceId, videoId, discontinuity: !first })).then(
      (r) => {
        result = r;
      },
      () => {
        failed = true;
      },
    );
    first = false;
    for (;;) {
      await condition(() => (playable && state.status !== 'active') || result !== undefined || failed || gone !== undefined || completed !== undefined || deleted);
      if (result !== undefined || failed) break;
      if (gone || completed || deleted) {
        // Stopped gracefully: ffmpeg flushes its last segment before the session returns.
        scope.cancel();
        await running;
        break;
      }
      await setStatus('active');
      await emit('live_stream.active');
    }
    endedSessionId = state.sessionId;
    state.sessionId = null;
    const ended = result;
    if (playable) restarts = 0;
    // The session ended but the media server has not said the encoder left: the session failed
    // (a probe timed out on a busy worker), not the feed. Read the same connection again.
    if (ended?.ended === 'feed_ended' && !gone && !completed && !deleted && restarts < 5 && patched('live-session-restart')) {
      // The media server's word that the encoder left may come just after the session ended
      // (a restarted media server reports its old encoders as it starts): it counts too.
      const late = patched('live-late-disconnect');
      const left = await condition(() => gone !== undefined || (late && lateGone !== undefined) || completed !== undefined || deleted || pending !== undefined, 3000);
      if (late && !gone && lateGone) gone = lateGone;
      if (!left) {
        restarts++;
        pending = conn;
        continue;
      }
    }
    const fromSession = ended?.ended === 'input_out_of_bounds' ? ended.reason : undefined;
    endReason = completed ?? (deleted ? 'live stream deleted' : undefined) ?? fromSession ?? (gone as DisconnectedSignal | undefined)?.reason ?? (failed ? 'ingest failed' : 'encoder disconnected');
    if (ended?.ended === 'input_out_of_bounds') await acts.dropLiveEncoder({ liveStreamId, reason: endReason });
    await setStatus('disconnected', endReason);
    await emit('live_stream.disconnected', { reason: endReason });
    if (completed || deleted || ended?.ended === 'input_out_of_bounds') break;
    // disconnected: the same recording continues if the encoder is back within the window.
    const back = await condition(() => pending !== undefined || completed !== undefined || deleted, reconnectWindowSeconds * 1000);
    if (!back || completed || deleted) break;
  }

  // The broadcast is over: the recording is finished from the segments already stored.
  const finished = await finishing.finishBroadcast({ liveStreamId, workspaceId, videoId });
  await setStatus('idle', endReason);
  state.videoId = null;
  await emit('live_stream.idle', { videoId: finished.videoId });
  if (finished.videoId) await acts.emitEvent({ eventId: `evt_${uuid4().replace(/-/g, '')}`, videoId, workspaceId, type: 'video.ready' });
  if (deleted) return;
  await condition(allHandlersFinished);
  // An encoder that connected after the window closed starts the next run's broadcast at once.
  await continueAsNew<typeof liveStreamWorkflow>({ ...input, broadcasts: state.broadcasts + 1, pending });
}
