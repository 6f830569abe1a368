/** An in-process core on a fresh embedded store for controller and deletion tests. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCore, type ApiObject, type Core, type OwnerReference, type RequestContext, type ResourceTarget } from '../../src/core';
import { createStore, type Store } from '../../src/store';
import { createNaming } from '../../src/naming';
import { buildFeatureGates } from '../../src/features';
import { StatusError } from '../../src/status';
import type { Clock } from '../../src/clock';

export const ctx: RequestContext = { user: { username: 'admin', groups: ['system:masters'] }, userAgent: 'kubectl/v1.32.4 (linux/amd64) kubernetes/abc' };
export const rs = (ns: string, name?: string): ResourceTarget => ({ group: 'apps', version: 'v1', resource: 'replicasets', namespace: ns, name });
export const pods = (ns: string, name?: string): ResourceTarget => ({ group: '', version: 'v1', resource: 'pods', namespace: ns, name });
export const cms = (ns: string, name?: string): ResourceTarget => ({ group: '', version: 'v1', resource: 'configmaps', namespace: ns, name });

export interface TestCore {
  core: Core;
  store: Store;
  close(): Promise<void>;
}

export async function openCore(gates: Record<string, boolean> = {}, clock?: Clock): Promise<TestCore> {
  const dir = mkdtempSync(join(tmpdir(), 'keelson-ctrl-'));
  const store = createStore({ kind: 'embedded', dataDir: dir });
  const core = createCore({
    store,
    naming: createNaming('kubernetes'),
    features: buildFeatureGates(gates).gates,
    compactionIntervalMs: 0,
    ...(clock ? { clock } : {}),
  });
  await core.ready();
  return {
    core,
    store,
    async close() {
      await core.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function replicaSet(name: string): ApiObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    },
  };
}

export function ownerRef(owner: ApiObject, blockOwnerDeletion = true): OwnerReference {
  return { apiVersion: owner.apiVersion!, kind: owner.kind!, name: owner.metadata!.name!, uid: owner.metadata!.uid!, controller: true, blockOwnerDeletion };
}

export function pod(name: string, owners: OwnerReference[] = [], extra: { finalizers?: string[]; nodeName?: string } = {}): ApiObject {
  const metadata: Record<string, unknown> = { name, labels: { app: 'web' } };
  if (owners.length) metadata.ownerReferences = owners;
  if (extra.finalizers) metadata.finalizers = extra.finalizers;
  const spec: Record<string, unknown> = { containers: [{ name: 'c', image: 'nginx' }] };
  if (extra.nodeName) spec.nodeName = extra.nodeName;
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec };
}

export async function getOrUndefined(core: Core, target: ResourceTarget): Promise<ApiObject | undefined> {
  try {
    return await core.get(target, {}, ctx);
  } catch (err) {
    if (StatusError.is(err, 'NotFound')) return undefined;
    throw err;
  }
}

/** The controllers act asynchronously: tests wait for what they do with the shared poller. */
export { eventually } from '../support/eventually';

export { statusOf } from '../support/status';
