import { createReadStream, createWriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import path from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { SignJWT, jwtVerify, errors as joseErrors } from 'jose';
import { randomToken } from '../ids';
import { assertSafeKey, ByteRange, ObjectInfo, ObjectStream, PresignedUpload, Storage, StorageError } from './types';

interface UploadClaims {
  key: string;
  ct: string;
  len: number;
}

/**
 * Files under a directory. Upload URLs point at the API (`/storage/upload/<token>`), where
 * `acceptUpload` streams the body to disk; the token (HS256 JWT) binds key, type and length.
 */
export class LocalStorage implements Storage {
  readonly driver = 'local' as const;

  constructor(
    private readonly root: string,
    private readonly publicBaseUrl: string,
    private readonly secret: Uint8Array,
  ) {}

  private file(key: string): string {
    assertSafeKey(key);
    return path.join(this.root, key);
  }

  async presignPut(key: string, opts: { contentType: string; contentLength: number; expiresIn: number }): Promise<PresignedUpload> {
    assertSafeKey(key);
    const token = await new SignJWT({ key, ct: opts.contentType, len: opts.contentLength } satisfies UploadClaims)
      .setProtectedHeader({ alg: 'HS256', typ: 'upload' })
      .setIssuedAt()
      .setExpirationTime(Math.floor(Date.now() / 1000) + opts.expiresIn)
      .sign(this.secret);
    return {
      url: `${this.publicBaseUrl}/storage/upload/${token}`,
      method: 'PUT',
      headers: { 'Content-Type': opts.contentType },
      expiresIn: opts.expiresIn,
    };
  }

  /** Verifies an upload token and streams `body` to its key in constant memory. */
  async acceptUpload(token: string, contentType: string | undefined, contentLength: number | undefined, body: Readable): Promise<{ key: string; size: number }> {
    let claims: UploadClaims;
    try {
      const { payload, protectedHeader } = await jwtVerify(token, this.secret, { algorithms: ['HS256'] });
      if (protectedHeader.typ !== 'upload') throw new Error('wrong token type');
      claims = payload as unknown as UploadClaims;
    } catch (err) {
      const expired = err instanceof joseErrors.JWTExpired;
      throw new StorageError(403, expired ? 'upload_url_expired' : 'upload_url_invalid', expired ? 'The upload URL has expired' : 'The upload URL is not valid');
    }
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
      await fs.rename(tmp, dest);
      await fs.writeFile(`${dest}.meta`, JSON.stringify({ contentType: claims.ct }));
    } finally {
      await fs.rm(tmp, { force: true });
    }
    return { key: claims.key, size };
  }

  async head(key: string): Promise<ObjectInfo | null> {
    const f = this.file(key);
    try {
      const st = await fs.stat(f);
      if (!st.isFile()) return null;
      return { size: st.size, contentType: await this.contentTypeOf(f) };
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
    await this.put(key, createReadStream(filePath), opts);
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
