// Names shared by the live workflow, the API, the media server and the live activities. Pure.
import { defineQuery, defineSignal } from '@temporalio/workflow';

/** SPEC §17 states. */
export type LiveStatus = 'idle' | 'active' | 'disconnected';

export interface LiveWorkflowInput {
  liveStreamId: string;
  workspaceId: string;
  /** Task queue of the session activity (config TEMPORAL_LIVE_QUEUE). */
  liveQueue: string;
  /** Timings the tests shorten. */
  tuning?: { heartbeatTimeoutMs?: number };
  /** Broadcasts before this run (continue-as-new per broadcast). */
  broadcasts?: number;
  /** Set when a run continues-as-new while an encoder is already waiting to be taken. */
  pending?: ConnectedSignal;
}

export interface ConnectedSignal {
  /** The media server's session id: a disconnect names the session it ends. */
  sessionId: string;
  protocol: 'rtmp' | 'srt' | 'whip';
}

export interface DisconnectedSignal {
  sessionId: string;
  reason: string;
}

export interface LiveState {
  status: LiveStatus;
  videoId: string | null;
  sessionId: string | null;
  broadcasts: number;
}

export const connectedSignal = defineSignal<[ConnectedSignal]>('liveConnected');
export const disconnectedSignal = defineSignal<[DisconnectedSignal]>('liveDisconnected');
/** The session activity uploaded the first segments: the broadcast is playable. */
export const playableSignal = defineSignal<[{ videoId: string }]>('livePlayable');
/** `POST …/complete` and `…/disable`: end the broadcast now. */
export const completeSignal = defineSignal<[{ reason: string }]>('liveComplete');
export const deleteLiveSignal = defineSignal('liveDelete');
export const liveStateQuery = defineQuery<LiveState>('liveState');

export const liveWorkflowId = (liveStreamId: string) => `live-${liveStreamId}`;

/** How a session ended, as the session activity reports it. */
export interface SessionResult {
  ended: 'feed_ended' | 'input_out_of_bounds' | 'cancelled';
  reason: string;
  segments: number;
}
