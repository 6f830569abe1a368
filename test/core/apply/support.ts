/** Shared set-up of the server-side apply tests: a ReplicaSet configuration and request helpers. */
import type { ApiObject, Core, RequestContext, ResourceTarget, WriteOptions } from '../../../src/core';

export const ctx: RequestContext = { user: { username: 'admin', groups: ['system:masters'] }, userAgent: 'kubectl/v1.32.4 (linux/amd64) kubernetes/abc' };
export const T0 = Date.UTC(2026, 0, 1, 12);
export const at = (seconds: number) => new Date(T0 + seconds * 1000).toISOString().replace('.000Z', 'Z');

/** The namespace the helpers address; tests on a shared etcd use a fresh one each. */
export const where = { namespace: 'default' };
let namespaces = 0;

/** Create a fresh namespace and point the helpers at it. */
export async function freshNamespace(core: Core): Promise<string> {
  where.namespace = `ssa-${++namespaces}-${process.pid}`;
  await core.create({ group: '', version: 'v1', resource: 'namespaces' }, { metadata: { name: where.namespace } }, {}, ctx);
  return where.namespace;
}

export const rs = (name?: string, subresource?: string): ResourceTarget => ({
  group: 'apps',
  version: 'v1',
  resource: 'replicasets',
  namespace: where.namespace,
  name,
  subresource,
});

/** A mutable copy of an object read from the core (reads are shared and frozen). */
export function copy<T>(obj: T): T {
  return JSON.parse(JSON.stringify(obj)) as T;
}

export interface RsOptions {
  replicas?: number;
  image?: string;
  containers?: Array<Record<string, unknown>>;
}

/** An applied ReplicaSet configuration (only what its manager cares about). */
export function rsConfig(options: RsOptions = {}): ApiObject {
  const spec: Record<string, unknown> = {
    selector: { matchLabels: { app: 'web' } },
    template: { metadata: { labels: { app: 'web' } }, spec: { containers: options.containers ?? [{ name: 'nginx', image: options.image ?? 'nginx:1.27' }] } },
  };
  if (options.replicas !== undefined) spec.replicas = options.replicas;
  return { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web' }, spec };
}

export function apply(core: Core, body: unknown, manager: string, extra: WriteOptions = {}, target = rs('web')) {
  return core.patch(target, { type: 'apply', body }, { fieldManager: manager, ...extra }, ctx);
}

/** `manager(operation)` → fieldsV1 of each entry, in stored order. */
export function ownership(obj: ApiObject): Array<[string, unknown]> {
  return (obj.metadata?.managedFields ?? []).map((e) => [`${e.manager}(${e.operation}${e.subresource ? `/${e.subresource}` : ''})`, e.fieldsV1]);
}

export const nginxFields = { 'k:{"name":"nginx"}': { '.': {}, 'f:image': {}, 'f:name': {} } };
export const templateFields = { 'f:metadata': { 'f:labels': { 'f:app': {} } }, 'f:spec': { 'f:containers': nginxFields } };
