import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { parseVideoId } from '../../lib/ids';
import { detectBwrap } from '../../lib/media/tools';
import { probe } from '../../lib/media/probe';
import { rlimitsFor, DEFAULT_LIMITS } from '../../lib/media/limits';
import { putFile } from '../support/flow';
import { concatList, corpusDir, dashManifest, dimensionBomb, ffconcatList, hlsPlaylist, hugeDuration, stillImage } from '../support/hostile';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';

type Read = Record<string, any>;

async function upload(stack: Stack, file: string, key: string, filename = path.basename(file)): Promise<string> {
  const size = fs.statSync(file).size;
  const init = await stack.post('/v1/upload/init', { filename, size, content_type: 'video/mp4' }, key);
  assert.equal(init.status, 201, JSON.stringify(init.body));
  const put = await putFile(init.body.upload_url, file, 'video/mp4', init.body.upload_headers);
  assert.equal(put.status, 200, await put.text());
  const done = await stack.post('/v1/upload/complete', { video_id: init.body.video_id }, key);
  assert.equal(done.status, 202, JSON.stringify(done.body));
  return init.body.video_id;
}

async function settle(stack: Stack, id: string, key: string, timeoutMs = 120_000): Promise<Read> {
  const deadline = Date.now() + timeoutMs;
  let last: Read = {};
  while (Date.now() < deadline) {
    const r = await stack.get(`/v1/videos/${id}`, key);
    last = r.body;
    if (last.status === 'failed' || (last.status === 'ready' && last.renditions.every((x: Read) => x.status === 'ready'))) return last;
    await new Promise((res) => setTimeout(res, 300));
  }
  throw new Error(`video ${id} did not settle; last read: ${JSON.stringify(last)}`);
}

/** Every file the attacker's video published (must be none: no other tenant's pixels anywhere). */
async function published(stack: Stack, v: Read): Promise<string[]> {
  const [, ws, vid] = String(v.storage_key).split('/');
  return stack.storage.list(`videos/${ws}/${vid}/`);
}

function loopbackServer(): Promise<{ url: string; hits: string[]; close: () => Promise<void> }> {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    res.writeHead(200, { 'content-type': 'video/mp2t' });
    res.end(Buffer.alloc(188 * 10, 0x47));
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        hits,
        close: () => new Promise((r) => server.close(() => r())),
      }),
    ),
  );
}

describe('hostile media (issue 9, SPEC §12)', function () {
  this.timeout(400_000);
  let stack: Stack;
  let victimKey: string;
  let victim: { original: string; segment: string; segmentDir: string; originalKey: string; width: number };
  let loop: Awaited<ReturnType<typeof loopbackServer>>;
  let dir: string;

  before(async () => {
    dir = corpusDir();
    loop = await loopbackServer();
    stack = await startStack();
    // Another workspace's private video, fully processed: its original and its segments are on disk.
    const other = await stack.newWorkspace();
    victimKey = other.fullKey;
    const clip = await makeClip({ width: 320, height: 240, seconds: 2 });
    const vid = await upload(stack, clip, victimKey, 'private.mp4');
    await stack.patch(`/v1/videos/${vid}`, { visibility: 'private' }, victimKey);
    const v = await settle(stack, vid, victimKey);
    assert.equal(v.status, 'ready', JSON.stringify(v));
    const [, ws, id] = String(v.storage_key).split('/');
    const root = stack.config.storage.localDir;
    const segmentDir = path.join(root, 'videos', ws, id, 'hls', '240p');
    victim = {
      original: path.join(root, v.storage_key),
      originalKey: v.storage_key,
      segmentDir,
      segment: path.join(segmentDir, 'seg_00000.ts'),
      width: 320,
    };
    assert.ok(fs.existsSync(victim.original) && fs.existsSync(victim.segment));
  });

  after(async () => {
    await loop?.close();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('every hostile file ends failed with the right code; nothing published; no request reaches the network', async () => {
    // From the attacker's original (originals/<ws>/<vid>/evil.mp4) to the victim's segment.
    const relative = path.relative(path.join(stack.config.storage.localDir, 'originals', 'w', 'v'), victim.segment);
    const cases: Array<{ name: string; file: string; code: string }> = [
      { name: 'HLS playlist → absolute path of another workspace’s segment', file: hlsPlaylist(dir, 'evil-abs.mp4', victim.segment), code: 'invalid_media' },
      { name: 'HLS playlist → file:// URL of that segment', file: hlsPlaylist(dir, 'evil-fileurl.mp4', `file://${victim.segment}`), code: 'invalid_media' },
      { name: 'HLS playlist → relative path to that segment', file: hlsPlaylist(dir, 'evil-rel.mp4', relative), code: 'invalid_media' },
      { name: 'HLS playlist → another workspace’s original (.mp4; the thumbnail crash)', file: hlsPlaylist(dir, 'evil-orig.mp4', victim.original), code: 'invalid_media' },
      { name: 'HLS playlist → loopback HTTP server', file: hlsPlaylist(dir, 'evil-http.mp4', `${loop.url}/seg.ts`), code: 'invalid_media' },
      { name: 'HLS playlist → image-sequence pattern of segments', file: hlsPlaylist(dir, 'evil-pattern.mp4', path.join(victim.segmentDir, 'seg_%05d.ts')), code: 'invalid_media' },
      { name: 'HLS playlist → data: URI', file: hlsPlaylist(dir, 'evil-data.mp4', `data:video/mp2t;base64,${Buffer.alloc(188, 0x47).toString('base64')}`), code: 'invalid_media' },
      { name: 'ffconcat list → another workspace’s original', file: ffconcatList(dir, 'evil-ffconcat.mp4', victim.original), code: 'invalid_media' },
      { name: 'concat list → another workspace’s segment', file: concatList(dir, 'evil-concat.mp4', victim.segment), code: 'invalid_media' },
      { name: 'DASH manifest → loopback HTTP server', file: dashManifest(dir, 'evil-dash.mp4', `${loop.url}/v.mp4`), code: 'invalid_media' },
      { name: 'still image named as an image-sequence pattern (frame%03d.png)', file: await stillImage(dir, 'frame%03d.png'), code: 'invalid_media' },
      { name: 'decompression bomb: 6 KB AVI declaring 16000x16000', file: await dimensionBomb(dir), code: 'media_too_large' },
      { name: '1 s MP4 declaring 55 h', file: await hugeDuration(dir), code: 'media_too_large' },
    ];
    const ids = await Promise.all(cases.map((c) => upload(stack, c.file, stack.ws.fullKey)));
    const outcomes: string[] = [];
    const wrong: string[] = [];
    for (const [i, c] of cases.entries()) {
      const v = await settle(stack, ids[i], stack.ws.fullKey);
      const files = await published(stack, v);
      outcomes.push(`${c.name}: ${v.status} ${v.error_code} — ${v.error_message}`);
      if (v.status !== 'failed' || v.error_code !== c.code || files.length > 0 || v.width === victim.width) {
        wrong.push(`${c.name}: ${v.status}/${v.error_code} (${v.error_message}); published ${files.join(',')}; width ${v.width}`);
      }
    }
    if (process.env.HOSTILE_REPORT) console.log(outcomes.join('\n'));
    assert.deepEqual(wrong, []);
    assert.deepEqual(loop.hits, [], 'the loopback server was contacted');
    // Refused at once: no retries for a poisoned input.
    const bomb = await stack.temporal.workflow.getHandle(`video-${parseVideoId(String(ids[11]))}`).fetchHistory();
    const attempts = (bomb.events ?? []).filter((e) => e.activityTaskStartedEventAttributes).map((e) => e.activityTaskStartedEventAttributes?.attempt ?? 1);
    assert.ok(attempts.every((a) => a === 1), `retried: ${attempts.join(',')}`);
  });

  it('the worker still serves: a normal upload afterwards reaches ready', async () => {
    const clip = await makeClip({ width: 320, height: 240, seconds: 2 });
    const id = await upload(stack, clip, stack.ws.fullKey, 'fine.mp4');
    const v = await settle(stack, id, stack.ws.fullKey);
    assert.equal(v.status, 'ready', JSON.stringify(v));
  });

  it('with the S3 driver too: playlists and lists are refused, nothing is fetched', async () => {
    const s3 = await startStack({ storage: 's3' });
    const cases = [
      hlsPlaylist(dir, 's3-http.mp4', `${loop.url}/seg.ts`),
      hlsPlaylist(dir, 's3-abs.mp4', victim.segment),
      ffconcatList(dir, 's3-ffconcat.mp4', `${loop.url}/v.mp4`),
    ];
    const ids = await Promise.all(cases.map((f) => upload(s3, f, s3.ws.fullKey)));
    for (const [i, id] of ids.entries()) {
      const v = await settle(s3, id, s3.ws.fullKey);
      if (process.env.HOSTILE_REPORT) console.log(`S3 — ${path.basename(cases[i])}: ${v.status} ${v.error_code} — ${v.error_message}`);
      assert.equal(v.status, 'failed', JSON.stringify(v));
      assert.equal(v.error_code, 'invalid_media');
      assert.deepEqual(await published(s3, v), []);
    }
    assert.deepEqual(loop.hits, [], 'the loopback server was contacted');
  });

  describe('the sandbox is a second wall (format check off, bwrap on)', () => {
    let walled: Stack;

    before(async function () {
      const bwrap = await detectBwrap();
      if (bwrap.mode !== 'bwrap') {
        console.log(`    (skipped: ${bwrap.reason})`);
        this.skip();
      }
      // Same storage directory as the victim's, allow-lists off: only bwrap stands in the way.
      walled = await startStack({ env: { MEDIA_TEST_DISABLE_FORMAT_CHECK: 'true', MEDIA_SANDBOX: 'bwrap', STORAGE_LOCAL_DIR: stack.config.storage.localDir } });
    });

    it('control: without both walls the playlist does read the other workspace’s segment', async () => {
      const file = hlsPlaylist(dir, 'control.mp4', victim.segment);
      const info = await probe(file, { formatCheck: false });
      assert.equal(info.width, victim.width);
      await assert.rejects(
        probe(file, { formatCheck: false, sandbox: { mode: 'bwrap', tool: 'ffprobe', input: file, limits: rlimitsFor(60, DEFAULT_LIMITS) } }),
        (err: Error) => err.name === 'MediaError',
      );
    });

    it('hostile uploads cannot open a file outside their input nor reach the network', async () => {
      const cases = [
        hlsPlaylist(dir, 'wall-abs.mp4', victim.segment),
        hlsPlaylist(dir, 'wall-fileurl.mp4', `file://${victim.segment}`),
        hlsPlaylist(dir, 'wall-orig.mp4', victim.original),
        hlsPlaylist(dir, 'wall-http.mp4', `${loop.url}/seg.ts`),
        ffconcatList(dir, 'wall-ffconcat.mp4', victim.original),
      ];
      const ids = await Promise.all(cases.map((f) => upload(walled, f, walled.ws.fullKey)));
      const wrong: string[] = [];
      for (const [i, id] of ids.entries()) {
        const v = await settle(walled, id, walled.ws.fullKey);
        const files = await published(walled, v);
        if (process.env.HOSTILE_REPORT) console.log(`sandbox only — ${path.basename(cases[i])}: ${v.status} ${v.error_code} — ${v.error_message}`);
        if (v.status !== 'failed' || files.length > 0 || v.width === victim.width) {
          wrong.push(`${path.basename(cases[i])}: ${v.status}/${v.error_code}; width ${v.width}; published ${files.join(',')}`);
        }
      }
      assert.deepEqual(wrong, []);
      assert.deepEqual(loop.hits, [], 'the loopback server was contacted');
    });
  });
});
