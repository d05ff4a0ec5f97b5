// Which encoder may publish (SPEC §17, §22): one check for every ingest. The live edge (ingest/,
// `vidhost-edge`, the only ingest: RTMP, SRT and WHIP) asks it over loopback HTTP as an RTMP
// encoder publishes, during the SRT handshake or the WHIP offer, so a refused caller is rejected
// before it sends media. The same server takes the edge's hooks (lib/live/ingest.ts).
import http from 'node:http';
import type { Db } from '../db';
import type { Logger } from '../logger';
import { limitsOf } from '../plans';
import { hashStreamKey, STREAM_KEY_RE } from './keys';

/** Why a key is refused, as the SRT gateway maps it to a handshake rejection code. */
export type RefusalCode = 'bad_key' | 'unknown' | 'disabled' | 'busy' | 'plan_limit';

export type KeyCheck = { ok: true; stream: { id: string; workspace_id: string } } | { ok: false; code: RefusalCode; why: string };

/**
 * How long a reservation made at the key check holds on its own: from there the hooks'
 * `encoder_session` (set as the encoder is admitted) and the broadcast's recording
 * (`active_video_id`, set as the workflow starts it, cleared at idle) hold the slot. An SRT caller
 * that passed the check but never published (no connected hook) frees it after this.
 */
export const RESERVATION_SECONDS = 30;

/**
 * Unknown or disabled key, a stream that already has a publisher, or a plan at its concurrent
 * broadcasts → refused. The plan's slot is reserved atomically here (issue 33 row 4): the check
 * holds the workspace's row lock while it counts the streams that broadcast or hold a reservation
 * and stamps this stream's `broadcast_reserved_at`, so encoders connecting at the same moment are
 * counted one after another. `releaseReservation` frees it when the encoder is refused later.
 */
export async function checkStreamKey(db: Db, publishing: ReadonlyMap<string, unknown>, key: string): Promise<KeyCheck> {
  if (!STREAM_KEY_RE.test(key)) return { ok: false, code: 'bad_key', why: 'not a stream key' };
  const row = await db('live_streams').where({ stream_key_hash: hashStreamKey(key) }).whereNull('deleted_at').first('id', 'workspace_id', 'disabled');
  if (!row) return { ok: false, code: 'unknown', why: 'unknown stream key' };
  if (row.disabled) return { ok: false, code: 'disabled', why: 'live stream disabled' };
  if (publishing.has(row.id)) return { ok: false, code: 'busy', why: 'the stream already has a publisher' };
  return db.transaction(async (tx): Promise<KeyCheck> => {
    const ws = await tx('workspaces').where({ id: row.workspace_id }).forUpdate().first('plan');
    const limit = limitsOf(ws?.plan ?? 'free').liveBroadcasts;
    const [{ n }] = await tx('live_streams')
      .where({ workspace_id: row.workspace_id })
      .whereNot({ id: row.id })
      .whereNull('deleted_at')
      .where((q) =>
        q
          .whereNot({ status: 'idle' })
          .orWhereNotNull('active_video_id')
          .orWhereNotNull('encoder_session')
          .orWhereRaw(`broadcast_reserved_at > now() - make_interval(secs => ?)`, [RESERVATION_SECONDS]),
      )
      .count('* as n');
    if (Number(n) >= limit) return { ok: false, code: 'plan_limit', why: `the plan allows ${limit} broadcast(s) at once` };
    await tx('live_streams').where({ id: row.id }).update({ broadcast_reserved_at: tx.fn.now() });
    return { ok: true, stream: { id: row.id, workspace_id: row.workspace_id } };
  });
}

/** An admitted encoder was refused or left before its broadcast began: its slot is free again. */
export async function releaseReservation(db: Db, liveStreamId: string): Promise<void> {
  await db('live_streams').where({ id: liveStreamId }).update({ broadcast_reserved_at: null });
}

/** The apps an edge or encoder publishes under, as the key check's JSON body names them. */
export type IngestApp = 'rtmp' | 'srt' | 'whip';
const APPS: ReadonlySet<string> = new Set<IngestApp>(['rtmp', 'srt', 'whip']);

/**
 * The check's request body: the bare key (the SRT gateway's original form) or JSON
 * `{"key","app"}` (the edge, EDGE-CONTRACT amendment); null when neither.
 */
export function parseCheckBody(body: string): { key: string; app: IngestApp | null; json: boolean } | null {
  const text = body.trim();
  if (!text.startsWith('{')) return { key: text, app: null, json: false };
  try {
    const j = JSON.parse(text) as { key?: unknown; app?: unknown };
    if (typeof j.key !== 'string') return null;
    if (j.app !== undefined && (typeof j.app !== 'string' || !APPS.has(j.app))) return null;
    return { key: j.key, app: (j.app as IngestApp | undefined) ?? null, json: true };
  } catch {
    return null;
  }
}

/** A hook's answer: status and JSON body. */
export interface HookAnswer {
  status: number;
  body?: unknown;
}

/** The edge's other calls next to the check: `POST /connected`, `POST /disconnected` (JSON bodies). */
export type Hooks = Record<string, (body: unknown) => Promise<HookAnswer>>;

/**
 * `POST /check` with `{"key","app"}` as the body → 200 `{"live_stream_id","workspace_id"}`
 * (the bare key as the body, the SRT gateway's original form → 204), or 403 `{"code","reason"}`. Loopback only
 * (LIVE_SRT_CHECK_PORT); it says no more than an RTMP publish attempt on the public port does,
 * except the stream's id, which the edge needs to serve WHEP and LL-HLS by stream id.
 */
export function startKeyCheckServer(o: { host: string; port: number; check: (key: string, app: IngestApp | null) => Promise<KeyCheck>; hooks?: Hooks; log: Logger }): Promise<{ port: number; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    const hook = req.method === 'POST' && req.url && req.url !== '/check' && Object.hasOwn(o.hooks ?? {}, req.url.slice(1)) ? o.hooks![req.url.slice(1)] : undefined;
    if (hook) {
      let body = '';
      req.setEncoding('utf8');
      req.on('data', (c: string) => {
        body += c;
        if (body.length > 2048) req.destroy();
      });
      req.on('end', () => {
        let parsed: unknown = null;
        try {
          parsed = JSON.parse(body);
        } catch {
          res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'bad_request', reason: 'not JSON' }));
          return;
        }
        hook(parsed).then(
          (a) => res.writeHead(a.status, { 'content-type': 'application/json' }).end(JSON.stringify(a.body ?? {})),
          (err: unknown) => {
            o.log.error({ err, hook: req.url }, 'live: edge hook failed');
            res.writeHead(503).end();
          },
        );
      });
      return;
    }
    if (req.method !== 'POST' || req.url !== '/check') {
      res.writeHead(404).end();
      return;
    }
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => {
      body += c;
      if (body.length > 512) req.destroy();
    });
    req.on('end', () => {
      const parsed = parseCheckBody(body);
      if (!parsed) {
        res.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'bad_key', reason: 'not a stream key' }));
        return;
      }
      o.check(parsed.key, parsed.app).then(
        (r) => {
          if (r.ok && !parsed.json) res.writeHead(204).end();
          else if (r.ok) res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ live_stream_id: r.stream.id, workspace_id: r.stream.workspace_id }));
          else res.writeHead(403, { 'content-type': 'application/json' }).end(JSON.stringify({ code: r.code, reason: r.why }));
        },
        (err: unknown) => {
          o.log.error({ err }, 'live: stream key check failed');
          res.writeHead(503).end();
        },
      );
    });
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => {
      server.off('error', reject);
      const addr = server.address();
      resolve({
        port: typeof addr === 'object' && addr ? addr.port : o.port,
        close: () =>
          new Promise<void>((r) => {
            server.close(() => r());
            // The gateway's HTTP client keeps its connection alive: do not wait for it to idle out.
            server.closeAllConnections();
          }),
      });
    });
  });
}
