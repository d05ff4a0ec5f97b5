// node-media-server logs through one module-level logger that prints with console.log, and its
// constructor forces that logger to `debug` to print a four-line banner (version, homepage,
// license, author). Routed here into the process's own logger instead, so `scripts/start` shows
// one readable line per child and JSON logs stay JSON: its `info` is connection chatter and goes
// to debug; its own level (set by lib/live/ingest.ts) still filters first.
import type { Logger } from '../logger';

type NmsLevel = 'trace' | 'debug' | 'info' | 'warn' | 'error';
interface NmsLogger {
  levels: NmsLevel[];
  level: NmsLevel;
  log(message: string, level?: NmsLevel): void;
}

const toOurs: Record<NmsLevel, 'trace' | 'debug' | 'warn' | 'error'> = { trace: 'trace', debug: 'debug', info: 'debug', warn: 'warn', error: 'error' };

/** Sends node-media-server's log lines to `log` (child `component: node-media-server`). Returns node-media-server's logger. */
export function routeNmsLogs(log: Logger): NmsLogger {
  const nms: NmsLogger = require('node-media-server/src/core/logger.js');
  const child = log.child({ component: 'node-media-server' });
  nms.log = function (message: string, level: NmsLevel = 'info') {
    if (this.levels.indexOf(level) < this.levels.indexOf(this.level)) return;
    child[toOurs[level] ?? 'debug'](String(message));
  };
  return nms;
}
