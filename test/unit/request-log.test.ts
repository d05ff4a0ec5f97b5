import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import Koa from 'koa';
import pino from 'pino';
import type { Logger } from '../../lib/logger';
import { requestContext } from '../../api/middleware/request';

/** The request line and lines logged inside carry the request id and who it acts for. */
async function run(level: string): Promise<Array<Record<string, unknown>>> {
  const lines: string[] = [];
  const log = pino({ level }, { write: (s: string) => lines.push(s) }) as unknown as Logger;
  const app = new Koa();
  app.use(requestContext(log));
  app.use(async (ctx, next) => {
    ctx.state.logAs?.({ key: 'key_1', ws: 'ws_1' });
    await next();
  });
  app.use((ctx) => {
    ctx.state.log?.warn('inside');
    ctx.body = 'ok';
  });
  const srv = app.listen(0, '127.0.0.1');
  await new Promise((r) => srv.once('listening', r));
  const res = await fetch(`http://127.0.0.1:${(srv.address() as AddressInfo).port}/x?token=secret`);
  assert.match(res.headers.get('x-request-id') ?? '', /^req_[0-9a-f]{32}$/);
  await new Promise((r) => srv.close(r));
  return lines.map((l) => JSON.parse(l));
}

describe('unit: request logging', () => {
  it('binds request id, key and workspace to every line, made lazily', async () => {
    const [inside, request] = await run('info');
    assert.equal(inside.msg, 'inside');
    assert.equal(request.msg, 'request');
    for (const l of [inside, request]) {
      assert.match(String(l.req), /^req_[0-9a-f]{32}$/);
      assert.equal(l.key, 'key_1');
      assert.equal(l.ws, 'ws_1');
    }
    assert.doesNotMatch(String(request.path), /secret/);
  });

  it('with info off only what is logged appears (no request line)', async () => {
    const lines = await run('warn');
    assert.deepEqual(lines.map((l) => l.msg), ['inside']);
    assert.equal(lines[0].ws, 'ws_1');
  });
});
