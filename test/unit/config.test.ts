import assert from 'node:assert/strict';
import { loadConfig, parseDurationList } from '../../lib/config';

describe('config', () => {
  it('has working defaults and derives the public URLs from the base URL', () => {
    const c = loadConfig({});
    assert.equal(c.port, 3000);
    assert.equal(c.publicBaseUrl, 'http://localhost:3000');
    assert.equal(c.cdnUrl, 'http://localhost:3000/cdn');
    assert.equal(c.playerUrl, 'http://localhost:3000/player');
    assert.equal(c.upload.maxBytes, 5_368_709_120);
    assert.equal(c.rateLimitPerMinute, 100);
    assert.deepEqual(c.webhooks.retryScheduleMs, [5e3, 3e5, 18e5, 72e5, 18e6, 36e6, 504e5, 72e6, 864e5]);
    assert.deepEqual(c.temporal.workerRoles, ['workflow', 'transcode']);
  });

  it('parses booleans explicitly: "false" is false', () => {
    assert.equal(loadConfig({ ALLOW_LOOPBACK_URLS: 'false' }).allowLoopbackUrls, false);
    assert.equal(loadConfig({ ALLOW_LOOPBACK_URLS: 'true' }).allowLoopbackUrls, true);
    assert.throws(() => loadConfig({ ALLOW_LOOPBACK_URLS: 'maybe' }), /ALLOW_LOOPBACK_URLS/);
  });

  it('names every invalid variable', () => {
    assert.throws(() => loadConfig({ PORT: 'eighty', STORAGE_DRIVER: 'ftp' }), (err: Error) => /PORT/.test(err.message) && /STORAGE_DRIVER/.test(err.message));
  });

  it('requires real secrets in production', () => {
    assert.throws(() => loadConfig({ NODE_ENV: 'production' }), /UPLOAD_SIGNING_SECRET/);
    assert.throws(() => loadConfig({ NODE_ENV: 'production', UPLOAD_SIGNING_SECRET: 'x'.repeat(32) }), /PLAYBACK_SIGNING_KEYS/);
  });

  it('reads playback keys for rotation and checks the signing kid', () => {
    const c = loadConfig({ PLAYBACK_SIGNING_KEYS: `old:${'a'.repeat(20)},new:${'b'.repeat(20)}`, PLAYBACK_SIGNING_KID: 'new' });
    assert.deepEqual(c.playback.keys.map((k) => k.kid), ['old', 'new']);
    assert.equal(c.playback.signingKid, 'new');
    assert.throws(() => loadConfig({ PLAYBACK_SIGNING_KEYS: `a:${'a'.repeat(20)}`, PLAYBACK_SIGNING_KID: 'b' }), /not in PLAYBACK_SIGNING_KEYS/);
  });

  it('is frozen', () => {
    const c = loadConfig({});
    assert.throws(() => {
      (c as { port: number }).port = 1;
    }, TypeError);
  });

  it('parses duration lists', () => {
    assert.deepEqual(parseDurationList('200ms, 1.5s,2m,1h'), [200, 1500, 120_000, 3_600_000]);
    assert.throws(() => parseDurationList('5 minutes'), /bad duration/);
  });
});
