import { ensureBwrap, ensureChromium, ensureComposeValidator, ensureFfmpeg } from './apt';
import { ensureGoTool, helm, liveEdge, temporalCli, versitygw } from './go-tools';
import { say } from './log';
import { dirs } from './paths';
import { run, type Child } from './proc';
import { resolvePostgres } from './postgres';
import { stopChild } from './supervisor';

/**
 * What the test suite needs (scripts/test, scripts/record-transcode): ffmpeg, bubblewrap,
 * Chromium, docker-compose, a `test` database, the pinned Temporal CLI, versitygw and helm, the live edge (vidhost-edge), the built
 * dashboard. Returns the environment for mocha and a stop for the Postgres cluster it started.
 */
export async function provisionForTests(opts: { browser?: boolean; s3?: boolean; dashboard?: boolean; chart?: boolean } = {}): Promise<{ env: NodeJS.ProcessEnv; stop(): Promise<void> }> {
  const env = process.env;
  const d = dirs(env);
  const out: NodeJS.ProcessEnv = { ...env, VH_TEST: '1' };
  await ensureFfmpeg(d.data);
  await ensureBwrap(d.data);
  if (opts.browser !== false) {
    const chromium = await ensureChromium(d.data, env);
    if (chromium) out.CHROMIUM_PATH = chromium;
    await ensureComposeValidator(d.data);
  }
  const pg = await resolvePostgres('test', d.data, env);
  let cluster: Child | undefined;
  if (pg.cluster) cluster = await pg.cluster.start();
  const spec = pg.cluster;
  const stop = async () => {
    const c = cluster;
    cluster = undefined;
    if (!c || !spec) return;
    if (env.VH_KEEP_PG) return say('leaving PostgreSQL running (VH_KEEP_PG set)');
    await stopChild(c, spec);
  };
  try {
    out.DATABASE_URL = pg.url;
    out.TEMPORAL_CLI_PATH = await ensureGoTool(temporalCli(env.VH_TEMPORAL_CLI_VERSION), d.tools, env);
    if (opts.s3 !== false) out.VERSITYGW_PATH = await ensureGoTool(versitygw(env.VH_VERSITYGW_VERSION), d.tools, env);
    // The Helm chart's lint/render test (test/deploy/chart.test.ts).
    if (opts.chart !== false) out.HELM_PATH = await ensureGoTool(helm(env.VH_HELM_VERSION), d.tools, env);
    // The live edge (test/live/srt.test.ts and the WHIP/WHEP/LL-HLS tests): built from this checkout's ingest/.
    out.LIVE_EDGE_PATH = await ensureGoTool(liveEdge(d.root), d.tools, env);
    if (opts.dashboard !== false) {
      const r = await run(process.execPath, ['--import', 'tsx', 'bin/build-dashboard.ts'], { env: out, cwd: d.root, inherit: true });
      if (r.code !== 0) throw new Error(`bin/build-dashboard.ts failed (${r.code ?? r.signal})`);
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return { env: out, stop };
}
