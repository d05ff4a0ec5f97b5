import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';

const bin = path.resolve(__dirname, '..', '..', 'bin', 'vidhost.cjs');

interface Run {
  code: Promise<number | null>;
  stdout: () => string;
  stderr: () => string;
  kill: (sig: NodeJS.Signals) => void;
}

function vidhost(s: Stack, stateFile: string, args: string[]): Run {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { ...process.env, VIDHOST_API_URL: s.url, VIDHOST_API_KEY: s.ws.fullKey, VIDHOST_STATE_FILE: stateFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err += d));
  return {
    code: new Promise((r) => child.once('exit', (c) => r(c))),
    stdout: () => out,
    stderr: () => err,
    kill: (sig) => child.kill(sig),
  };
}

describe('vidhost upload (CLI) against a real stack', function () {
  let s: Stack;
  let dir: string;
  before(async function () {
    this.timeout(180_000);
    s = await startStack();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-cli-'));
  });

  it('uploads with a progress bar, waits for ready with live progress, and prints the id and URLs (--json)', async function () {
    this.timeout(180_000);
    const clip = await makeClip({ width: 640, height: 360, seconds: 3 });
    const run = vidhost(s, path.join(dir, 'a.json'), ['upload', clip, '--wait', '--json', '--title', 'From the CLI']);
    assert.equal(await run.code, 0, run.stderr());
    const out = JSON.parse(run.stdout());
    assert.equal(out.uploads.length, 1);
    const u = out.uploads[0];
    assert.match(u.video_id, /^vid_[0-9a-f]{32}$/);
    assert.equal(u.status, 'ready');
    assert.ok(u.hls_url.endsWith(`/v/${u.video_id}/master.m3u8`));
    assert.ok(u.embed_url.includes(u.video_id));
    assert.equal(u.bytes, fs.statSync(clip).size);
    assert.equal((await s.get(`/v1/videos/${u.video_id}`)).body.title, 'From the CLI');

    // Human output: the progress bar (bytes, rate, ETA) on stderr, the URLs on stdout.
    const human = vidhost(s, path.join(dir, 'b.json'), ['upload', clip]);
    assert.equal(await human.code, 0, human.stderr());
    assert.match(human.stderr(), /\d+% \| [\d.]+ (B|KiB|MiB) ?\/[\d.]+ (B|KiB|MiB) \| [\d.]+ (B|KiB|MiB)\/s \| ETA/);
    assert.match(human.stdout(), /vid_[0-9a-f]{32}/);
  });

  it('resumes after SIGINT when run again (130, then 0 with resumed_from > 0)', async function () {
    this.timeout(180_000);
    const big = path.join(dir, 'big.mp4');
    fs.writeFileSync(big, randomBytes(48 * 1024 * 1024));
    const state = path.join(dir, 'resume.json');
    const first = vidhost(s, state, ['upload', big, '--chunk-size', String(512 * 1024)]);
    const deadline = Date.now() + 60_000;
    while (!/ ([1-9]\d?)% \|/.test(first.stderr()) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    first.kill('SIGINT');
    assert.equal(await first.code, 130, first.stderr());
    assert.match(first.stderr(), /run the same command again to resume/);
    assert.ok(fs.readFileSync(state, 'utf8').includes('upload/tus/'), 'the upload URL is remembered');

    const second = vidhost(s, state, ['upload', big, '--json', '--chunk-size', String(4 * 1024 * 1024)]);
    assert.equal(await second.code, 0, second.stderr());
    const u = JSON.parse(second.stdout()).uploads[0];
    assert.ok(u.resumed_from > 0 && u.resumed_from < u.bytes, `resumed from ${u.resumed_from}`);
    // The CLI reads the video once the last byte is stored; the workflow may not have recorded the
    // upload yet (a loaded machine), so a `pending_upload` there must move on by itself.
    assert.ok(['pending_upload', 'processing', 'failed'].includes(u.status), u.status);
    const deadline2 = Date.now() + 60_000;
    for (let st = u.status; st === 'pending_upload'; st = (await s.get(`/v1/videos/${u.video_id}`).expect(200)).body.status) {
      assert.ok(Date.now() < deadline2, 'the uploaded video left pending_upload');
      await new Promise((r) => setTimeout(r, 200));
    }
    assert.equal(fs.readFileSync(state, 'utf8').includes('upload/tus/'), false, 'forgotten once done');
  });

  it('exit code 2 and usage for bad arguments', async () => {
    const r = vidhost(s, path.join(dir, 'c.json'), ['upload']);
    assert.equal(await r.code, 2);
    assert.match(r.stderr(), /usage: vidhost upload/);
  });
});
