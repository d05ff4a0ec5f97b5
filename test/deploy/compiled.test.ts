import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { createApiKey, createWorkspace } from '../../lib/keys';
import { randomToken } from '../../lib/ids';
import { temporalEnv, testDatabase } from '../support/hooks';
import { makeClip } from '../support/media';
import { freePort } from '../support/services';
import { until } from '../support/flow';

const run = promisify(execFile);
const root = path.resolve(__dirname, '..', '..');
// dist/, with ops/start.ts's compileArgs (incremental, dist/.tsbuildinfo): test/scripts/start.test.ts
// runs scripts/start, which compiles there too, so a run compiles the project once, not twice.
const out = path.join(root, 'dist');

/**
 * The compiled runtime (npm run build → dist/) is what the image, the chart and scripts/start run:
 * no tsx, plain node. Built here into dist/ as scripts/start builds it (incrementally), then an upload goes through a
 * compiled API and compiled workers to `ready`, and the compiled migrator agrees with tsx's.
 */
describe('compiled runtime (tsc → node, no tsx)', function () {
  this.timeout(240_000);
  const children: ChildProcess[] = [];
  const logs: string[] = [];
  const start = (file: string, env: Record<string, string>) => {
    const c = spawn(process.execPath, [path.join(out, file)], { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    c.stdout?.on('data', (d) => logs.push(String(d)));
    c.stderr?.on('data', (d) => logs.push(String(d)));
    children.push(c);
    return c;
  };

  before(async function () {
    // A full compile (a fresh checkout) took over 4 minutes on a loaded 2-core machine.
    this.timeout(600_000);
    await run(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--incremental', '--tsBuildInfoFile', path.join(out, '.tsbuildinfo')], { cwd: root });
  });

  after(async () => {
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(children.map((c) => (c.exitCode === null ? new Promise((r) => c.once('exit', r)) : null)));
  });

  it('holds no TypeScript at run time: every entry point is JavaScript', () => {
    for (const f of ['api/server.js', 'workers/main.js', 'bin/migrate.js', 'bin/admin.js', 'workflows/index.js']) assert.ok(fs.existsSync(path.join(out, f)), f);
  });

  it('migrates under the same names as the sources, so one database serves both', async () => {
    const tdb = await testDatabase();
    const { stdout } = await run(process.execPath, [path.join(out, 'bin', 'migrate.js')], { cwd: root, env: { ...process.env, DATABASE_URL: tdb.url } });
    assert.match(stdout, /up to date/);
  });

  it('an upload reaches ready through a compiled API and compiled workers', async () => {
    const tdb = await testDatabase();
    const temporal = await temporalEnv();
    const port = await freePort();
    const queue = `compiled-${randomToken(4)}`;
    const ws = await createWorkspace(tdb.db, 'compiled');
    const key = await createApiKey(tdb.db, ws.id, 'full');
    const env = {
      DATABASE_URL: tdb.url,
      TEMPORAL_ADDRESS: temporal.address,
      TEMPORAL_TASK_QUEUE: `${queue}-wf`,
      TEMPORAL_TRANSCODE_QUEUE: `${queue}-tc`,
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      DATA_DIR: fs.mkdtempSync(path.join(root, 'test-output', 'compiled-data-')),
      METRICS_PORT: '0',
      API_METRICS_PORT: '0',
      TEMPORAL_METRICS_PORT: '0',
      LOG_LEVEL: 'warn',
      NODE_ENV: 'test',
    };
    // The workflow bundle as the image makes it (the Dockerfile's build stage runs the compiled
    // bundler over dist/workflows, and its ENV names the file): not the run's bundle of the .ts
    // sources (WORKFLOW_BUNDLE_PATH, inherited from scripts/test).
    const dockerfile = fs.readFileSync(path.join(root, 'Dockerfile'), 'utf8');
    assert.match(dockerfile, /node dist\/workers\/workflow-bundle\.js dist\/workflow-bundle\.js/);
    assert.match(dockerfile, /^ENV WORKFLOW_BUNDLE_PATH=\/app\/dist\/workflow-bundle\.js$/m);
    const bundle = path.join(env.DATA_DIR, 'workflow-bundle.js');
    await run(process.execPath, [path.join(out, 'workers', 'workflow-bundle.js'), bundle], { cwd: root });
    start('workers/main.js', { ...env, WORKER_ROLES: 'workflow,transcode', WORKFLOW_BUNDLE_PATH: bundle, LOG_LEVEL: 'info' });
    start('api/server.js', env);
    const api = `http://127.0.0.1:${port}`;
    await until(async () => (await fetch(`${api}/healthz`).catch(() => null))?.ok === true, 60_000, `the compiled API answers (${logs.join('')})`, 200);
    // Assets read from the root (lib/root.ts), not from beside the compiled file.
    assert.equal((await fetch(`${api}/player/assets/embed.js`)).status, 200);

    const file = await makeClip({ width: 320, height: 240, seconds: 2 });
    const auth = { Authorization: `Bearer ${key.secret}`, 'Content-Type': 'application/json' };
    const init = await fetch(`${api}/v1/upload/init`, { method: 'POST', headers: auth, body: JSON.stringify({ filename: 'c.mp4', size: fs.statSync(file).size, content_type: 'video/mp4' }) });
    const { video_id, upload_url, upload_headers } = (await init.json()) as { video_id: string; upload_url: string; upload_headers: Record<string, string> };
    assert.equal((await fetch(upload_url, { method: 'PUT', body: fs.readFileSync(file), headers: upload_headers })).status, 200);
    assert.equal((await fetch(`${api}/v1/upload/complete`, { method: 'POST', headers: auth, body: JSON.stringify({ video_id }) })).status, 202);
    let status = '';
    await until(
      async () => {
        status = ((await (await fetch(`${api}/v1/videos/${video_id}`, { headers: auth })).json()) as { status: string }).status;
        return status === 'ready';
      },
      120_000,
      `the video turns ready (last: ${status}; ${logs.join('').slice(-2000)})`,
      300,
    );
    // The worker ran the prebuilt bundle (a missing or broken one falls back to webpack, with a warning).
    assert.ok(logs.join('').includes(`"workflowBundle":${JSON.stringify(bundle)}`), logs.join('').slice(-2000));
  });
});
