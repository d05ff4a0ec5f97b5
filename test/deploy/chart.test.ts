import assert from 'node:assert/strict';
import { parse } from 'yaml';
import { FAIR_MATCHING } from '../../ops/temporal';
import { findTool } from '../support/services';
import { lintChart, renderChart, SCENARIOS } from '../../deploy/check/chart';
import { type K8sObject, validateObjects } from '../../deploy/check/validate';

type Pod = { spec: { securityContext?: Record<string, unknown>; containers: Array<Record<string, any>>; serviceAccountName?: string } };
const podOf = (o: K8sObject): Pod | undefined => (o.spec?.template as Pod | undefined) ?? undefined;
const byKind = (objs: K8sObject[], kind: string) => objs.filter((o) => o.kind === kind);
const named = (objs: K8sObject[], kind: string, name: string) => {
  const o = objs.find((x) => x.kind === kind && x.metadata.name === name);
  assert.ok(o, `${kind}/${name} is rendered`);
  return o;
};

describe('Helm chart (deploy/helm/vidhost): lint, render, offline schema validation', function () {
  this.timeout(120_000);
  let helm: string;
  const rendered: Record<string, K8sObject[]> = {};

  before(async () => {
    helm = findTool('HELM_PATH', 'helm');
    for (const [name, set] of Object.entries(SCENARIOS)) rendered[name] = await renderChart(helm, set);
  });

  for (const name of Object.keys(SCENARIOS)) {
    it(`${name}: passes helm lint --strict and every object validates against its Kubernetes/KEDA schema`, async () => {
      await lintChart(helm, SCENARIOS[name]);
      assert.deepEqual(await validateObjects(rendered[name]), []);
    });
  }

  it('the validator refuses a wrong type and an unknown kind (it can fail)', async () => {
    const bad = structuredClone(named(rendered.defaults, 'Deployment', 'vh-vidhost-api'));
    (podOf(bad)!.spec.containers[0].ports as Array<Record<string, unknown>>)[0].containerPort = 'http';
    const problems = await validateObjects([bad, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }]);
    assert.equal(problems.length, 2);
    assert.match(problems[0], /containerPort must be integer/);
    assert.match(problems[1], /no schema/);
  });

  it('every pod runs as non-root on a read-only root filesystem, with requests, no privilege escalation', () => {
    for (const objs of Object.values(rendered)) {
      for (const o of [...byKind(objs, 'Deployment'), ...byKind(objs, 'Job')]) {
        const pod = podOf(o)!;
        assert.equal(pod.spec.securityContext?.runAsNonRoot, true, o.metadata.name);
        for (const c of pod.spec.containers) {
          assert.equal(c.securityContext.readOnlyRootFilesystem, true, o.metadata.name);
          assert.equal(c.securityContext.allowPrivilegeEscalation, false, o.metadata.name);
          assert.deepEqual(c.securityContext.capabilities.drop, ['ALL']);
          assert.ok(c.resources.requests.cpu && c.resources.requests.memory, `${o.metadata.name} has requests`);
          assert.ok(c.volumeMounts.some((m: { mountPath: string }) => m.mountPath === '/tmp'), 'ffmpeg scratch is writable');
          // The compiled runtime, not tsx; or the live edge's Go binary, built into the image.
          assert.match(c.command.join(' '), c.name === 'edge' ? /^vidhost-edge$/ : /^node dist\//, o.metadata.name);
        }
      }
    }
  });

  it('the API has probes on /healthz and /readyz, a Service, an Ingress, an HPA and a PDB', () => {
    const objs = rendered.defaults;
    const api = podOf(named(objs, 'Deployment', 'vh-vidhost-api'))!.spec.containers[0];
    assert.equal(api.livenessProbe.httpGet.path, '/healthz');
    assert.equal(api.readinessProbe.httpGet.path, '/readyz');
    named(objs, 'Service', 'vh-vidhost-api');
    named(objs, 'Ingress', 'vh-vidhost-api');
    named(objs, 'HorizontalPodAutoscaler', 'vh-vidhost-api');
    const pdbs = byKind(objs, 'PodDisruptionBudget').map((p) => p.metadata.name).sort();
    assert.deepEqual(pdbs, ['vh-vidhost-api', 'vh-vidhost-transcode-worker', 'vh-vidhost-workflow-worker']);
  });

  it('each worker role is its own Deployment polling only its queue', () => {
    const roles = (objs: K8sObject[]) =>
      byKind(objs, 'Deployment')
        .filter((d) => d.metadata.name.endsWith('-worker'))
        .map((d) => podOf(d)!.spec.containers[0].env.find((e: { name: string }) => e.name === 'WORKER_ROLES').value)
        .sort();
    assert.deepEqual(roles(rendered.defaults), ['transcode', 'workflow']);
    assert.deepEqual(roles(rendered['live workers, existing Secret, MinIO']), ['live', 'transcode', 'workflow']);
  });

  it('transcode workers scale on the Temporal task-queue backlog (KEDA) with a CPU fallback, or an HPA without KEDA', () => {
    const so = named(rendered.defaults, 'ScaledObject', 'vh-vidhost-transcode-worker');
    const spec = so.spec as { triggers: Array<{ type: string; metadata: Record<string, string> }>; scaleTargetRef: { name: string } };
    assert.equal(spec.scaleTargetRef.name, 'vh-vidhost-transcode-worker');
    const temporal = spec.triggers.find((t) => t.type === 'temporal')!;
    assert.equal(temporal.metadata.taskQueue, 'transcode');
    assert.equal(temporal.metadata.queueTypes, 'activity');
    assert.ok(spec.triggers.some((t) => t.type === 'cpu'));
    const transcode = named(rendered.defaults, 'Deployment', 'vh-vidhost-transcode-worker');
    assert.equal(transcode.spec?.replicas, undefined, 'the autoscaler owns the replica count');

    const noKeda = rendered['no KEDA (CPU HPA)'];
    assert.equal(byKind(noKeda, 'ScaledObject').length, 0);
    named(noKeda, 'HorizontalPodAutoscaler', 'vh-vidhost-transcode-worker');
  });

  it("SPEC §25: the Temporal server's dynamic config for priority and fairness, and KEDA on the critical lane too", () => {
    const cm = named(rendered.defaults, 'ConfigMap', 'vh-vidhost-temporal-dynamicconfig');
    const dynamic = parse((cm.data as Record<string, string>)['dynamicconfig.yaml']) as Record<string, Array<{ value: unknown; constraints: object }>>;
    // The key the dev servers get on their command line (ops/temporal.ts), as the server's file format has it.
    const [key, value] = FAIR_MATCHING[1].split('=');
    assert.deepEqual(dynamic[key], [{ value: value === 'true', constraints: {} }]);
    const so = named(rendered.defaults, 'ScaledObject', 'vh-vidhost-transcode-worker');
    const queues = (so.spec as { triggers: Array<{ type: string; metadata: Record<string, string> }> }).triggers.filter((t) => t.type === 'temporal').map((t) => t.metadata.taskQueue);
    assert.deepEqual(queues, ['transcode', 'transcode-critical']);
  });

  it('Temporal Cloud with an API key: TLS on, the key from the Secret, KEDA authenticates with it', () => {
    const objs = rendered['Temporal Cloud, API key'];
    const cm = named(objs, 'ConfigMap', 'vh-vidhost');
    assert.equal((cm.data as Record<string, string>).TEMPORAL_TLS, 'true');
    assert.equal((cm.data as Record<string, string>).TEMPORAL_ADDRESS, 'ns.acct.tmprl.cloud:7233');
    const secret = named(objs, 'Secret', 'vh-vidhost-secrets');
    assert.equal((secret.stringData as Record<string, string>).TEMPORAL_API_KEY, 'key');
    const auth = named(objs, 'TriggerAuthentication', 'vh-vidhost-transcode-worker-temporal');
    assert.deepEqual((auth.spec as { secretTargetRef: unknown[] }).secretTargetRef, [{ parameter: 'apiKey', name: 'vh-vidhost-secrets', key: 'TEMPORAL_API_KEY' }]);
  });

  it('self-hosted Temporal with mTLS: the client certificate is mounted and named in the config', () => {
    const objs = rendered['self-hosted Temporal, mTLS'];
    const cm = named(objs, 'ConfigMap', 'vh-vidhost').data as Record<string, string>;
    assert.equal(cm.TEMPORAL_TLS_CERT_PATH, '/etc/vidhost/temporal-tls/tls.crt');
    const pod = podOf(named(objs, 'Deployment', 'vh-vidhost-workflow-worker'))! as unknown as { spec: { volumes: Array<{ name: string; secret?: { secretName: string } }> } };
    assert.equal(pod.spec.volumes.find((v) => v.name === 'temporal-tls')?.secret?.secretName, 'temporal-client');
  });

  it('an existing Secret is used instead of rendering one', () => {
    const objs = rendered['live workers, existing Secret, MinIO'];
    assert.equal(byKind(objs, 'Secret').length, 0);
    const env = podOf(named(objs, 'Deployment', 'vh-vidhost-api'))!.spec.containers[0].envFrom;
    assert.deepEqual(env[1], { secretRef: { name: 'vidhost-prod' } });
  });

  it('migrations run as a pre-install/pre-upgrade hook, after the config they read', () => {
    const objs = rendered.defaults;
    const job = named(objs, 'Job', 'vh-vidhost-migrate');
    assert.equal(job.metadata.annotations?.['helm.sh/hook'], 'pre-install,pre-upgrade');
    for (const [kind, name] of [['ConfigMap', 'vh-vidhost'], ['Secret', 'vh-vidhost-secrets']]) {
      const o = named(objs, kind, name);
      assert.ok(Number(o.metadata.annotations?.['helm.sh/hook-weight']) < Number(job.metadata.annotations?.['helm.sh/hook-weight']));
    }
    assert.equal(podOf(job)!.spec.serviceAccountName, undefined, 'a pre-install hook cannot use the chart\'s own ServiceAccount');
  });

  it('live ingest: vidhost-edge (the only ingest) and its hooks in one pod, RTMP/SRT/WebRTC as Services, probes, env from the values', () => {
    assert.equal(byKind(rendered.defaults, 'Deployment').filter((d) => d.metadata.name.endsWith('-live-ingest')).length, 0, 'off by default');
    const objs = rendered['live ingest (live hooks + vidhost-edge)'];
    const dep = named(objs, 'Deployment', 'vh-vidhost-live-ingest');
    assert.equal(dep.spec?.replicas, 1, 'one edge: it knows which encoder publishes where');
    assert.deepEqual(dep.spec?.strategy, { type: 'Recreate' });
    const [media, edge] = podOf(dep)!.spec.containers;
    assert.deepEqual(media.command, ['node', 'dist/workers/live-hooks.js']);
    assert.deepEqual(edge.command, ['vidhost-edge']);
    const ports = (c: Record<string, any>) => Object.fromEntries(c.ports.map((p: { name: string; containerPort: number; protocol: string }) => [p.name, `${p.containerPort}/${p.protocol}`]));
    assert.equal(media.ports, undefined, 'the hooks listen on loopback only');
    assert.deepEqual(ports(edge), { rtmp: '1935/TCP', srt: '8890/UDP', webrtc: '8189/UDP', 'edge-http': '8889/TCP' });
    for (const c of [media, edge]) for (const probe of ['startupProbe', 'readinessProbe', 'livenessProbe']) assert.ok(c[probe], `${c.name} has a ${probe}`);
    assert.match(media.readinessProbe.exec.command.join(' '), /LIVE_SRT_CHECK_PORT/);
    assert.equal(edge.readinessProbe.httpGet.path, '/healthz');
    assert.equal(edge.livenessProbe.httpGet.port, 'edge-http');
    const env = (c: Record<string, any>) => Object.fromEntries(c.env.map((e: { name: string; value: string }) => [e.name, e.value]));
    assert.equal(env(edge).LIVE_INGEST_HOST, '0.0.0.0', 'the edge takes encoders from outside');
    assert.equal(media.env, undefined, 'the hooks listen on loopback only');
    assert.equal(env(edge).LIVE_MEDIA_INTERNAL_URL, undefined, 'no media server to republish to');
    assert.doesNotMatch(JSON.stringify(objs), /node-media-server/);
    assert.equal(env(edge).LIVE_EDGE_HTTP_HOST, '0.0.0.0');

    const pub = named(objs, 'Service', 'vh-vidhost-live').spec as { type: string; loadBalancerIP: string; externalTrafficPolicy: string; ports: Array<{ name: string; port: number; protocol: string }> };
    assert.equal(pub.type, 'LoadBalancer');
    assert.equal(pub.loadBalancerIP, '203.0.113.10');
    assert.equal(pub.externalTrafficPolicy, 'Local');
    assert.deepEqual(pub.ports.map((p) => `${p.name} ${p.port}/${p.protocol}`), ['rtmp 1935/TCP', 'srt 8890/UDP', 'webrtc 8189/UDP']);
    const internal = named(objs, 'Service', 'vh-vidhost-live-internal').spec as { type: string; ports: Array<{ name: string; port: number }> };
    assert.equal(internal.type, 'ClusterIP');
    assert.deepEqual(internal.ports.map((p) => `${p.name} ${p.port}`), ['edge-http 8889'], 'live workers read the feed from the edge API');

    const cm = named(objs, 'ConfigMap', 'vh-vidhost').data as Record<string, string>;
    assert.equal(cm.LIVE_MEDIA_INTERNAL_URL, undefined, 'live workers read feeds from the edge (LIVE_EDGE_INTERNAL_URL)');
    assert.equal(cm.LIVE_EDGE_INTERNAL_URL, 'http://vh-vidhost-live-internal:8889');
    assert.equal(cm.LIVE_PUBLIC_INGEST_HOST, 'live.example.com');
    assert.equal(cm.LIVE_WEBRTC_ANNOUNCE, '203.0.113.10');
    assert.equal(cm.LIVE_WEBRTC_UDP_PORT, '8189');
    assert.equal(cm.LIVE_SRT_PORT, '8890');
    assert.deepEqual([cm.LIVE_WHEP_OFFER_BURST, cm.LIVE_WHEP_OFFERS_PER_SECOND], ['10', '2'], 'the edge’s WHEP offer bucket is a chart value');
    const roles = byKind(objs, 'Deployment').map((d) => podOf(d)!.spec.containers[0].env?.find((e: { name: string }) => e.name === 'WORKER_ROLES')?.value);
    assert.ok(roles.includes('live'), 'the live workers run');
  });

  it('live ingest: the edge API is not public — ClusterIP only, and a NetworkPolicy lets only the API and the workflow/live workers reach it', () => {
    const objs = rendered['live ingest (live hooks + vidhost-edge)'];
    const httpPort = 8889;
    // No Service that faces the world carries the edge's API port.
    for (const svc of byKind(objs, 'Service')) {
      const spec = svc.spec as { type?: string; ports: Array<{ port: number; targetPort: string | number }> };
      const carries = spec.ports.some((p) => p.port === httpPort || p.targetPort === 'edge-http');
      if (carries) assert.equal(spec.type ?? 'ClusterIP', 'ClusterIP', `${svc.metadata.name} carries the edge API`);
    }
    const np = named(objs, 'NetworkPolicy', 'vh-vidhost-live-ingest').spec as {
      podSelector: { matchLabels: Record<string, string> };
      policyTypes: string[];
      ingress: Array<{ from?: Array<{ podSelector: { matchExpressions: Array<{ key: string; operator: string; values: string[] }> } }>; ports: Array<{ port: number; protocol: string }> }>;
    };
    assert.equal(np.podSelector.matchLabels['app.kubernetes.io/component'], 'live-ingest');
    assert.deepEqual(np.policyTypes, ['Ingress']);
    const open = np.ingress.filter((r) => !r.from);
    assert.deepEqual(open.flatMap((r) => r.ports.map((p) => `${p.port}/${p.protocol}`)), ['1935/TCP', '8890/UDP', '8189/UDP'], 'only the public listeners are open to all');
    const api = np.ingress.filter((r) => r.ports.some((p) => p.port === httpPort));
    assert.equal(api.length, 1);
    assert.ok(api[0].from?.length, 'the edge API port has a from');
    const components = api[0].from!.flatMap((f) => f.podSelector.matchExpressions.filter((e) => e.key === 'app.kubernetes.io/component').flatMap((e) => e.values));
    assert.deepEqual(components.sort(), ['api', 'live-worker', 'workflow-worker']);
    // Every pod that reaches it has the same credential source (the chart's Secret/ConfigMap via envFrom).
    for (const d of byKind(objs, 'Deployment')) for (const c of podOf(d)!.spec.containers) assert.ok(c.envFrom?.length, `${d.metadata.name} reads the shared env`);
    assert.equal(byKind(rendered.defaults, 'NetworkPolicy').length, 0, 'no live ingest, no policy');
  });
});
