import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  CreateBucketCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { assertSafeKey, ByteRange, ObjectInfo, ObjectStream, PresignedUpload, Storage, StorageError } from './types';

export interface S3Options {
  endpoint?: string;
  region: string;
  bucket: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
}

function isNotFound(err: unknown): boolean {
  return err instanceof S3ServiceException && (err.$metadata.httpStatusCode === 404 || err.name === 'NotFound' || err.name === 'NoSuchKey');
}

export class S3Storage implements Storage {
  readonly driver = 's3' as const;
  readonly client: S3Client;
  private readonly bucket: string;

  constructor(opts: S3Options) {
    this.bucket = opts.bucket;
    this.client = new S3Client({
      endpoint: opts.endpoint,
      region: opts.region,
      forcePathStyle: opts.forcePathStyle,
      credentials: opts.accessKeyId && opts.secretAccessKey ? { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey } : undefined,
      // Newer SDKs add CRC32 checksums to PUTs; presigned PUTs from browsers cannot compute them.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async ensureBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
    }
  }

  async presignPut(key: string, opts: { contentType: string; contentLength: number; expiresIn: number }): Promise<PresignedUpload> {
    assertSafeKey(key);
    const cmd = new PutObjectCommand({ Bucket: this.bucket, Key: key, ContentType: opts.contentType, ContentLength: opts.contentLength });
    // Signing both headers makes the storage itself refuse another type or a longer body.
    const url = await getSignedUrl(this.client, cmd, {
      expiresIn: opts.expiresIn,
      signableHeaders: new Set(['content-type', 'content-length']),
    });
    return { url, method: 'PUT', headers: { 'Content-Type': opts.contentType }, expiresIn: opts.expiresIn };
  }

  async head(key: string): Promise<ObjectInfo | null> {
    assertSafeKey(key);
    try {
      const r = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: r.ContentLength ?? 0, contentType: r.ContentType };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async get(key: string, range?: ByteRange): Promise<ObjectStream | null> {
    assertSafeKey(key);
    try {
      const r = await this.client.send(
        new GetObjectCommand({ Bucket: this.bucket, Key: key, Range: range ? `bytes=${range.start}-${range.end}` : undefined }),
      );
      const total = r.ContentRange ? Number(r.ContentRange.split('/')[1]) : (r.ContentLength ?? 0);
      return { size: total, contentType: r.ContentType, body: r.Body as Readable };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async put(key: string, body: Readable | Buffer | string, opts: { contentType?: string; cacheControl?: string } = {}): Promise<void> {
    assertSafeKey(key);
    let payload: Buffer | string | Readable = body;
    let length: number | undefined;
    if (body instanceof Readable) {
      // PutObject needs a length for streams; small bodies (playlists) are buffered, files use putFile.
      const chunks: Buffer[] = [];
      for await (const c of body) chunks.push(Buffer.from(c));
      payload = Buffer.concat(chunks);
    }
    length = typeof payload === 'string' ? Buffer.byteLength(payload) : (payload as Buffer).length;
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: payload, ContentType: opts.contentType, ContentLength: length, CacheControl: opts.cacheControl }),
    );
  }

  async putFile(key: string, filePath: string, opts: { contentType?: string } = {}): Promise<void> {
    assertSafeKey(key);
    const st = await fs.stat(filePath);
    await this.client.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: createReadStream(filePath), ContentLength: st.size, ContentType: opts.contentType }),
    );
  }

  /**
   * Multipart upload: at most `queueSize` parts of 8 MiB are in memory at once, whatever the body's
   * length (8 MiB × 10,000 parts covers the 5 GiB limit). A failed body aborts the upload.
   */
  async putStream(key: string, body: Readable, opts: { contentType?: string } = {}): Promise<void> {
    assertSafeKey(key);
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: body, ContentType: opts.contentType },
      partSize: 8 * 1024 * 1024,
      queueSize: 4,
      leavePartsOnError: false,
    });
    await upload.done();
  }

  async download(key: string, filePath: string): Promise<void> {
    const obj = await this.get(key);
    if (!obj) throw new StorageError(404, 'not_found', `no object ${key}`);
    await fs.mkdir(path.dirname(filePath), { recursive: true });
    await pipeline(obj.body, createWriteStream(filePath));
  }

  async mediaSource(key: string): Promise<string> {
    assertSafeKey(key);
    return getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.bucket, Key: key }), { expiresIn: 6 * 3600 });
  }

  async list(prefix: string): Promise<string[]> {
    const out: string[] = [];
    let token: string | undefined;
    do {
      const r = await this.client.send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }));
      for (const o of r.Contents ?? []) if (o.Key) out.push(o.Key);
      token = r.IsTruncated ? r.NextContinuationToken : undefined;
    } while (token);
    return out.sort();
  }

  async deletePrefix(prefix: string): Promise<number> {
    const keys = await this.list(prefix);
    for (let i = 0; i < keys.length; i += 1000) {
      await this.client.send(
        new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true } }),
      );
    }
    return keys.length;
  }

  async check(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }
}
