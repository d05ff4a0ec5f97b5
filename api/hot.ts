import { BeaconBuffer } from '../lib/analytics/buffer';
import { resolveBodies } from '../lib/analytics/rows';
import { BeaconSubjects } from '../lib/analytics/subjects';
import { DailySalt } from '../lib/analytics/viewer';
import { WhepViews } from '../lib/analytics/whep';
import { KeyCache } from '../lib/keyCache';
import { createLimiters, type Limiter } from '../lib/limits';
import { LocalLimiter } from '../lib/limits/local';
import { BandwidthMeter } from '../lib/playback/bandwidth';
import { AccessCache } from '../lib/playback/accessCache';
import { FileCache } from '../lib/playback/fileCache';
import { ReadCache } from '../lib/videos/readCache';
import { WorkflowStarter } from '../lib/videos/starts';
import type { BaseDeps } from './base';

/**
 * The per-process state of the hot paths: key lookups cached with revocation pushed over
 * LISTEN/NOTIFY, limiters whose budgets every process shares, the CDN's access decisions and
 * small files, the video reads, the bandwidth meter, the workflow start outbox, the analytics beacon buffer and the WHEP views' heartbeats. `close` flushes what is buffered (last_used_at, bandwidth) before exit.
 */
export interface Hot {
  keys: KeyCache;
  perKey: Limiter;
  badKeys: Limiter;
  access: AccessCache;
  files: FileCache;
  meter: BandwidthMeter;
  reads: ReadCache;
  /** New videos' workflow starts, made after init answers (the start outbox). */
  starts: WorkflowStarter;
  /** Accepted analytics beacons waiting for their multi-row INSERT, and the day's viewer-hash salt. */
  beacons: BeaconBuffer;
  /** Beacon requests per client address and minute (`ANALYTICS_BEACONS_PER_MINUTE`). */
  beaconLimit: Limiter;
  /** The same budget in this process's memory, when `beaconLimit` cannot decide in time (api/analytics/beacons.ts). */
  beaconLimitLocal: LocalLimiter;
  /** Which beacon subjects count (lib/analytics/subjects.ts), shared by the Koa route and the fast path. */
  beaconSubjects: BeaconSubjects;
  salt: DailySalt;
  /** WHEP viewers' views, written by the API itself (a WHEP player may send no beacon). */
  whep: WhepViews;
  close(): Promise<void>;
}

export function createHot(d: BaseDeps): Hot {
  const { config, db, log } = d;
  const keys = new KeyCache(db, config.databaseUrl, log, config.hot.keyCacheTtlMs);
  const limiters = createLimiters(db, {
    redisUrl: config.hot.redisUrl,
    perKey: config.rateLimitPerMinute,
    badKeysPerIp: config.hot.invalidKeyLimitPerMinute,
    beaconsPerIp: config.analytics.beaconsPerMinute,
  });
  const meter = new BandwidthMeter(db, log);
  const access = new AccessCache(db, config.playback, config.hot.cdnAccessCacheMs, config.databaseUrl, log);
  const files = new FileCache(d.storage, config.hot.cdnFileCacheBytes, config.hot.cdnAccessCacheMs, config.databaseUrl, log);
  const reads = new ReadCache(config.databaseUrl, log, config.hot.readCacheMs);
  const starts = new WorkflowStarter(db, d.temporal, config, log);
  const a = config.analytics;
  const salt = new DailySalt(db);
  const beaconSubjects = new BeaconSubjects(db, access);
  const beacons = new BeaconBuffer(db, log, {
    flushMs: a.flushMs,
    flushRows: a.flushRows,
    maxRows: a.bufferMaxRows,
    resolve: (bodies) => resolveBodies(beaconSubjects, salt, bodies),
  });
  const whep = new WhepViews({ config, db, log, beacons, salt });
  let closing: Promise<void> | undefined;
  return {
    keys,
    perKey: limiters.perKey,
    badKeys: limiters.badKeys,
    access,
    files,
    meter,
    reads,
    starts,
    beacons,
    beaconLimit: limiters.beacons,
    beaconLimitLocal: new LocalLimiter(config.analytics.beaconsPerMinute),
    beaconSubjects,
    salt,
    whep,
    close() {
      closing ??= (async () => {
        whep.close();
        await Promise.allSettled([meter.close(), keys.close(), limiters.close(), access.close(), files.close(), reads.close(), starts.close(), beacons.close()]);
      })();
      return closing;
    },
  };
}
