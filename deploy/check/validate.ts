import { parseAllDocuments } from 'yaml';

/**
 * Offline schema validation of rendered Kubernetes objects: the `kubernetes-models` and
 * `@kubernetes-models/keda` packages ship the upstream OpenAPI schemas compiled to validators
 * (nothing can download schemas here, which kubeconform would need). An object of a kind we do
 * not know is an error, so a new template cannot slip past unvalidated.
 */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
  [k: string]: unknown;
}

type Model = new (o: unknown) => { validate(): void };

const MODELS: Record<string, () => Promise<Model>> = {
  'v1/ConfigMap': async () => (await import('kubernetes-models/v1/ConfigMap')).ConfigMap as unknown as Model,
  'v1/Secret': async () => (await import('kubernetes-models/v1/Secret')).Secret as unknown as Model,
  'v1/Service': async () => (await import('kubernetes-models/v1/Service')).Service as unknown as Model,
  'v1/ServiceAccount': async () => (await import('kubernetes-models/v1/ServiceAccount')).ServiceAccount as unknown as Model,
  'apps/v1/Deployment': async () => (await import('kubernetes-models/apps/v1/Deployment')).Deployment as unknown as Model,
  'batch/v1/Job': async () => (await import('kubernetes-models/batch/v1/Job')).Job as unknown as Model,
  'networking.k8s.io/v1/Ingress': async () => (await import('kubernetes-models/networking.k8s.io/v1/Ingress')).Ingress as unknown as Model,
  'networking.k8s.io/v1/NetworkPolicy': async () => (await import('kubernetes-models/networking.k8s.io/v1/NetworkPolicy')).NetworkPolicy as unknown as Model,
  'policy/v1/PodDisruptionBudget': async () => (await import('kubernetes-models/policy/v1/PodDisruptionBudget')).PodDisruptionBudget as unknown as Model,
  'autoscaling/v2/HorizontalPodAutoscaler': async () =>
    (await import('kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler')).HorizontalPodAutoscaler as unknown as Model,
  'keda.sh/v1alpha1/ScaledObject': async () => (await import('@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject')).ScaledObject as unknown as Model,
  'keda.sh/v1alpha1/TriggerAuthentication': async () =>
    (await import('@kubernetes-models/keda/keda.sh/v1alpha1/TriggerAuthentication')).TriggerAuthentication as unknown as Model,
};

export function parseManifests(text: string): K8sObject[] {
  const out: K8sObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length) throw new Error(`YAML: ${doc.errors[0].message}`);
    const o = doc.toJS() as K8sObject | null;
    if (o) out.push(o);
  }
  return out;
}

/** Every problem found, as "Kind/name: message"; empty when all objects are valid. */
export async function validateObjects(objects: K8sObject[]): Promise<string[]> {
  const problems: string[] = [];
  for (const o of objects) {
    const id = `${o.kind}/${o.metadata?.name}`;
    const load = MODELS[`${o.apiVersion}/${o.kind}`];
    if (!load) {
      problems.push(`${id}: no schema for ${o.apiVersion} ${o.kind}`);
      continue;
    }
    const M = await load();
    try {
      new M(o).validate();
    } catch (err) {
      problems.push(`${id}: ${(err as Error).message}`);
    }
  }
  return problems;
}
