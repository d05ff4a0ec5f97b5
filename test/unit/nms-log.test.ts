import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { routeNmsLogs } from '../../lib/live/nmsLog';
import type { Logger } from '../../lib/logger';

describe('node-media-server logs (quiet start)', () => {
  const lines: Array<[string, string, unknown]> = [];
  const record = (level: string) => (msg: string) => void lines.push([level, msg, undefined]);
  const fake = { child: (b: unknown) => ({ trace: record('trace'), debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error'), bindings: b }) } as unknown as Logger;
  const printed: string[] = [];
  let original: typeof console.log;
  let nms: ReturnType<typeof routeNmsLogs>;
  let savedLevel: ReturnType<typeof routeNmsLogs>['level'];

  before(() => {
    nms = routeNmsLogs(fake);
    savedLevel = nms.level;
    original = console.log;
    console.log = (...args: unknown[]) => void printed.push(args.join(' '));
  });
  after(() => {
    console.log = original;
    nms.level = savedLevel;
  });

  it('prints no banner when a server is made: its lines go to our logger at debug', () => {
    const NodeMediaServer = require('node-media-server');
    new NodeMediaServer({ bind: '127.0.0.1', rtmp: { port: 0 }, webadmin: { enable: false }, store: { path: path.join(os.tmpdir(), 'vh-nms-log-test') } }, '');
    assert.deepEqual(printed, []);
    assert.ok(lines.some(([level, msg]) => level === 'debug' && /^Node-Media-Server v/.test(msg)), JSON.stringify(lines));
  });

  it("keeps node-media-server's own level as the first filter and maps warn and error", () => {
    lines.length = 0;
    nms.level = 'error';
    nms.log('chatter', 'info');
    nms.log('bad', 'error');
    nms.level = 'debug';
    nms.log('careful', 'warn');
    assert.deepEqual(lines.map(([level, msg]) => `${level} ${msg}`), ['error bad', 'warn careful']);
    assert.deepEqual(printed, []);
  });
});
