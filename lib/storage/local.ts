import { createSecretKey, type KeyObject } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { randomToken } from '../ids';
import { assertSafeKey, ByteRange, ObjectInfo, ObjectStream, PresignedUpload, PresignOptions, Storage, StorageError } from './types';

interface UploadClaims {
  key: string;
  ct: string;
  len: number;
  /** The video's UUID, when the URL belongs to a video's upload (single-use, SPEC §12). */
  vid?: string;
}

export interface AcceptedUpload {
  key: string;
  size: number;
  videoId?: string;
}

/** Asked before any byte is stored and again before the upload lands; throws when closed. */
export type UploadGate = (videoId: string) => Promise<void>;

/**
 * Files under a directory. Upload URLs point at the API (`/storage/upload/<token>`), where
 * `acceptUpload` streams the body to disk; the token (HS256 JWT) binds key, type and length.
 */
export class LocalStorage implements Storage {
  readonly driver = 'local' as const;

  constructor(
    private readonly root: string,
    private readonly publicBaseUrl: string,
    secret: Uint8Array,
  ) {
    this.key = createSecretKey(secret);
  }

  /** Imported once: jose imports raw bytes on every sign and verify otherwise. */
  private readonly key: KeyObject;

  private file(key: string): string {
    assertSafeKey(key);
    return path.join(this.root, key);
  }

  async presignPut(key: string, opts: PresignOptions): Promise<PresignedUpload> {
    assertSafeKey(key);
    const claims: UploadClaims = { key, ct: opts.contentType, len: opts.contentLength };
    if (opts.videoId) claims.vid = opts.videoId;
    const token = await new SignJWT({ ...claims })
      .setProtectedHeader({ alg: 'HS256', typ: 'upload' })
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + opts.expiresIn)
      .sign(this.key);
    return {
      url: `${this.publicBaseUrl}/storage/upload/${token}`,
      method: 'PUT',
      headers: { 'Content-Type': opts.contentType },
      expiresIn: opts.expiresIn,
    };
  }

  /** Verifies an upload token; throws the 403 a bad or expired URL deserves. */
  async verifyUploadToken(token: string): Promise<UploadClaims> {
    try {
      const { payload, protectedHeader } = await jwtVerify(token, this.key, { algorithms: ['HS256'] });
      if (protectedHeader.typ !== 'upload') throw new Error('wrong token type');
      return payload as unknown as UploadClaims;
    } catch (err) {
      const expired = err instanceof joseErrors.JWTExpired;
      throw new StorageError(403, expired ? 'upload_url_expired' : 'upload_url_invalid', expired ? 'The upload URL has expired' : 'The upload URL is not valid');
    }
  }

  /**
   * Verifies an upload token and streams `body` to its key in constant memory. For a video's URL,
   * `gate` is asked before the first byte and again before the file lands, so a PUT that races a
   * completion or a deletion leaves nothing behind.
   */
  async acceptUpload(token: string, contentType: string | undefined, contentLength: number | undefined, body: Readable, gate?: UploadGate): Promise<AcceptedUpload> {
    const claims = await this.verifyUploadToken(token);
    if (claims.vid && gate) await gate(claims.vid);
    const baseType = (contentType ?? '').split(';')[0].trim().toLowerCase();
    if (baseType !== claims.ct.toLowerCase()) {
      throw new StorageError(403, 'content_type_mismatch', `Content-Type must be ${claims.ct}`);
    }
    if (contentLength !== undefined && contentLength !== claims.len) {
      throw new StorageError(403, 'content_length_mismatch', `Content-Length must be ${claims.len}`);
    }
    const dest = this.file(claims.key);
    await fs.mkdir(path.dirname(dest), { recursive: true });
    const tmp = `${dest}.${randomToken(6)}.part`;
    let size = 0;
    const limit = claims.len;
    const counter = new Transform({
      transform(chunk: Buffer, _enc, cb) {
        size += chunk.length;
        if (size > limit) cb(new StorageError(413, 'upload_too_large', `The upload exceeds the declared ${limit} bytes`));
        else cb(null, chunk);
      },
    });
    try {
      await pipeline(body, counter, createWriteStream(tmp));
      if (size !== limit) throw new StorageError(400, 'upload_incomplete', `Received ${size} of ${limit} declared bytes`);
      if (claims.vid && gate) await gate(claims.vid);
      await fs.rename(tmp, dest);
      await fs.writeFile(`${dest}.meta`, JSON.stringify({ contentType: claims.ct }));
    } finally {
      await fs.rm(tmp, { force: true });
    }
    return { key: claims.key, size, videoId: claims.vid };
  }

  async head(key: string): Promise<ObjectInfo | null> {
    const f = this.file(key);
    try {
      const st = await fs.stat(f);
      if (!st.isFile()) return null;
      // Objects are written to a temp file and renamed into place, so size+mtime+inode name one version.
      const etag = `"${st.size.toString(16)}-${Math.floor(st.mtimeMs).toString(16)}-${st.ino.toString(16)}"`;
      return { size: st.size, contentType: await this.contentTypeOf(f), etag };
    } catch {
      return null;
    }
  }

  private async contentTypeOf(f: string): Promise<string | undefined> {
    try {
      return JSON.parse(await fs.readFile(`${f}.meta`, 'utf8')).contentType;
    } catch {
      return undefined;
    }
  }

  async get(key: string, range?: ByteRange): Promise<ObjectStream | null> {
    const info = await this.head(key);
    if (!info) return null;
    const body = createReadStream(this.file(key), range ? { start: range.start, end: range.end } : undefined);
    return { ...info, body };
  }

  async put(key: string, body: Readable | Buffer | string, opts: { contentType?: string } = {}): Promise<void> {
    const dest = this.file(key);
    await fs.mkdir(path.dirname(dest), { recursive: true });
    const tmp = `${dest}.${randomToken(6)}.part`;
    try {
      if (body instanceof Readable) await pipeline(body, createWriteStream(tmp));
      else await fs.writeFile(tmp, body);
      // rename is atomic: readers never see a half-written playlist.
      await fs.rename(tmp, dest);
      if (opts.contentType) await fs.writeFile(`${dest}.meta`, JSON.stringify({ contentType: opts.contentType }));
    } finally {
      await fs.rm(tmp, { force: true });
    }
  }

  async putFile(key: string, filePath: string, opts: { contentType?: string } = {}): Promise<void> {
    // Opened before the stream exists: a missing file rejects here instead of emitting an 'error'
    // nobody listens to yet (which killed the worker: issue 9).
    const handle = await fs.open(filePath, 'r');
    try {
      await this.put(key, handle.createReadStream(), opts);
    } finally {
      await handle.close().catch(() => undefined);
    }
  }

  /** `put` already streams to a temp file and renames it, so a failed body leaves nothing behind. */
  async putStream(key: string, body: Readable, opts: { contentType?: string } = {}): Promise<void> {
    await this.put(key, body, opts);
  }

  async download(key: string, filePath: string): Promise<void> {
    const src = this.file(key);
    await fs.mkdir(path.dirname(filePath), { recursive: true });
    await fs.copyFile(src, filePath).catch((err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') throw new StorageError(404, 'not_found', `no object ${key}`);
      throw err;
    });
  }

  async mediaSource(key: string): Promise<string> {
    return this.file(key);
  }

  async list(prefix: string): Promise<string[]> {
    const dir = this.file(prefix.replace(/\/+$/, ''));
    const out: string[] = [];
    const walk = async (d: string): Promise<void> => {
      let entries;
      try {
        entries = await fs.readdir(d, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) await walk(p);
        else if (!e.name.endsWith('.meta') && !e.name.endsWith('.part')) out.push(path.relative(this.root, p).split(path.sep).join('/'));
      }
    };
    await walk(dir);
    return out.sort();
  }

  async snapshot(from: string, to: string): Promise<boolean> {
    const src = this.file(from);
    const dest = this.file(to);
    await fs.mkdir(path.dirname(dest), { recursive: true });
    try {
      // A PUT replaces the staging file by rename, so the linked inode never changes.
      await fs.link(src, dest);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
      throw err;
    }
    const contentType = await this.contentTypeOf(src);
    if (contentType) await fs.writeFile(`${dest}.meta`, JSON.stringify({ contentType }));
    return true;
  }

  async move(from: string, to: string, opts: { contentType?: string } = {}): Promise<void> {
    const src = this.file(from);
    const dest = this.file(to);
    await fs.mkdir(path.dirname(dest), { recursive: true });
    const contentType = opts.contentType ?? (await this.contentTypeOf(src));
    try {
      // Same filesystem: rename is atomic, and constant time whatever the size.
      await fs.rename(src, dest);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      if (await this.head(to)) return;
      throw new StorageError(404, 'not_found', `no object ${from}`);
    }
    if (contentType) await fs.writeFile(`${dest}.meta`, JSON.stringify({ contentType }));
    await fs.rm(`${src}.meta`, { force: true });
  }

  async deletePrefix(prefix: string): Promise<number> {
    const keys = await this.list(prefix);
    await fs.rm(this.file(prefix.replace(/\/+$/, '')), { recursive: true, force: true });
    return keys.length;
  }

  async check(): Promise<void> {
    await fs.mkdir(this.root, { recursive: true });
    await fs.access(this.root, fs.constants.W_OK);
  }
}
