import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutBucketCorsCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  UploadPartCopyCommand,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { S3_BOUNDS_DEFAULT } from '../config/storage';
import { assertSafeKey, ByteRange, ObjectInfo, ObjectStream, PresignedUpload, PresignOptions, Storage, StorageError } from './types';

/** CopyObject's limit; bigger objects are copied part by part (UploadPartCopy). */
const MAX_SINGLE_COPY = 5 * 1024 ** 3;
const COPY_PART = 512 * 1024 ** 2;

export interface S3Options {
  endpoint?: string;
  /** The endpoint browsers reach, when it differs from the server's (`S3_PUBLIC_ENDPOINT`). */
  publicEndpoint?: string;
  region: string;
  bucket: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
  /** Connecting to the endpoint, in ms (default 5 s). */
  connectTimeoutMs?: number;
  /**
   * A request whose socket is silent this long fails (default 60 s): a server that accepts and never
   * answers, or a body that stops half way. Silence, not duration: a long transfer that keeps moving
   * is never cut.
   */
  idleTimeoutMs?: number;
}

/** The S3 client's connection bounds (the API's storage client and tus's S3 store share them). */
export function s3RequestHandler(opts: Pick<S3Options, 'connectTimeoutMs' | 'idleTimeoutMs'>): { connectionTimeout: number; socketTimeout: number } {
  return { connectionTimeout: opts.connectTimeoutMs ?? S3_BOUNDS_DEFAULT.connectMs, socketTimeout: opts.idleTimeoutMs ?? S3_BOUNDS_DEFAULT.idleMs };
}

function isNotFound(err: unknown): boolean {
  return err instanceof S3ServiceException && (err.$metadata.httpStatusCode === 404 || err.name === 'NotFound' || err.name === 'NoSuchKey');
}

export class S3Storage implements Storage {
  readonly driver = 's3' as const;
  readonly client: S3Client;
  private readonly presigner: S3Client;
  private readonly bucket: string;

  constructor(opts: S3Options) {
    this.bucket = opts.bucket;
    this.client = this.makeClient(opts, opts.endpoint);
    // Signing happens offline; a client on the public endpoint puts browsers' host in the URL
    // (and in the signature), e.g. http://localhost:9000 while the API talks to http://minio:9000.
    this.presigner = opts.publicEndpoint ? this.makeClient(opts, opts.publicEndpoint) : this.client;
  }

  private makeClient(opts: S3Options, endpoint: string | undefined): S3Client {
    return new S3Client({
      endpoint,
      region: opts.region,
      forcePathStyle: opts.forcePathStyle,
      credentials: opts.accessKeyId && opts.secretAccessKey ? { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey } : undefined,
      // Newer SDKs add CRC32 checksums to PUTs; presigned PUTs from browsers cannot compute them.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      requestHandler: s3RequestHandler(opts),
    });
  }

  async ensureBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (err) {
      if (!isNotFound(err)) throw err;
      await this.client.send(new CreateBucketCommand({ Bucket: this.bucket }));
    }
    await this.ensureCors();
  }

  /**
   * Browsers PUT straight to presigned URLs (SPEC §13): the bucket answers their preflight. Any
   * origin, since the signed URL is the credential; a per-video cors_origin cannot be expressed
   * in bucket rules (docs/uploads.md shows stricter rules for a production bucket).
   */
  async ensureCors(): Promise<void> {
    await this.client.send(
      new PutBucketCorsCommand({
        Bucket: this.bucket,
        CORSConfiguration: {
          CORSRules: [
            {
              AllowedOrigins: ['*'],
              AllowedMethods: ['PUT', 'GET', 'HEAD'],
              AllowedHeaders: ['Content-Type', 'Content-Length', 'Content-MD5', 'x-amz-*'],
              ExposeHeaders: ['ETag'],
              MaxAgeSeconds: 600,
            },
          ],
        },
      }),
    );
  }

  async presignPut(key: string, opts: PresignOptions): Promise<PresignedUpload> {
    assertSafeKey(key);
    const cmd = new PutObjectCommand({ Bucket: this.bucket, Key: key, ContentType: opts.contentType, ContentLength: opts.contentLength });
    // Signing both headers makes the storage itself refuse another type or a longer body.
    const url = await getSignedUrl(this.presigner, cmd, {
      expiresIn: opts.expiresIn,
      signableHeaders: new Set(['content-type', 'content-length']),
    });
    return { url, method: 'PUT', headers: { 'Content-Type': opts.contentType }, expiresIn: opts.expiresIn };
  }

  async head(key: string): Promise<ObjectInfo | null> {
    assertSafeKey(key);
    try {
      const r = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return { size: r.ContentLength ?? 0, contentType: r.ContentType, etag: r.ETag };
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
      return { size: total, contentType: r.ContentType, etag: r.ETag, body: r.Body as Readable };
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

  /** Server-side copy, then delete: no byte goes through this process. */
  async move(from: string, to: string, opts: { contentType?: string; onProgress?: () => void } = {}): Promise<void> {
    if (!(await this.copy(from, to, opts))) {
      if (await this.head(to)) return;
      throw new StorageError(404, 'not_found', `no object ${from}`);
    }
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: from }));
  }

  /** S3 copies are atomic: the copy is the source as it was when the copy began. */
  async snapshot(from: string, to: string): Promise<boolean> {
    return this.copy(from, to);
  }

  private async copy(from: string, to: string, opts: { contentType?: string; onProgress?: () => void } = {}): Promise<boolean> {
    assertSafeKey(from);
    assertSafeKey(to);
    const src = await this.head(from);
    if (!src) return false;
    const CopySource = `${this.bucket}/${from.split('/').map(encodeURIComponent).join('/')}`;
    const ContentType = opts.contentType ?? src.contentType;
    if (src.size <= MAX_SINGLE_COPY) {
      await this.client.send(
        new CopyObjectCommand({ Bucket: this.bucket, Key: to, CopySource, ContentType, MetadataDirective: ContentType ? 'REPLACE' : 'COPY' }),
      );
    } else {
      await this.copyInParts(CopySource, to, src.size, ContentType, opts.onProgress);
    }
    return true;
  }

  private async copyInParts(CopySource: string, to: string, size: number, ContentType: string | undefined, onProgress?: () => void): Promise<void> {
    const { UploadId } = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: to, ContentType }));
    try {
      const parts: Array<{ ETag?: string; PartNumber: number }> = [];
      for (let start = 0, n = 1; start < size; start += COPY_PART, n++) {
        const end = Math.min(size, start + COPY_PART) - 1;
        const r = await this.client.send(
          new UploadPartCopyCommand({ Bucket: this.bucket, Key: to, UploadId, PartNumber: n, CopySource, CopySourceRange: `bytes=${start}-${end}` }),
        );
        parts.push({ ETag: r.CopyPartResult?.ETag, PartNumber: n });
        onProgress?.();
      }
      await this.client.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: to, UploadId, MultipartUpload: { Parts: parts } }));
    } catch (err) {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: to, UploadId })).catch(() => undefined);
      throw err;
    }
  }

  async deletePrefix(prefix: string): Promise<number> {
    await this.abortMultipartUploads(prefix);
    const keys = await this.list(prefix);
    for (let i = 0; i < keys.length; i += 1000) {
      await this.client.send(
        new DeleteObjectsCommand({ Bucket: this.bucket, Delete: { Objects: keys.slice(i, i + 1000).map((Key) => ({ Key })), Quiet: true } }),
      );
    }
    return keys.length;
  }

  /** Unfinished multipart uploads (a tus upload in progress) hold parts that no listing shows. */
  private async abortMultipartUploads(prefix: string): Promise<void> {
    let KeyMarker: string | undefined;
    let UploadIdMarker: string | undefined;
    do {
      const r = await this.client.send(new ListMultipartUploadsCommand({ Bucket: this.bucket, Prefix: prefix, KeyMarker, UploadIdMarker }));
      for (const u of r.Uploads ?? []) {
        if (!u.Key || !u.UploadId) continue;
        await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: u.Key, UploadId: u.UploadId })).catch((err) => {
          if (!isNotFound(err) && !(err instanceof S3ServiceException && err.name === 'NoSuchUpload')) throw err;
        });
      }
      KeyMarker = r.IsTruncated ? r.NextKeyMarker : undefined;
      UploadIdMarker = r.IsTruncated ? r.NextUploadIdMarker : undefined;
    } while (KeyMarker);
  }

  async check(): Promise<void> {
    await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
  }
}
