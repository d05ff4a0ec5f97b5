import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { pinTarget } from '../../lib/live/simulcast';

describe('simulcast: a target pinned to its checked address (issue 33 row 6)', () => {
  it('rtmp: the IP literal in the URL, the name in the tcUrl', async () => {
    const t = { url: 'rtmp://live.example.com/app/inst', stream_key: 'k1' };
    const p = await pinTarget(t, new URL(t.url), '203.0.113.7');
    assert.equal(p.output, 'rtmp://203.0.113.7:1935/app/inst/k1');
    assert.deepEqual(p.args, ['-rtmp_tcurl', 'rtmp://live.example.com:1935/app/inst']);
    const v6 = await pinTarget({ url: 'rtmp://live.example.com:1940/live' }, new URL('rtmp://live.example.com:1940/live'), '2001:db8::1');
    assert.equal(v6.output, 'rtmp://[2001:db8::1]:1940/live');
  });

  it('rtmps: a loopback relay opens TLS to the checked address with the name as SNI, and verifies the certificate', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-pin-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dir, 'k.pem'), '-out', path.join(dir, 'c.pem'), '-days', '1', '-subj', '/CN=live.example.test'], { stdio: 'ignore' });
    const names: string[] = [];
    const server = tls.createServer({
      key: fs.readFileSync(path.join(dir, 'k.pem')),
      cert: fs.readFileSync(path.join(dir, 'c.pem')),
      SNICallback: (name, cb) => {
        names.push(name);
        cb(null, undefined);
      },
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const url = new URL(`rtmps://live.example.test:${port}/app`);
      const p = await pinTarget({ url: url.toString(), stream_key: 'sk' }, url, '127.0.0.1');
      assert.match(p.output, /^rtmp:\/\/127\.0\.0\.1:\d+\/app\/sk$/);
      assert.deepEqual(p.args, ['-rtmp_tcurl', `rtmps://live.example.test:${port}/app`]);
      const relay = new URL(p.output);
      const sock = net.connect(Number(relay.port), '127.0.0.1');
      await new Promise((r) => sock.once('close', r));
      p.close();
      assert.deepEqual(names, ['live.example.test']);
      // A self-signed certificate: refused, and the reason is what the target's error says.
      assert.match(p.relayError() ?? '', /TLS to live\.example\.test: .*self.signed/);
    } finally {
      server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
