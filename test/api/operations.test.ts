import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import { parse } from 'yaml';
import { newVideoUuid } from '../../lib/ids';
import { startStack, type Stack } from '../support/stack';

const run = promisify(execFile);
const root = path.resolve(__dirname, '..', '..');

describe('admin CLI', function () {
  this.timeout(120_000);
  let s: Stack;
  before(async () => {
    s = await startStack({ workers: [] });
  });
  const admin = (...args: string[]) =>
    run(process.execPath, ['--import', 'tsx', path.join(root, 'bin', 'admin.ts'), ...args], { cwd: root, env: { ...process.env, DATABASE_URL: s.env.DATABASE_URL } });

  it('creates a workspace with a plan and keys that work, lists them, and revokes one', async () => {
    const ws = JSON.parse((await admin('workspace', 'create', 'cli-test', '--plan', 'pro')).stdout);
    assert.match(ws.id, /^ws_[0-9a-f]{32}$/);
    assert.equal(ws.plan, 'pro');
    const created = (await admin('key', 'create', ws.id, '--access', 'read', '--name', 'ci')).stdout;
    const keyId = /^(key_[0-9a-f]{32})\tread/m.exec(created)![1];
    const secret = /secret \(shown once\): (vhk_\S+)/.exec(created)![1];
    assert.equal((await request(s.url).get('/v1/videos').set('X-API-Key', secret)).status, 200);
    const listed = (await admin('key', 'list', ws.id)).stdout;
    assert.match(listed, new RegExp(`${keyId}\\tread\\t.*active\\tci`));
    assert.doesNotMatch(listed, new RegExp(secret), 'the secret is never listed');
    assert.match((await admin('key', 'revoke', keyId)).stdout, /revoked/);
    // The CLI is another process: the API's key cache drops the key when the trigger's NOTIFY
    // lands (lib/keyCache.ts, milliseconds; later on a loaded machine), not before.
    const deadline = Date.now() + 5000;
    let status = 0;
    while ((status = (await request(s.url).get('/v1/videos').set('X-API-Key', secret)).status) !== 401 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    assert.equal(status, 401, 'the revoked key still worked 5 s after the revocation');
  });

  it('refuses an unknown plan and prints usage for nonsense', async () => {
    await assert.rejects(admin('workspace', 'create', 'x', '--plan', 'platinum'), /plan must be one of/);
    await assert.rejects(admin('frobnicate'), (err: { stdout: string; code: number }) => err.code === 2 && /usage: admin/.test(err.stdout));
  });
});

describe('upload init: quotas and hostile filenames', function () {
  this.timeout(120_000);
  let s: Stack;
  before(async () => {
    s = await startStack({ workers: [] });
  });

  it("403 storage_quota_exceeded past the plan's storage; a bigger plan has room", async () => {
    const free = await s.newWorkspace('free');
    // 4.5 GiB already stored in this Free (5 GiB) workspace.
    await s.db('videos').insert({
      id: newVideoUuid(),
      workspace_id: free.id,
      title: 'big',
      status: 'ready',
      filename: 'big.mp4',
      storage_key: 'originals/x/big.mp4',
      size_bytes: 4.5 * 1024 ** 3,
    });
    const body = { filename: 'more.mp4', size: 1024 ** 3, content_type: 'video/mp4' };
    const refused = await s.post('/v1/upload/init', body, free.fullKey);
    assert.equal(refused.status, 403);
    assert.equal(refused.body.error.code, 'storage_quota_exceeded');
    const pro = await s.newWorkspace('pro');
    assert.equal((await s.post('/v1/upload/init', body, pro.fullKey)).status, 201);
  });

  it('the quota counter (workspaces.storage_used_bytes) follows every change a video row goes through', async () => {
    const w = await s.newWorkspace('free');
    const used = async () => Number((await s.db('workspaces').where({ id: w.id }).first('storage_used_bytes')).storage_used_bytes);
    const sum = async () =>
      Number(
        (
          await s.db('videos').where({ workspace_id: w.id }).whereNull('deleted_at')
            .whereRaw(`not (status = 'failed' and coalesce(error_code, '') = 'upload_expired')`).sum({ n: 'size_bytes' })
        )[0].n ?? 0,
      );
    const row = (size: number) => ({ id: newVideoUuid(), workspace_id: w.id, title: 't', status: 'pending_upload', filename: 't.mp4', storage_key: 'k', size_bytes: size });
    const a = row(1000);
    const b = row(500);
    await s.db('videos').insert([a, b]);
    assert.equal(await used(), 1500);
    await s.db('videos').where({ id: a.id }).update({ size_bytes: 1200, status: 'ready' });
    assert.equal(await used(), 1700);
    await s.db('videos').where({ id: b.id }).update({ status: 'failed', error_code: 'upload_expired' });
    assert.equal(await used(), 1200, 'an expired upload stops counting');
    await s.db('videos').where({ id: a.id }).update({ deleted_at: new Date() });
    assert.equal(await used(), 0, 'a deleted video stops counting');
    await s.db('videos').where({ id: a.id }).delete();
    await s.db('videos').where({ id: b.id }).delete();
    assert.equal(await used(), 0, 'purging rows that no longer count changes nothing');
    const c = row(300);
    await s.db('videos').insert(c);
    await s.db('videos').where({ id: c.id }).delete();
    assert.equal(await used(), await sum());
    // Through the API: init reserves the declared size.
    assert.equal((await s.post('/v1/upload/init', { filename: 'x.mp4', size: 4321, content_type: 'video/mp4' }, w.fullKey)).status, 201);
    assert.equal(await used(), 4321);
    assert.equal(await used(), await sum());
  });

  it('400 beyond 5 GiB and for a non-video content type', async () => {
    const big = await s.post('/v1/upload/init', { filename: 'a.mp4', size: 5 * 1024 ** 3 + 1, content_type: 'video/mp4' });
    assert.equal(big.status, 400);
    assert.equal(big.body.error.details[0].field, 'size');
    const html = await s.post('/upload/presigned', { workspace_id: s.ws.id, filename: 'a.html', file_size: 10, content_type: 'text/html' });
    assert.equal(html.status, 400);
    assert.equal(html.body.success, false);
  });

  it('path traversal and control characters never reach the storage key', async () => {
    // A NUL is refused outright (400 invalid_request, issue 22); other control characters are cleaned.
    const nul = await s.post('/v1/upload/init', { filename: 'evil\u0000name.mp4', size: 10, content_type: 'video/mp4' });
    assert.deepEqual([nul.status, nul.body.error.code], [400, 'invalid_request']);
    for (const filename of ['../../etc/passwd', '..\\..\\boot.ini', 'a/../../b.mp4', 'evil\u0001name\n.mp4', '..']) {
      const r = await s.post('/v1/upload/init', { filename, size: 10, content_type: 'video/mp4' });
      assert.equal(r.status, 201, filename);
      const prefix = `originals/${s.ws.id}/`;
      assert.ok(r.body.storage_key.startsWith(prefix), r.body.storage_key);
      const rest = r.body.storage_key.slice(prefix.length).split('/');
      assert.equal(rest.length, 2, r.body.storage_key);
      assert.ok(!rest[1].includes('..') && !/[\0-\x1f]/.test(rest[1]) && rest[1].length > 0, rest[1]);
    }
  });

  it("403 workspace_mismatch for another workspace's id in Form B", async () => {
    const other = await s.newWorkspace();
    const r = await s.post('/upload/presigned', { workspace_id: other.id, filename: 'a.mp4', file_size: 10, content_type: 'video/mp4' });
    assert.equal(r.status, 403);
    assert.deepEqual([r.body.success, r.body.error.code], [false, 'workspace_mismatch']);
  });
});

describe('docker-compose.yml', () => {
  it('is accepted by docker-compose config', async function () {
    this.timeout(60_000);
    const { stdout } = await run('docker-compose', ['-f', path.join(root, 'docker-compose.yml'), 'config', '--services'], { cwd: root });
    const services = stdout.trim().split('\n').sort();
    for (const s of ['api', 'worker', 'postgres', 'temporal', 'migrate', 'temporal-schema', 'redis']) assert.ok(services.includes(s), `${s} in ${services}`);
    // Current Temporal images (auto-setup is deprecated upstream), browsers' S3 host, metrics ports.
    const full = (await run('docker-compose', ['-f', path.join(root, 'docker-compose.yml'), 'config'], { cwd: root })).stdout;
    assert.doesNotMatch(full, /temporalio\/auto-setup/);
    assert.match(full, /image: temporalio\/server:/);
    assert.match(full, /S3_PUBLIC_ENDPOINT: http:\/\/localhost:9000/);
    // Metrics ports published on the host's loopback only (docker-compose v1 and v2 spellings).
    for (const p of [9463, 9464]) assert.match(full, new RegExp(`127\\.0\\.0\\.1:${p}:${p}|host_ip: 127\\.0\\.0\\.1\\n(?:\\s+\\w+: .*\\n){0,3}\\s+published: "?${p}"?`), `metrics port ${p}`);
  });

  it('runs live ingest: the hooks and vidhost-edge (the only ingest: RTMP, SRT, WebRTC) on their network, the ports published', async function () {
    this.timeout(60_000);
    const { stdout } = await run('docker-compose', ['-f', path.join(root, 'docker-compose.yml'), 'config'], { cwd: root });
    const doc = parse(stdout) as { services: Record<string, { command?: string[]; network_mode?: string; ports?: Array<string | { target: number; published: number | string; protocol?: string }>; environment?: Record<string, string> }> };
    const media = doc.services['live-hooks'];
    const edge = doc.services.edge;
    assert.deepEqual(media.command, ['node', 'dist/workers/live-hooks.js']);
    assert.deepEqual(edge.command, ['vidhost-edge']);
    assert.equal(edge.network_mode, 'service:live-hooks', 'the edge reaches the key check and hooks on loopback');
    const ports = (media.ports ?? []).map((p) => (typeof p === 'string' ? p : `${p.published}:${p.target}${p.protocol && p.protocol !== 'tcp' ? `/${p.protocol}` : ''}`));
    for (const p of ['1935:1935', '8890:8890/udp', '8189:8189/udp']) assert.ok(ports.includes(p), `${p} in ${ports}`);
    assert.equal(doc.services.worker.environment?.WORKER_ROLES, 'workflow,transcode,live');
    assert.equal(doc.services.worker.environment?.LIVE_MEDIA_INTERNAL_URL, undefined, 'workers read the feed from the edge API');
    assert.equal(doc.services.api.environment?.LIVE_EDGE_INTERNAL_URL, 'http://live-hooks:8889');
    // The edge's API (8889) is on the compose network only: no service publishes it on the host.
    for (const [name, svc] of Object.entries(doc.services)) {
      const published = (svc.ports ?? []).map((p) => (typeof p === 'string' ? p : `${p.published}:${p.target}`));
      assert.ok(!published.some((p) => /(^|:)8889(:|\/|$)/.test(p)), `${name} publishes the edge API: ${published}`);
    }
    // The edge and its callers derive one credential (LIVE_EDGE_SECRET, else from UPLOAD_SIGNING_SECRET).
    for (const k of ['LIVE_EDGE_SECRET', 'UPLOAD_SIGNING_SECRET']) {
      assert.equal(edge.environment?.[k], doc.services.api.environment?.[k], k);
      assert.equal(edge.environment?.[k], doc.services.worker.environment?.[k], k);
    }
    assert.ok(edge.environment?.UPLOAD_SIGNING_SECRET);
  });
});
