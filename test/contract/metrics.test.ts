import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import request from 'supertest';
import { spawnApi, spawnWorker } from '../support/child';
import { parseVideoId } from '../../lib/ids';
import { until, uploadFormA, waitForVideo } from '../support/flow';
import { makeClip } from '../support/media';
import { startStack, type Stack } from '../support/stack';

type Samples = Map<string, number>;

/** Prometheus text format → `name{labels}` → value (labels as printed, in prom-client's order). */
function parse(text: string): Samples {
  const out: Samples = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*(?:\{.*\})?)\s+(\S+)$/.exec(line);
    assert.ok(m, `not a sample line: ${line}`);
    out.set(m[1], Number(m[2]));
  }
  return out;
}

const sum = (s: Samples, name: string, labels: Record<string, string> = {}) =>
  [...s.entries()]
    .filter(([k]) => k === name || k.startsWith(`${name}{`))
    .filter(([k]) => Object.entries(labels).every(([l, v]) => k.includes(`${l}="${v}"`)))
    .reduce((acc, [, v]) => acc + v, 0);

const freePort = () =>
  new Promise<number>((resolve) => {
    const srv = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });

/** The port's listening sockets (/proc/net/tcp and tcp6) are all on 127.0.0.1, none on a wildcard address. */
function assertLoopbackOnly(port: number): void {
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  const listeners = ['/proc/net/tcp', '/proc/net/tcp6']
    .flatMap((f) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8').split('\n') : []))
    .map((l) => l.trim().split(/\s+/))
    .filter((f) => f[1]?.endsWith(`:${hex}`) && f[3] === '0A')
    .map((f) => f[1]);
  assert.ok(listeners.length > 0, `something listens on ${port}`);
  assert.deepEqual(listeners.filter((a) => a !== `0100007F:${hex}`), [], `only 127.0.0.1 listens on ${port}`);
}

describe('metrics (their own loopback port, never the public API)', function () {
  this.timeout(240_000);
  let s: Stack;

  before(async () => {
    s = await startStack();
  });

  const scrape = async () => {
    const r = await fetch(s.metricsUrl);
    assert.equal(r.status, 200);
    assert.match(r.headers.get('content-type') ?? '', /^text\/plain/);
    return parse(await r.text());
  };

  it('the public API port does not serve /metrics (counts across every workspace), nor does its document list it', async () => {
    // Key-less: 401 like any unknown path (it was 200 with every workspace's counts).
    const r = await request(s.url).get('/metrics');
    assert.ok([401, 404].includes(r.status), String(r.status));
    assert.doesNotMatch(r.text, /vidhost_/);
    const doc = await request(s.url).get('/openapi.json').expect(200);
    assert.equal(doc.body.paths['/metrics'], undefined);
  });

  it('an API process serves them on API_METRICS_PORT, bound to 127.0.0.1 unless told, and behind METRICS_TOKEN when set', async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    const token = 'metrics-token-0123456789';
    const api = await spawnApi({ ...s.env, PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, API_METRICS_PORT: String(metricsPort), METRICS_TOKEN: token });
    try {
      assert.ok([401, 404].includes((await fetch(`${api.url}/metrics`)).status));
      const url = `http://127.0.0.1:${metricsPort}/metrics`;
      assert.equal((await fetch(url)).status, 401);
      assert.equal((await fetch(url, { headers: { Authorization: 'Bearer wrong-token-0123456789' } })).status, 401);
      const ok = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
      assert.equal(ok.status, 200);
      assert.ok(sum(parse(await ok.text()), 'vidhost_videos') >= 0);
      assertLoopbackOnly(metricsPort);
    } finally {
      await api.kill('SIGTERM');
    }
  });

  it('moves the request, upload, video and transcode metrics when a video is uploaded', async () => {
    const before = await scrape();
    const clip = await makeClip({ width: 320, height: 180, seconds: 2 });
    const { id } = await uploadFormA(s, clip);
    // Every rendition, not just ready: a passthrough makes the video playable before any encode ends.
    await waitForVideo(s, id, (v) => v.status === 'ready' && (v.renditions as Array<{ status: string }>).every((r) => r.status === 'ready'));
    const after = await scrape();

    assert.equal(sum(after, 'vidhost_uploads_created_total', { form: 'init' }) - sum(before, 'vidhost_uploads_created_total', { form: 'init' }), 1);
    assert.equal(sum(after, 'vidhost_uploads_completed_total') - sum(before, 'vidhost_uploads_completed_total'), 1);
    const inits = (x: Samples) => sum(x, 'vidhost_http_request_duration_seconds_count', { route: '/upload/init', status: '201' });
    assert.equal(inits(after) - inits(before), 1);
    // Route templates, never raw paths: no label carries a video id.
    assert.ok(sum(after, 'vidhost_http_request_duration_seconds_count', { route: '/videos/:id', status: '200' }) >= 1);
    assert.deepEqual([...after.keys()].filter((k) => k.includes('vid_')), []);
    assert.ok(sum(after, 'vidhost_videos', { status: 'ready' }) >= 1);
    assert.ok(sum(after, 'vidhost_transcode_seconds_count') > sum(before, 'vidhost_transcode_seconds_count'));
    assert.ok(sum(after, 'vidhost_transcode_speed_ratio_count', { rung: '180p' }) >= 1, [...after.keys()].filter((k) => k.includes('speed')).join('\n'));
  });

  it("reports the start outbox's backlog, its retries and its oldest start's age", async () => {
    const empty = await scrape();
    assert.equal(sum(empty, 'vidhost_workflow_starts_pending'), 0);
    assert.equal(sum(empty, 'vidhost_workflow_start_oldest_seconds'), 0);
    // A start waiting a minute after two failures, as if Temporal had refused it.
    const init = await s.post('/v1/upload/init', { filename: 'a.mp4', size: 1000, content_type: 'video/mp4' }).expect(201);
    const uuid = parseVideoId(init.body.video_id)!;
    const outboxRow = () => s.db('video_workflow_starts').where({ video_id: uuid }).first();
    await until(async () => !(await outboxRow()), 10_000, "init's own start made");
    const target = `${s.config.temporal.address}/${s.config.temporal.namespace}`;
    const row = { video_id: uuid, target, start: JSON.stringify({}), attempts: 2, last_error: 'refused', created_at: new Date(Date.now() - 60_000), next_attempt_at: new Date(Date.now() + 600_000) };
    await s.db('video_workflow_starts').insert(row);
    try {
      const after = await scrape();
      assert.equal(sum(after, 'vidhost_workflow_starts_pending'), 1);
      assert.equal(sum(after, 'vidhost_workflow_starts_retrying'), 1);
      const oldest = sum(after, 'vidhost_workflow_start_oldest_seconds');
      assert.ok(oldest >= 60 && oldest < 120, `oldest ${oldest} s`);
    } finally {
      await s.db('video_workflow_starts').where({ video_id: uuid }).delete();
    }
  });

  it('a worker process serves its own metrics and the Temporal SDK\'s on METRICS_PORT', async () => {
    const [port, temporalPort] = [await freePort(), await freePort()];
    // scripts/test bundles the workflows once for the run (ops/test.ts); a workflow worker must load
    // that file, not spend 3 s of CPU bundling them again.
    const bundleFile = process.env.WORKFLOW_BUNDLE_PATH;
    assert.ok(bundleFile && fs.existsSync(bundleFile), `scripts/test sets WORKFLOW_BUNDLE_PATH to the run's bundle (${bundleFile})`);
    const worker = spawnWorker({ ...s.env, METRICS_PORT: String(port), TEMPORAL_METRICS_PORT: String(temporalPort), LOG_LEVEL: 'info', LOG_FORMAT: 'json' }, 'workflow');
    try {
      let text = '';
      const deadline = Date.now() + 120_000;
      while (!/^temporal_\w+/m.test(text) && Date.now() < deadline) {
        text = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text(), () => '');
        await new Promise((r) => setTimeout(r, 500));
      }
      assert.match(text, /^temporal_\w+/m, `no Temporal SDK metrics; worker output:\n${worker.output()}`);
      const startLine = () => worker.output().split('\n').find((l) => l.includes('"workers started'));
      await until(async () => !!startLine(), 10_000, `the start line; worker output:\n${worker.output()}`);
      const started = startLine()!;
      assert.equal(JSON.parse(started).workflowBundle, bundleFile, started);
      assert.match(text, /^# TYPE vidhost_activity_failures_total counter$/m);
      assert.match(text, /^# TYPE vidhost_webhook_delivery_attempts_total counter$/m);
      parse(text);
      // Bound to loopback by default (METRICS_HOST), no longer 0.0.0.0.
      assertLoopbackOnly(port);
    } finally {
      await worker.kill('SIGTERM');
    }
  });
});
