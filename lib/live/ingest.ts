// The service's side of live ingest (SPEC §17, §22). The live edge (ingest/, `vidhost-edge`) is the
// only ingest — RTMP, SRT and WHIP — and asks this server, on loopback (LIVE_SRT_CHECK_PORT):
// - `POST /check` whether a key may publish (lib/live/key-check.ts: reserves the plan's slot);
// - `POST /connected` `{"live_stream_id","session","protocol"}` once an admitted publisher
//   publishes into the edge's core: the stream's workflow is signalled `connected`;
// - `POST /disconnected` `{"live_stream_id","session","reason"}` when it ends (the encoder left,
//   the input bounds, a drop the service asked for): the workflow is signalled `disconnected` with
//   the reason (reconnect window, simulcast, health and webhooks follow from the workflow).
// Live workers read the broadcast from the edge (`GET /feed/{ls}`, lib/live/feed.ts); drops are
// asked of the edge directly (lib/live/control.ts).
import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import type { Db } from '../db';
import type { Logger } from '../logger';
import { disconnectedSignal, liveWorkflowId } from '../../workflows/live/defs';
import { edgeRequest, edgeStreamStats } from './edge';
import { checkStreamKey, type HookAnswer, type IngestApp, releaseReservation, startKeyCheckServer } from './key-check';
import { signalConnected } from './workflow';
import { workspaceFairness } from '../fairness';

export interface IngestServer {
  /** The hooks' port (LIVE_SRT_CHECK_PORT, or the one bound for 0). */
  port: number;
  /** Publishers the edge reported, by live stream (`edge`: the edge process that carries it). */
  active: Map<string, { sessionId: string; protocol: IngestApp; edge?: string }>;
  stop(): Promise<void>;
}

const SESSION_RE = /^[A-Za-z0-9_-]{1,64}$/;
const PROTOCOLS: ReadonlySet<string> = new Set<IngestApp>(['rtmp', 'srt', 'whip']);
const refused = (status: number, code: string, reason: string): HookAnswer => ({ status, body: { code, reason } });

export async function startIngestServer(deps: { config: Config; db: Db; temporal: Client; log: Logger }): Promise<IngestServer> {
  const { config, db, temporal, log } = deps;
  const active: IngestServer['active'] = new Map();

  const signalDisconnected = (id: string, sessionId: string, reason: string) =>
    temporal.workflow
      .getHandle(liveWorkflowId(id))
      .signal(disconnectedSignal, { sessionId, reason })
      .catch((err) => log.warn({ err, liveStreamId: id }, 'live: disconnect signal failed'));

  async function connected(body: unknown): Promise<HookAnswer> {
    const b = (body ?? {}) as Record<string, unknown>;
    const id = typeof b.live_stream_id === 'string' ? b.live_stream_id : '';
    const sessionId = typeof b.session === 'string' ? b.session : '';
    const protocol = typeof b.protocol === 'string' ? b.protocol : '';
    const edge = typeof b.edge === 'string' && SESSION_RE.test(b.edge) ? b.edge : undefined;
    if (!id.startsWith('ls_') || !SESSION_RE.test(sessionId) || !PROTOCOLS.has(protocol)) return refused(400, 'bad_request', 'live_stream_id, session and protocol are required');
    const row = await db('live_streams').where({ id }).whereNull('deleted_at').first('id', 'workspace_id', 'disabled');
    if (!row) return refused(404, 'unknown', 'no such live stream');
    if (row.disabled) {
      await releaseReservation(db, id);
      return refused(403, 'disabled', 'live stream disabled');
    }
    // The edge holds one publisher per stream: a new session replaces one it no longer carries.
    active.set(id, { sessionId, protocol: protocol as IngestApp, edge });
    try {
      // A new encoder, a new measure (lib/live/health.ts): the session adds to it.
      await db('live_streams').where({ id }).update({ encoder_session: sessionId, health: JSON.stringify({ protocol }) });
      await signalConnected(temporal, config, id, row.workspace_id, await workspaceFairness(db, row.workspace_id), { sessionId, protocol: protocol as IngestApp });
    } catch (err) {
      // Not admitted after all: the plan's slot the check reserved is free again.
      if (active.get(id)?.sessionId === sessionId) active.delete(id);
      await releaseReservation(db, id).catch(() => undefined);
      throw err;
    }
    log.info({ liveStreamId: id, session: sessionId, protocol }, 'live: encoder connected');
    return { status: 200, body: { ok: true } };
  }

  async function disconnected(body: unknown): Promise<HookAnswer> {
    const b = (body ?? {}) as Record<string, unknown>;
    const id = typeof b.live_stream_id === 'string' ? b.live_stream_id : '';
    const sessionId = typeof b.session === 'string' ? b.session : '';
    const reason = typeof b.reason === 'string' && b.reason.trim() ? b.reason.trim().slice(0, 300) : 'encoder disconnected';
    if (!id.startsWith('ls_') || !SESSION_RE.test(sessionId)) return refused(400, 'bad_request', 'live_stream_id and session are required');
    if (active.get(id)?.sessionId === sessionId) active.delete(id);
    // The encoder's hold on the plan's slot ends with it; a broadcast it started holds the slot
    // until idle (active_video_id).
    await db('live_streams').where({ id, encoder_session: sessionId }).update({ encoder_session: null, broadcast_reserved_at: null });
    void signalDisconnected(id, sessionId, reason);
    log.info({ liveStreamId: id, session: sessionId, reason }, 'live: encoder disconnected');
    return { status: 200, body: { ok: true } };
  }

  // Encoders this server heard of before it restarted, that the edge no longer has (it restarted
  // too, or the disconnect was lost): say so now, so their broadcasts wait for a reconnect instead
  // of for a disconnect nobody will report. One the edge still carries stays connected.
  const stale: Array<{ id: string; encoder_session: string; health: { protocol?: string } | null }> = await db('live_streams')
    .whereNotNull('encoder_session')
    .select('id', 'encoder_session', 'health');
  for (const st of stale) {
    const seen = await edgeStreamStats(config, st.id, 1000).catch(() => null);
    if (seen?.protocol) {
      active.set(st.id, { sessionId: st.encoder_session, protocol: seen.protocol });
      continue;
    }
    await db('live_streams').where({ id: st.id, encoder_session: st.encoder_session }).update({ encoder_session: null });
    await signalDisconnected(st.id, st.encoder_session, 'live ingest restarted');
  }

  // An edge that dies (SIGKILL, OOM) reports no disconnect: every 5 s this server asks the edge
  // which process it is (X-Edge-Instance on its answers); a publisher reported by another edge
  // process is gone with it, and is disconnected here, so the broadcast waits for a reconnect and
  // the key is free for it. (The edge that carries a publisher reports its end itself.)
  let sweeping = false;
  const sweep = setInterval(() => {
    if (sweeping || active.size === 0) return;
    sweeping = true;
    void (async () => {
      const [id0] = active.keys();
      const a = await edgeRequest(config, 'GET', `/streams/${encodeURIComponent(id0)}`, { timeoutMs: 2000 }).catch(() => null);
      const now = a?.headers.get('x-edge-instance');
      if (!now) return; // down, or an edge that does not say: nothing to conclude
      for (const [id, held] of [...active]) {
        if (!held.edge || held.edge === now) continue;
        active.delete(id);
        const cleared = await db('live_streams').where({ id, encoder_session: held.sessionId }).update({ encoder_session: null, broadcast_reserved_at: null });
        log.info({ liveStreamId: id, session: held.sessionId }, 'live: the edge that carried the encoder is gone');
        if (cleared) await signalDisconnected(id, held.sessionId, 'live edge restarted');
      }
    })()
      .catch((err) => log.warn({ err }, 'live: publisher sweep failed'))
      .finally(() => {
        sweeping = false;
      });
  }, 5000);
  sweep.unref();

  const server = await startKeyCheckServer({
    host: '127.0.0.1',
    port: config.live.srtCheckPort,
    check: (key) => checkStreamKey(db, active, key),
    hooks: { connected, disconnected },
    log,
  });
  return {
    port: server.port,
    active,
    async stop() {
      clearInterval(sweep);
      await server.close();
    },
  };
}
