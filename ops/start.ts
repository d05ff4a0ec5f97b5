import path from 'node:path';
import { ensureBwrap, ensureFfmpeg } from './apt';
import { ensureGoTool, liveEdge, temporalCli } from './go-tools';
import { ProvisionError, say, warn } from './log';
import { dirs, repoRoot } from './paths';
import { killRunning, portOpen, run, sleep, spawnChild } from './proc';
import { resolvePostgres } from './postgres';
import { ensureSecrets } from './secrets';
import { Supervisor } from './supervisor';
import { checkTemporal, devServer, planTemporal } from './temporal';


/** tsc's arguments for the compiled runtime (tsconfig.build.json → dist/), incremental. */
export const compileArgs = ['-p', 'tsconfig.build.json', '--incremental', '--tsBuildInfoFile', 'dist/.tsbuildinfo'];

/** The compiled JavaScript of a TypeScript entry point: `api/server.ts` → `dist/api/server.js`. */
export function compiled(script: string): string {
  return path.join(repoRoot, 'dist', script.replace(/\.ts$/, '.js'));
}

/**
 * scripts/start: provision (ffmpeg, bubblewrap, Postgres, the pinned Temporal CLI, the live
 * edge built from ingest/), migrate, bootstrap, build the dashboard, then run
 * Postgres (when the cluster is ours), the Temporal dev server (unless TEMPORAL_ADDRESS names
 * one), the live hooks, the live edge, the worker and the API under one Supervisor.
 * SIGINT, SIGTERM or SIGHUP stops every child it started.
 */

async function main(sup: Supervisor, signalled: () => boolean): Promise<number> {
  const env = process.env;
  const d = dirs(env);
  const t0 = Date.now();
  const port = Number(env.PORT || 3000);
  await ensureFfmpeg(d.data);
  await ensureBwrap(d.data);
  const pg = await resolvePostgres('vidhost', d.data, env);
  if (pg.cluster && env.VH_KEEP_PG) {
    await pg.cluster.start(); // left running on exit (VH_KEEP_PG)
    say('PostgreSQL will be left running on exit (VH_KEEP_PG set)');
  } else if (pg.cluster) {
    await sup.add(pg.cluster);
  }
  const cli = await ensureGoTool(temporalCli(env.VH_TEMPORAL_CLI_VERSION), d.tools, env);
  const edge = await ensureGoTool(liveEdge(d.root), d.tools, env);
  // Decided once, from the environment we were given: the address exported below never feeds back.
  const temporal = await planTemporal(env);
  if (temporal.kind === 'dev') await sup.add(devServer(cli, temporal, d.data));
  else await checkTemporal(cli, temporal);
  const secrets = ensureSecrets(path.join(d.data, 'secrets.env'));
  const childEnv: NodeJS.ProcessEnv = {
    ...secrets,
    ...env,
    PORT: String(port),
    // The app keeps local-driver storage etc. under DATA_DIR; share our data dir unless told otherwise.
    DATA_DIR: env.DATA_DIR || d.data,
    DATABASE_URL: pg.url,
    TEMPORAL_ADDRESS: temporal.address,
    TEMPORAL_CLI_PATH: cli,
    // One worker process takes every queue here, live broadcasts included (SPEC §17).
    WORKER_ROLES: env.WORKER_ROLES || 'workflow,transcode,live',
    // How the API and worker reach the live edge's internal HTTP API (WHIP/WHEP, LL-HLS, stream health).
    LIVE_EDGE_INTERNAL_URL: env.LIVE_EDGE_INTERNAL_URL || `http://127.0.0.1:${env.LIVE_EDGE_HTTP_PORT || 8889}`,
  };
  if (await portOpen('127.0.0.1', port)) throw new ProvisionError(`port ${port} is already in use (another scripts/start?); stop it or run with PORT=<free port>`);

  // The service runs compiled: `npm run build`'s tsc step, incremental (seconds when nothing changed).
  if (signalled()) return 130;
  say('compiling TypeScript to dist/ (incremental)');
  const built = await run(process.execPath, [require.resolve('typescript/bin/tsc'), ...compileArgs], { env: childEnv, cwd: d.root, inherit: true });
  if (built.code !== 0) throw new ProvisionError(`tsc failed (${built.code ?? built.signal})`);
  const js = (script: string, ...args: string[]) => run(process.execPath, [compiled(script), ...args], { env: childEnv, cwd: d.root, inherit: true });
  // The workflows bundled once, from what tsc just compiled, beside the steps below: the worker
  // loads the file (WORKFLOW_BUNDLE_PATH) instead of running webpack, at its first start and at each
  // restart after a crash (~2 s instead of ~5). A failure only costs that: the worker bundles its own.
  const bundleFile = path.join(d.data, 'workflow-bundle.js');
  const bundled = run(process.execPath, [compiled('workers/workflow-bundle.ts'), bundleFile], { env: childEnv, cwd: d.root });
  for (const [what, script, ...args] of [
    ['running database migrations', 'bin/migrate.ts'],
    ['bootstrapping the default workspace', 'bin/admin.ts', 'bootstrap'],
    ['building the dashboard (skipped when its sources are unchanged)', 'bin/build-dashboard.ts'],
  ]) {
    if (signalled()) return 130;
    say(what);
    const r = await js(script, ...args);
    if (r.code !== 0) throw new ProvisionError(`${script} failed (${r.code ?? r.signal})`);
  }
  const bundle = await bundled;
  if (bundle.code === 0) childEnv.WORKFLOW_BUNDLE_PATH = bundleFile;
  else {
    delete childEnv.WORKFLOW_BUNDLE_PATH;
    warn(`bundling the workflows failed (${bundle.code ?? bundle.signal}); the worker bundles them at each start\n${bundle.stderr.trim()}`);
  }
  say(`provisioned in ${Math.round((Date.now() - t0) / 1000)}s`);

  const node = (name: string, script: string) => ({
    name,
    start: async () => spawnChild(process.execPath, [compiled(script)], { env: childEnv, cwd: d.root }),
  });
  // The live ingest's hooks (SPEC §17: the stream-key check and the connected/disconnected signals
  // to each stream's workflow, on loopback LIVE_SRT_CHECK_PORT) and the worker with the live role.
  await sup.add(node('live hooks', 'workers/live-hooks.ts'));
  // The live edge (ingest/, vidhost-edge), the only ingest: RTMP in (LIVE_RTMP_PORT, 1935/tcp), SRT
  // in (LIVE_SRT_PORT, 8890/udp) and WHIP in / WHEP out (LIVE_WEBRTC_UDP_PORT, 8189/udp), each key
  // checked with the hooks; the live workers' feed and the LL-HLS packager on its internal HTTP
  // API (LIVE_EDGE_HTTP_PORT, 8889, loopback).
  await sup.add({ name: 'live edge', start: async () => spawnChild(edge, [], { env: childEnv, cwd: d.root }) });
  await sup.add(node('worker', 'workers/main.ts'));
  await sup.add(node('API', 'api/server.ts'));

  const deadline = Date.now() + 60_000;
  while (!sup.stopping && !(await portOpen('127.0.0.1', port, 500))) {
    if (Date.now() > deadline) {
      warn(`the API isn't listening on port ${port} after 60s; still waiting on it`);
      break;
    }
    await sleep(250);
  }
  if (!sup.stopping) {
    const api = `http://localhost:${port}`;
    process.stderr.write(`
  vidhost is running (ready in ${Math.round((Date.now() - t0) / 1000)}s)
    API:          ${api}
    Player:       ${api}/player/embed/<video_id>
    Dashboard:    ${api}/dashboard  (first run: sign in with admin@localhost and the password
                  printed above; else npm run admin -- account create <email> --workspace <ws_id>)
    Temporal UI:  ${temporal.kind === 'external' ? `see ${temporal.address}` : temporal.uiUrl}
    Database:     ${pg.url}
    Data dir:     ${d.data}
  Press Ctrl-C to stop.

`);
  }
  await sup.done;
  return 0;
}

// A closed terminal (SIGHUP) makes writes fail with EIO: that must not cut the shutdown short.
for (const stream of [process.stdout, process.stderr]) stream.on('error', () => undefined);

const sup = new Supervisor({
  healthyRunMs: Number(process.env.VH_RESTART_HEALTHY_SECONDS || 30) * 1000,
  maxBackoffMs: Number(process.env.VH_RESTART_MAX_BACKOFF_SECONDS || 30) * 1000,
});
let signal: string | undefined;
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
  process.on(sig, () => {
    if (signal) return;
    signal = sig;
    process.stderr.write('\n');
    say(`received ${sig}, shutting down`);
    killRunning();
    void sup.stop();
  });
}

main(sup, () => !!signal).then(
  async (code) => {
    await sup.stop();
    say('stopped');
    process.exit(signal && code !== 0 ? 130 : code);
  },
  async (err: Error) => {
    if (!signal) process.stderr.write(`error: ${err instanceof ProvisionError ? err.message : (err.stack ?? err.message)}\n`);
    await sup.stop();
    process.exit(signal ? 130 : 1);
  },
);
