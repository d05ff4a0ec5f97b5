// The media server's hooks (SPEC §17): which encoder may publish, and what the stream's
// workflow is told. node-media-server emits prePublish/donePublish/prePlay; the key is checked
// against Postgres as the encoder connects, and an encoder that fails the check is closed before
// any of its media is read (live workers read a feed only once its workflow was signalled).
import path from 'node:path';
import type { Client } from '@temporalio/client';
import type { Config } from '../config';
import type { Db } from '../db';
import type { Logger } from '../logger';
import { listen, type Listener } from '../pg/listen';
import { disconnectedSignal, liveWorkflowId } from '../../workflows/live/defs';
import { FeedBounds, type FlvPacket } from './bounds';
import { LIVE_CONTROL_CHANNEL, parseDrop } from './control';
import { internalPath } from './keys';
import { checkStreamKey, type IngestApp as IngestProtocol, releaseReservation, startKeyCheckServer } from './key-check';
import { routeNmsLogs } from './nmsLog';
import { signalConnected } from './workflow';

// node-media-server is CommonJS without types; these are the parts of its session and context used here.
interface NmsSession {
  id: string;
  ip: string;
  streamApp: string;
  streamName: string;
  streamPath: string;
  close: () => void;
}
interface NmsBroadcast {
  publisher: NmsSession | null;
  publishGraceMs: number;
  broadcastMessage: (packet: FlvPacket) => void;
}
interface NmsContext {
  broadcasts: Map<string, NmsBroadcast>;
  eventEmitter: { on: (e: string, f: (s: NmsSession) => void) => void; off: (e: string, f: (s: NmsSession) => void) => void };
}

export interface IngestServer {
  rtmpPort: number;
  /** Publishing sessions admitted, by live stream. */
  active: Map<string, { sessionId: string; session: NmsSession; dropReason?: string }>;
  stop(): Promise<void>;
}

/**
 * RTMP applications an encoder may publish to, and the protocol each stands for: `srt` and `whip`
 * are where the live edge (ingest/, vidhost-edge) republishes an SRT caller's or a WHIP
 * publisher's feed.
 */
const INGEST_APPS = new Map<string, IngestProtocol>([
  ['live', 'rtmp'],
  ['srt', 'srt'],
  ['whip', 'whip'],
]);

/** Refuses without saying more than the encoder needs; the reason is logged. */
function refuse(log: Logger, s: NmsSession, why: string): void {
  log.info({ session: s.id, ip: s.ip, why }, 'live: publish refused');
  s.close();
}

export async function startIngestServer(deps: { config: Config; db: Db; temporal: Client; log: Logger }): Promise<IngestServer> {
  const { config, db, temporal, log } = deps;
  const NodeMediaServer = require('node-media-server');
  const Context: NmsContext = require('node-media-server/src/core/context.js');
  const nmsLogger = routeNmsLogs(log);
  const nms = new NodeMediaServer(
    {
      bind: config.live.ingestHost,
      rtmp: { port: config.live.rtmpPort },
      http: { port: config.live.mediaHttpPort },
      // Only live workers (who know the secret) may play a feed: viewers watch the HLS ladder.
      auth: { play: true, publish: false, secret: config.live.mediaSecret, jwt: { secret: config.live.mediaSecret, users: [] } },
      webadmin: { enable: false },
      store: { path: path.join(config.dataDir, 'media-server') },
      record: { auto: false, path: path.join(config.dataDir, 'media-server', 'record') },
    },
    '',
  );
  nmsLogger.level = config.logLevel === 'debug' || config.logLevel === 'trace' ? 'debug' : 'error';
  const active: IngestServer['active'] = new Map();
  const bySession = new Map<string, string>();
  /** Publishers dropped for the input bounds (lib/live/bounds.ts), and why, until their donePublish. */
  const boundsDrops = new Map<string, string>();
  /** Each broadcast's current publisher and its bounds; the broadcast's packets pass through `guard`. */
  const monitors = new WeakMap<NmsBroadcast, { session: NmsSession; bounds: FeedBounds; dropped: boolean }>();
  let stopped = false;

  /**
   * Checks every packet the publisher sends against the input bounds before node-media-server
   * hands it to anyone (the live worker, simulcast): a packet past them is never passed on, and
   * the publisher is closed with the reason `live_stream.disconnected` then carries.
   */
  function guard(bc: NmsBroadcast, s: NmsSession): void {
    if (!monitors.has(bc)) {
      const forward = bc.broadcastMessage;
      bc.broadcastMessage = (packet: FlvPacket) => {
        // node-media-server's broadcasts outlive a stopped server in the same process (tests).
        const m = stopped ? undefined : monitors.get(bc);
        if (m) {
          if (m.dropped) return;
          const why = m.bounds.check(packet);
          if (why) {
            m.dropped = true;
            const reason = `input out of bounds: ${why}`;
            boundsDrops.set(m.session.id, reason);
            const id = bySession.get(m.session.id);
            const entry = id ? active.get(id) : undefined;
            if (entry?.sessionId === m.session.id) entry.dropReason = reason;
            log.info({ session: m.session.id, liveStreamId: id, reason }, 'live: feed dropped');
            m.session.close();
            return;
          }
        }
        forward(packet);
      };
    }
    monitors.set(bc, { session: s, bounds: new FeedBounds(), dropped: false });
  }

  async function admit(s: NmsSession): Promise<void> {
    const protocol = INGEST_APPS.get(s.streamApp);
    if (!protocol) return refuse(log, s, 'not a stream key');
    const checked = await checkStreamKey(db, active, s.streamName);
    if (!checked.ok) return refuse(log, s, checked.why);
    const row = checked.stream;
    try {
      const bc = Context.broadcasts.get(s.streamPath);
      if (!bc || bc.publisher !== s) {
        await releaseReservation(db, row.id);
        return refuse(log, s, 'publisher gone');
      }
      // Live workers read the broadcast by stream id: the same broadcast, under a second path.
      Context.broadcasts.set(internalPath(row.id), bc);
      active.set(row.id, { sessionId: s.id, session: s });
      bySession.set(s.id, row.id);
      // A new encoder, a new measure (lib/live/health.ts): the session adds to it.
      await db('live_streams').where({ id: row.id }).update({ encoder_session: s.id, health: JSON.stringify({ protocol }) });
      await signalConnected(temporal, config, row.id, row.workspace_id, { sessionId: s.id, protocol });
    } catch (err) {
      // Not admitted after all: the plan's slot the check reserved is free again.
      await releaseReservation(db, row.id).catch(() => undefined);
      throw err;
    }
    log.info({ liveStreamId: row.id, session: s.id, ip: s.ip }, 'live: encoder connected');
  }

  const handlers: Array<[string, (s: NmsSession) => void]> = [];
  const on = (event: string, f: (s: NmsSession) => void) => {
    handlers.push([event, f]);
    Context.eventEmitter.on(event, f);
  };
  on('prePublish', (s: NmsSession) => {
    const bc = Context.broadcasts.get(s.streamPath);
    // A second publisher on a live key: node-media-server refuses it right after this event.
    if (bc?.publisher && bc.publisher !== s) return;
    // No grace period: a disconnect is reported at once; reconnects are the workflow's business.
    if (bc) bc.publishGraceMs = 0;
    if (bc) guard(bc, s);
    void admit(s).catch((err) => {
      log.error({ err }, 'live: admission failed');
      s.close();
    });
  });
  on('donePublish', (s: NmsSession) => {
    const boundsReason = boundsDrops.get(s.id);
    boundsDrops.delete(s.id);
    const id = bySession.get(s.id);
    if (!id) return;
    bySession.delete(s.id);
    const entry = active.get(id);
    if (entry?.sessionId === s.id) {
      active.delete(id);
      Context.broadcasts.delete(internalPath(id));
    }
    const reason = entry?.dropReason ?? boundsReason ?? 'encoder disconnected';
    // The encoder's hold on the plan's slot ends with it; a broadcast it started holds the slot
    // until idle (active_video_id).
    void db('live_streams').where({ id, encoder_session: s.id }).update({ encoder_session: null, broadcast_reserved_at: null }).catch(() => undefined);
    void temporal.workflow
      .getHandle(liveWorkflowId(id))
      .signal(disconnectedSignal, { sessionId: s.id, reason })
      .catch((err) => log.warn({ err, liveStreamId: id }, 'live: disconnect signal failed'));
    log.info({ liveStreamId: id, session: s.id, reason }, 'live: encoder disconnected');
  });
  on('prePlay', (s: NmsSession) => {
    // Nobody plays a stream key; live workers play /internal/<ls_id> with a signature (auth.play).
    if (!s.streamPath.startsWith('/internal/')) s.close();
  });

  const listener: Listener = listen(
    config.databaseUrl,
    LIVE_CONTROL_CHANNEL,
    {
      onNotify: (payload) => {
        const m = parseDrop(payload);
        const entry = m && active.get(m.liveStreamId);
        if (!entry || !m) return;
        entry.dropReason = m.reason;
        entry.session.close();
      },
      onReset: () => undefined,
    },
    log,
  );

  // Encoders of a media server that died left without a donePublish: say so now, so their
  // broadcasts wait for a reconnect instead of for a disconnect nobody will report.
  const stale: Array<{ id: string; encoder_session: string }> = await db('live_streams').whereNotNull('encoder_session').select('id', 'encoder_session');
  for (const st of stale) {
    await db('live_streams').where({ id: st.id, encoder_session: st.encoder_session }).update({ encoder_session: null });
    await temporal.workflow
      .getHandle(liveWorkflowId(st.id))
      .signal(disconnectedSignal, { sessionId: st.encoder_session, reason: 'media server restarted' })
      .catch((err) => log.warn({ err, liveStreamId: st.id }, 'live: disconnect signal failed'));
  }

  await nms.run();
  const check = await startKeyCheckServer({ host: '127.0.0.1', port: config.live.srtCheckPort, check: (key) => checkStreamKey(db, active, key), log });
  return {
    rtmpPort: config.live.rtmpPort,
    active,
    async stop() {
      stopped = true;
      // node-media-server keeps one event emitter per process: a later server must not run these.
      for (const [event, f] of handlers) Context.eventEmitter.off(event, f);
      await listener.close();
      await check.close();
      await nms.stop();
    },
  };
}
