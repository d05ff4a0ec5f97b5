import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../lib/config';
import { temporalConnectionOptions } from '../../lib/temporal';

describe('Temporal connection options (self-hosted mTLS, Temporal Cloud)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-tls-'));
  const file = (name: string, text: string) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, text);
    return p;
  };

  it('is plain text by default (the dev server, a private cluster)', () => {
    const o = temporalConnectionOptions(loadConfig({ TEMPORAL_ADDRESS: 'temporal:7233' }));
    assert.deepEqual(o, { address: 'temporal:7233' });
  });

  it('reads an mTLS pair, a CA and a server name from files', () => {
    const c = loadConfig({
      TEMPORAL_ADDRESS: 'ns.acct.tmprl.cloud:7233',
      TEMPORAL_TLS_CERT_PATH: file('tls.crt', 'CERT'),
      TEMPORAL_TLS_KEY_PATH: file('tls.key', 'KEY'),
      TEMPORAL_TLS_CA_PATH: file('ca.crt', 'CA'),
      TEMPORAL_TLS_SERVER_NAME: 'temporal.internal',
    });
    const o = temporalConnectionOptions(c);
    const tls = o.tls as { clientCertPair: { crt: Buffer; key: Buffer }; serverRootCACertificate: Buffer; serverNameOverride: string };
    assert.equal(tls.clientCertPair.crt.toString(), 'CERT');
    assert.equal(tls.clientCertPair.key.toString(), 'KEY');
    assert.equal(tls.serverRootCACertificate.toString(), 'CA');
    assert.equal(tls.serverNameOverride, 'temporal.internal');
    assert.equal(o.apiKey, undefined);
  });

  it('turns TLS on with an API key (Temporal Cloud refuses plain text)', () => {
    const o = temporalConnectionOptions(loadConfig({ TEMPORAL_ADDRESS: 'x.tmprl.cloud:7233', TEMPORAL_API_KEY: 'k' }));
    assert.deepEqual(o, { address: 'x.tmprl.cloud:7233', tls: {}, apiKey: 'k' });
  });

  it('refuses a certificate without its key', () => {
    assert.throws(() => loadConfig({ TEMPORAL_TLS_CERT_PATH: '/x.crt' }), /set together/);
  });
});
