import { FileStore } from '@tus/file-store';
import { S3Store } from '@tus/s3-store';
import type { DataStore } from '@tus/utils';
import type { Config } from '../../lib/config';
import { s3RequestHandler } from '../../lib/storage/s3';

/**
 * Where tus uploads go while they are unfinished: the storage itself, at the upload's staging key.
 * Local: a file under the storage root (plus `<key>.json`). S3: a multipart upload to the key
 * (plus `<key>.info`, and `<key>.part` for a trailing piece under S3's 5 MiB part minimum, which
 * the store keeps aside until the next PATCH). Both stream; memory stays constant.
 */
export function createTusStore(config: Config): DataStore {
  const expirationPeriodInMilliseconds = config.upload.urlTtlSeconds * 1000;
  if (config.storage.driver === 's3') {
    const s3 = config.storage.s3;
    return new S3Store({
      partSize: 8 * 1024 * 1024,
      expirationPeriodInMilliseconds,
      // Tags mark finished uploads for lifecycle rules; versitygw and many S3 clones lack tagging.
      useTags: false,
      s3ClientConfig: {
        bucket: s3.bucket,
        endpoint: s3.endpoint,
        region: s3.region,
        forcePathStyle: s3.forcePathStyle,
        credentials: s3.accessKeyId && s3.secretAccessKey ? { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey } : undefined,
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
        requestHandler: s3RequestHandler(s3),
      },
    });
  }
  return new FileStore({ directory: config.storage.localDir, expirationPeriodInMilliseconds });
}
