import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig } from '../../lib/config';
import { ContractChecker } from '../support/contract';

// The checker that test/support/stack.ts runs on every answer: proof that it can fail.
const checker = ContractChecker.forConfig(loadConfig({ DATA_DIR: '/tmp/vidhost-contract-unit' }));
const json = { 'content-type': 'application/json; charset=utf-8' };
const answer = (status: number, body: unknown, headers: Record<string, string> = json) => ({ status, headers, body, text: JSON.stringify(body) });
const error = { error: { code: 'not_found', message: 'Video not found' }, request_id: 'req_x' };

describe('contract checker', () => {
  it('accepts documented answers at every prefix, and the Form B envelope', () => {
    for (const prefix of ['', '/v1', '/api/v1']) checker.check('GET', `${prefix}/videos/vid_1`, answer(404, error));
    checker.check('POST', '/upload/from-url', answer(400, { success: false, ...error }));
    checker.check('GET', '/folders', answer(200, { data: [] }));
  });

  it('rejects a body that is not the documented shape', () => {
    assert.throws(() => checker.check('GET', '/v1/folders', answer(200, { data: [{ id: 'fld_1' }] })), /does not match.*\n.*name/);
    assert.throws(() => checker.check('POST', '/upload/from-url', answer(400, error)), /does not match/);
  });

  it('rejects an undocumented status, media type or endpoint', () => {
    assert.throws(() => checker.check('GET', '/v1/folders', answer(418, error)), /status 418 is not documented/);
    assert.throws(() => checker.check('GET', '/v1/folders', answer(200, 'x', { 'content-type': 'text/plain' })), /Content-Type text\/plain/);
    assert.throws(() => checker.check('GET', '/v1/nowhere', answer(200, {})), /not in the OpenAPI document/);
    checker.check('GET', '/v1/nowhere', answer(404, error));
  });

  it('matches literal paths before templated ones (CDN files)', () => {
    checker.check('GET', '/cdn/v/vid_1/720p/index.m3u8', answer(200, '', { 'content-type': 'application/vnd.apple.mpegurl' }));
    checker.check('GET', '/cdn/v/vid_1/720p/seg_00001.ts', answer(206, '', { 'content-type': 'video/mp2t' }));
  });

  it('knows the SPEC §14 CDN files, their media types and their query errors', () => {
    const bad = { error: { code: 'invalid_parameters', message: 'The query string has invalid parameters', details: [{ field: 'width', message: 'too big' }] }, request_id: 'req_x' };
    for (const [file, type] of [['thumbnail.webp', 'image/webp'], ['thumbnail.png', 'image/png'], ['animated.gif', 'image/gif'], ['storyboard.vtt', 'text/vtt'], ['storyboard.jpg', 'image/jpeg'], ['download/audio.m4a', 'audio/mp4'], ['captions/pt-BR.vtt', 'text/vtt'], ['subs/en/index.m3u8', 'application/vnd.apple.mpegurl']]) {
      checker.check('GET', `/cdn/v/vid_1/${file}`, answer(200, '', { 'content-type': type }));
    }
    checker.check('GET', '/cdn/v/vid_1/thumbnail.jpg?width=9999', answer(400, bad));
    assert.throws(() => checker.check('GET', '/cdn/v/vid_1/animated.gif', answer(200, '', { 'content-type': 'image/png' })), /Content-Type image\/png/);
    assert.throws(() => checker.check('GET', '/cdn/v/vid_1/download/audio.m4a', answer(400, bad)), /status 400 is not documented/);
  });

  it('knows the tus upload resource and caption uploads', () => {
    checker.check('PATCH', '/upload/tus/tok', answer(204, ''));
    checker.check('PATCH', '/upload/tus/tok', answer(409, 'Upload-Offset conflict', { 'content-type': 'text/plain' }));
    checker.check('POST', '/upload/tus', answer(412, { error: { code: 'tus_version', message: 'Tus-Resumable: 1.0.0 is required' }, request_id: 'req_x' }));
    checker.check('GET', '/upload/tus/tok', answer(405, { error: { code: 'method_not_allowed', message: 'Upload URLs take HEAD, PATCH and DELETE (tus 1.0.0)' }, request_id: 'req_x' }));
    const track = { language: 'en', label: 'English', default: true, status: 'ready', url: 'http://cdn/v/vid_1/captions/en.vtt', error: null, cues: 3 };
    checker.check('PUT', '/v1/videos/vid_1/captions/en', answer(201, track));
    assert.throws(() => checker.check('PUT', '/v1/videos/vid_1/captions/en', answer(201, { ...track, default: 'yes' })), /does not match/);
  });

  it('is shared by stacks that differ only in what the document does not read (the config fields it does read are the cache key)', () => {
    // ContractChecker.forConfig keys its cache on these; a document that starts reading another
    // config field must add it there, or stacks that differ in it would share a wrong checker.
    const used = new Set<string>();
    const walk = (dir: string): void => {
      for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
        const p = path.join(dir, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith('.ts')) for (const m of fs.readFileSync(p, 'utf8').matchAll(/\bd\.config\.([\w.]+)/g)) used.add(m[1]);
      }
    };
    walk(path.join(__dirname, '..', '..', 'api'));
    assert.deepEqual([...used].sort(), ['cdnUrl', 'playerUrl', 'publicBaseUrl', 'upload.maxBytes', 'upload.maxResumableBytes']);
    const a = ContractChecker.forConfig(loadConfig({ DATA_DIR: '/tmp/x', PUBLIC_BASE_URL: 'http://127.0.0.1:1111' }));
    assert.equal(ContractChecker.forConfig(loadConfig({ DATA_DIR: '/tmp/y', PUBLIC_BASE_URL: 'http://127.0.0.1:2222' })), a);
    assert.notEqual(ContractChecker.forConfig(loadConfig({ DATA_DIR: '/tmp/x', PUBLIC_BASE_URL: 'http://127.0.0.1:1111', MAX_UPLOAD_BYTES: '12345678' })), a);
  });
});
