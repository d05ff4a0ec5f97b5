import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Connection } from '@temporalio/client';
import { parse, stringify } from 'yaml';
import { VideoIdKey, VideoStatusKey, WorkspaceIdKey } from '../../workflows/video/defs';
import { adoptGroup } from '../../test/support/child';
import { findTool } from '../../test/support/services';

/**
 * A real Temporal server (the `temporal-server` binary, not the CLI's dev server) on Postgres,
 * with its schema applied by Temporal's own SQL tool, as a production cluster runs it. All four
 * services (frontend, history, matching, worker) in one process, with 4 history shards.
 * Both binaries are built pinned with `go install` and cached beside the Temporal CLI.
 */
const run = promisify(execFile);
export const SERVER_VERSION = 'v1.29.1';
const toolsBin = path.join(os.homedir(), '.cache', 'vidhost', 'tools', 'bin');

async function goInstall(pkg: string, bin: string, out: string): Promise<string> {
  const target = path.join(toolsBin, out);
  if (fs.existsSync(target)) return target;
  const gobin = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-gobin-'));
  const go = fs.existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
  console.log(`building ${pkg}@${SERVER_VERSION} (first run only, several minutes)...`);
  await run(go, ['install', `${pkg}@${SERVER_VERSION}`], { env: { ...process.env, GOBIN: gobin, CGO_ENABLED: '0' }, maxBuffer: 64 << 20 });
  fs.mkdirSync(toolsBin, { recursive: true });
  fs.renameSync(path.join(gobin, bin), target);
  return target;
}

async function schemaDir(): Promise<string> {
  const go = fs.existsSync('/usr/local/go/bin/go') ? '/usr/local/go/bin/go' : 'go';
  const { stdout } = await run(go, ['env', 'GOMODCACHE']);
  return path.join(stdout.trim(), `go.temporal.io/server@${SERVER_VERSION}`, 'schema', 'postgresql', 'v12');
}

async function lowPorts(n: number): Promise<number[]> {
  const free = (port: number) =>
    new Promise<boolean>((resolve) => {
      const srv = net.createServer();
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
    });
  const out: number[] = [];
  for (let port = 21000 + (process.pid % 500) * 20; out.length < n && port < 32768; port++) if (await free(port)) out.push(port);
  return out;
}

export interface TemporalCluster {
  address: string;
  kill(): Promise<void>;
}

export async function startTemporalCluster(pg: { host: string; port: number; user: string }): Promise<TemporalCluster> {
  const server = await goInstall('go.temporal.io/server/cmd/server', 'server', 'temporal-server');
  const sqlTool = await goInstall('go.temporal.io/server/cmd/tools/sql', 'sql', 'temporal-sql-tool');
  const schemas = await schemaDir();
  const suffix = `${process.pid}`;
  const dbs = { main: `temporal_bench_${suffix}`, vis: `temporal_bench_vis_${suffix}` };
  for (const [db, dir] of [[dbs.main, 'temporal'], [dbs.vis, 'visibility']]) {
    const base = ['--plugin', 'postgres12', '--ep', pg.host, '-p', String(pg.port), '-u', pg.user, '--db', db];
    await run(sqlTool, [...base, 'create-database']);
    await run(sqlTool, [...base, 'setup-schema', '-v', '0.0']);
    await run(sqlTool, [...base, 'update-schema', '-d', path.join(schemas, dir, 'versioned')]);
  }
  // Temporal stores membership ports in a smallint column: they must be below 32768.
  const [grpc, history, matching, worker, m1, m2, m3, m4, metrics] = await lowPorts(9);
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'vh-temporal-cluster-'));
  fs.mkdirSync(path.join(root, 'config'));
  const store = (db: string, conns: number) => `
      sql:
        pluginName: postgres12
        databaseName: ${db}
        connectAddr: "${pg.host}:${pg.port}"
        connectProtocol: tcp
        user: ${pg.user}
        password: ""
        maxConns: ${conns}
        maxIdleConns: ${conns}
        maxConnLifetime: 1h`;
  const svc = (port: number, membership: number) => `
    rpc:
      grpcPort: ${port}
      membershipPort: ${membership}
      bindOnLocalHost: true`;
  fs.writeFileSync(
    path.join(root, 'config', 'bench.yaml'),
    `log:
  stdout: true
  level: error
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: 4
  datastores:
    default:${store(dbs.main, 20)}
    visibility:${store(dbs.vis, 5)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
  metrics:
    prometheus:
      framework: tally
      listenAddress: 127.0.0.1:${metrics}
services:
  frontend:${svc(grpc, m1)}
  history:${svc(history, m2)}
  matching:${svc(matching, m3)}
  worker:${svc(worker, m4)}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: 127.0.0.1:${grpc}
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: ${path.join(root, 'config', 'dynamicconfig.yaml')}
  pollInterval: 10s
`,
  );
  // SPEC §25: the dynamic config the Helm chart hands a production server (priority and fairness).
  const chartValues = parse(fs.readFileSync(path.join(__dirname, '..', '..', 'deploy', 'helm', 'vidhost', 'values.yaml'), 'utf8')) as { temporal: { serverDynamicConfig: { values: unknown } } };
  fs.writeFileSync(path.join(root, 'config', 'dynamicconfig.yaml'), stringify(chartValues.temporal.serverDynamicConfig.values));
  const child: ChildProcess = spawn(server, ['--root', root, '--config', 'config', '--env', 'bench', '--allow-no-auth', 'start'], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const proc = adoptGroup('temporal-server', child); // stopped with the bench's other children if it fails
  let out = '';
  child.stdout?.on('data', (d) => (out = (out + d).slice(-20_000)));
  child.stderr?.on('data', (d) => (out = (out + d).slice(-20_000)));
  const address = `127.0.0.1:${grpc}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      const c = await Connection.connect({ address, connectTimeout: 2000 });
      await c.workflowService.getSystemInfo({});
      await c.close();
      break;
    } catch (err) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`temporal-server did not start: ${out}`, { cause: err });
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  // The dev server makes these itself; a real cluster is set up by its operator.
  const cli = findTool('TEMPORAL_CLI_PATH', 'temporal');
  await run(cli, ['operator', 'namespace', 'create', '--address', address, '--namespace', 'default', '--retention', '24h']);
  for (let i = 0; ; i++) {
    try {
      await run(cli, ['operator', 'search-attribute', 'create', '--address', address, '--namespace', 'default',
        ...[VideoIdKey, WorkspaceIdKey, VideoStatusKey].flatMap((k) => ['--name', k.name, '--type', 'Keyword'])]);
      break;
    } catch (err) {
      if (i > 30) throw err; // the namespace takes a moment to reach every service
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  return {
    address,
    async kill() {
      await proc.kill('SIGTERM');
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}
