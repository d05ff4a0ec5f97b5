import assert from 'node:assert/strict';
import { loadConfig } from '../../lib/config';
import { createStorage, S3Storage } from '../../lib/storage';

// Presigning is offline: no S3 server is needed to see which host a browser would be sent to.
describe('S3_PUBLIC_ENDPOINT', () => {
  const env = { STORAGE_DRIVER: 's3', S3_ENDPOINT: 'http://minio:9000', S3_ACCESS_KEY_ID: 'a', S3_SECRET_ACCESS_KEY: 'b', DATA_DIR: '/tmp/vh-unit' };
  const presign = (extra: Record<string, string>) =>
    (createStorage(loadConfig({ ...env, ...extra })) as S3Storage).presignPut('originals/ws/v/a.mp4', { contentType: 'video/mp4', contentLength: 10, expiresIn: 60 });

  it('upload URLs point at the public endpoint when it is set, at S3_ENDPOINT otherwise', async () => {
    assert.equal(new URL((await presign({ S3_PUBLIC_ENDPOINT: 'http://localhost:9000' })).url).host, 'localhost:9000');
    assert.equal(new URL((await presign({})).url).host, 'minio:9000');
  });
});
