import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { parseManifests, type K8sObject } from './validate';

const run = promisify(execFile);
export const chartDir = path.resolve(__dirname, '../helm/vidhost');
/** The Kubernetes version rendered for (a helm built with `go install` otherwise assumes v1.20). */
export const KUBE_VERSION = '1.31.0';

/** `helm lint --strict` with the given `--set` values; resolves with helm's output, rejects on a lint error. */
export async function lintChart(helm: string, set: Record<string, string> = {}): Promise<string> {
  const { stdout } = await run(helm, ['lint', '--strict', '--kube-version', KUBE_VERSION, chartDir, ...setArgs(set)]);
  return stdout;
}

/** The objects `helm template` renders (hooks included) for the given `--set` values. */
export async function renderChart(helm: string, set: Record<string, string> = {}): Promise<K8sObject[]> {
  const { stdout } = await run(helm, ['template', 'vh', chartDir, '--namespace', 'video', '--kube-version', KUBE_VERSION, ...setArgs(set)], { maxBuffer: 16 << 20 });
  return parseManifests(stdout);
}

function setArgs(set: Record<string, string>): string[] {
  return Object.entries(set).flatMap(([k, v]) => ['--set', `${k}=${v}`]);
}

/** The value sets CI renders: the defaults and each documented deployment shape. */
export const SCENARIOS: Record<string, Record<string, string>> = {
  defaults: {},
  'no KEDA (CPU HPA)': { 'workers.transcode.autoscaling.keda': 'false' },
  'Temporal Cloud, API key': {
    'temporal.address': 'ns.acct.tmprl.cloud:7233',
    'temporal.namespace': 'ns.acct',
    'temporal.apiKey': 'true',
    'secrets.TEMPORAL_API_KEY': 'key',
  },
  'self-hosted Temporal, mTLS': { 'temporal.tls.enabled': 'true', 'temporal.tls.secretName': 'temporal-client', 'temporal.tls.serverName': 'temporal' },
  'live ingest (live hooks + vidhost-edge)': {
    'live.enabled': 'true',
    'workers.live.enabled': 'true',
    'live.publicHost': 'live.example.com',
    'live.webrtcAnnounce': '203.0.113.10',
    'live.service.loadBalancerIP': '203.0.113.10',
  },
  'live workers, existing Secret, MinIO': {
    'workers.live.enabled': 'true',
    existingSecret: 'vidhost-prod',
    's3.endpoint': 'http://minio.storage:9000',
    's3.forcePathStyle': 'true',
  },
};
