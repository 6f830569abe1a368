/**
 * What the bench writes: one ReplicaSet shape (a Deployment-style pod template, about 2 KB once
 * the server has defaulted it and added managedFields), and the stored form of many of them
 * for loading a store directly, bypassing the API (start-up and list scenarios).
 */
import { randomUUID } from 'node:crypto';

export const RS_GROUP_PATH = '/apis/apps/v1';

/** Path of the replicasets collection in a namespace. */
export function replicaSetsPath(namespace: string): string {
  return `${RS_GROUP_PATH}/namespaces/${namespace}/replicasets`;
}

/** A ReplicaSet as a client would send it on create. */
export function replicaSet(name: string, namespace?: string): Record<string, unknown> {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: {
      name,
      ...(namespace ? { namespace } : {}),
      labels: { app: 'bench', tier: 'frontend', 'pod-template-hash': '5d8f7c9b6' },
      annotations: { 'deployment.example.com/revision': '3', 'deployment.example.com/desired-replicas': '3' },
    },
    spec: {
      replicas: 3,
      selector: { matchLabels: { app: 'bench', 'pod-template-hash': '5d8f7c9b6' } },
      template: {
        metadata: { labels: { app: 'bench', tier: 'frontend', 'pod-template-hash': '5d8f7c9b6' } },
        spec: {
          containers: [
            {
              name: 'web',
              image: 'registry.example.com/bench/web:1.24.3',
              args: ['--listen=:8080', '--log-level=info'],
              ports: [{ name: 'http', containerPort: 8080, protocol: 'TCP' }],
              env: [
                { name: 'MODE', value: 'production' },
                { name: 'POD_IP', valueFrom: { fieldRef: { apiVersion: 'v1', fieldPath: 'status.podIP' } } },
              ],
              resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
              readinessProbe: { httpGet: { path: '/ready', port: 'http' }, periodSeconds: 5 },
            },
          ],
        },
      },
    },
  };
}

/**
 * A request body with the object's name left open: `before + name + after`, so the load
 * generator can send a fresh name per create without serialising anything.
 */
export function createBodyTemplate(namespace: string): { before: string; after: string } {
  const marker = '__BENCH_NAME__';
  const text = JSON.stringify(replicaSet(marker, namespace));
  const at = text.indexOf(marker);
  return { before: text.slice(0, at), after: text.slice(at + marker.length) };
}

/**
 * `object` (a ReplicaSet as the server answers it) as text split around its name: what a
 * reference writes to stand for the same object (watch fan-out compares equal bytes).
 */
export function objectTextTemplate(object: Record<string, unknown>): { before: string; after: string } {
  const marker = '__BENCH_NAME__';
  const text = JSON.stringify({ ...object, metadata: { ...(object.metadata as Record<string, unknown>), name: marker } });
  const at = text.indexOf(marker);
  return { before: text.slice(0, at), after: text.slice(at + marker.length) };
}

export interface StoredEntry {
  key: string;
  value: Buffer;
}

/**
 * Stored values cloned from `template` (an object as the server stores it: the API's view
 * without `metadata.resourceVersion`), each with its own name, namespace and uid, under
 * upstream's key layout `/registry/replicasets/<namespace>/<name>`.
 */
export function* storedReplicaSets(template: Record<string, unknown>, namespace: string, count: number, prefix = 'rs-'): Generator<StoredEntry> {
  const meta = template.metadata as Record<string, unknown>;
  for (let i = 0; i < count; i++) {
    const name = `${prefix}${String(i).padStart(6, '0')}`;
    const object = { ...template, metadata: { ...meta, name, namespace, uid: randomUUID() } };
    yield { key: `/registry/replicasets/${namespace}/${name}`, value: Buffer.from(JSON.stringify(object)) };
  }
}

/** The stored form of an object the API returned: the same JSON without resourceVersion. */
export function storedFormOf(apiObject: Record<string, unknown>): Record<string, unknown> {
  const { resourceVersion: _rv, ...meta } = apiObject.metadata as Record<string, unknown>;
  return { ...apiObject, metadata: meta };
}
