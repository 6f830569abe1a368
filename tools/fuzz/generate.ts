/**
 * Hostile requests, generated from a seed: the shapes that once crashed or stalled the server
 * (deep nesting, copy amplification, alias bombs, strategic-merge directives, type confusion)
 * and random mutations of valid bodies, in every content type and patch type. Each request names
 * its class so a failure can be turned into a regression case.
 */
import { encode as encodeCbor } from 'cbor-x';
import YAML from 'yaml';
import { seededRandom } from '../../src/util/seeded-random';

export interface FuzzRequest {
  cls: string;
  method: 'POST' | 'PUT' | 'PATCH';
  path: string;
  contentType: string;
  body: Buffer;
}

export const rng = seededRandom;

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export const NAMESPACE = 'fuzz';

/** The objects the fuzzer writes over, created before the run. */
export function seedObjects(): Array<{ path: string; body: Json }> {
  const ns = NAMESPACE;
  return [
    { path: '/api/v1/namespaces', body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } } },
    ...Object.values(VALID).map((v) => ({ path: v.collection, body: v.object('seed') })),
  ];
}

interface Valid {
  collection: string;
  object(name: string): { [k: string]: Json };
}

const podSpec = (): Json => ({ containers: [{ name: 'c', image: 'nginx', ports: [{ containerPort: 80, protocol: 'TCP' }] }] });

/** One valid body per type, to mutate and to patch. */
const VALID: Record<string, Valid> = {
  configmaps: {
    collection: `/api/v1/namespaces/${NAMESPACE}/configmaps`,
    object: (name) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { app: 'x' }, annotations: { note: 'y' } }, data: { a: '1', b: '2' } }),
  },
  secrets: {
    collection: `/api/v1/namespaces/${NAMESPACE}/secrets`,
    object: (name) => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name }, type: 'Opaque', data: { k: 'dmFsdWU=' }, stringData: { s: 'plain' } }),
  },
  pods: {
    collection: `/api/v1/namespaces/${NAMESPACE}/pods`,
    object: (name) => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name, labels: { app: 'web' } }, spec: podSpec() }),
  },
  replicasets: {
    collection: `/apis/apps/v1/namespaces/${NAMESPACE}/replicasets`,
    object: (name) => ({
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['a', 'b'] }] },
        template: { metadata: { labels: { app: 'web', tier: 'a' } }, spec: podSpec() },
      },
    }),
  },
  roles: {
    collection: `/apis/rbac.authorization.k8s.io/v1/namespaces/${NAMESPACE}/roles`,
    object: (name) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'Role',
      metadata: { name },
      rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list'] }],
    }),
  },
  rolebindings: {
    collection: `/apis/rbac.authorization.k8s.io/v1/namespaces/${NAMESPACE}/rolebindings`,
    object: (name) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name },
      subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }],
      roleRef: { kind: 'Role', name: 'seed', apiGroup: 'rbac.authorization.k8s.io' },
    }),
  },
  clusterroles: {
    collection: '/apis/rbac.authorization.k8s.io/v1/clusterroles',
    object: (name) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRole',
      metadata: { name: `fuzz-${name}` },
      rules: [{ nonResourceURLs: ['/healthz'], verbs: ['get'] }],
      aggregationRule: { clusterRoleSelectors: [{ matchLabels: { agg: 'x' } }] },
    }),
  },
  events: {
    collection: `/apis/events.k8s.io/v1/namespaces/${NAMESPACE}/events`,
    object: (name) => ({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name },
      eventTime: '2026-01-01T00:00:00.000000Z',
      reportingController: 'fuzz/controller',
      reportingInstance: 'i-1',
      action: 'Test',
      reason: 'Fuzz',
      type: 'Normal',
      regarding: { kind: 'Pod', name: 'seed', namespace: NAMESPACE },
    }),
  },
  serviceaccounts: {
    collection: `/api/v1/namespaces/${NAMESPACE}/serviceaccounts`,
    object: (name) => ({ apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name }, secrets: [{ name: 's' }] }),
  },
};

const TYPES = Object.keys(VALID);
const CONTENT_TYPES = ['application/json', 'application/yaml', 'application/cbor'] as const;
const PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
] as const;
const QUERIES = ['', '?fieldValidation=Strict', '?fieldValidation=Ignore', '?dryRun=All', '?fieldManager=fuzz', '?fieldValidation=Warn&dryRun=All'];

function pick<T>(r: () => number, items: readonly T[]): T {
  return items[Math.floor(r() * items.length)]!;
}

function encodeAs(contentType: string, value: Json): Buffer {
  if (contentType === 'application/yaml' || contentType === 'application/apply-patch+yaml') return Buffer.from(YAML.stringify(value));
  if (contentType === 'application/cbor') return Buffer.from(encodeCbor(value));
  return Buffer.from(JSON.stringify(value));
}

/** Nesting `depth` deep, as arrays or objects. */
export function deep(depth: number, asArrays: boolean): string {
  return asArrays ? '['.repeat(depth) + ']'.repeat(depth) : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** A random JSON value, sometimes of a hostile shape. */
function junk(r: () => number, depth = 0): Json {
  const x = r();
  if (depth > 3 || x < 0.15) return null;
  if (x < 0.25) return Math.floor(r() * 1e6) - 5e5;
  if (x < 0.3) return 1.5e308;
  if (x < 0.35) return true;
  if (x < 0.5) return pick(r, ['', 'x', '$patch', 'delete', 'replace', 'merge', 'In', 'NotIn', 'Exists', '*', '-1', 'a'.repeat(300), '\u0000', '💥']);
  if (x < 0.7) return Array.from({ length: Math.floor(r() * 3) }, () => junk(r, depth + 1));
  const o: { [k: string]: Json } = {};
  for (let i = 0; i < Math.floor(r() * 3); i++)
    o[pick(r, ['name', 'key', 'values', 'operator', 'kind', 'apiGroup', '$patch', '$retainKeys', 'image', 'x'])] = junk(r, depth + 1);
  return o;
}

/** Replace one random node of `value` (a deep copy) with junk. */
function mutate(r: () => number, value: Json): Json {
  const copy = JSON.parse(JSON.stringify(value)) as Json;
  const nodes: Array<{ parent: Json[] | { [k: string]: Json }; key: string | number }> = [];
  const walk = (v: Json) => {
    if (Array.isArray(v)) v.forEach((item, i) => (nodes.push({ parent: v, key: i }), walk(item)));
    else if (v && typeof v === 'object') for (const k of Object.keys(v)) nodes.push({ parent: v, key: k }), walk(v[k]!);
  };
  walk(copy);
  const n = 1 + Math.floor(r() * 3);
  for (let i = 0; i < n && nodes.length > 0; i++) {
    const { parent, key } = pick(r, nodes);
    (parent as Record<string | number, Json>)[key] = junk(r);
  }
  return copy;
}

/** The fixed hostile shapes of the issue that found them, against `type`. */
function hostile(r: () => number, type: string, name: string): FuzzRequest {
  const valid = VALID[type]!;
  const item = `${valid.collection}/seed`;
  const patch = (cls: string, contentType: string, body: string | Buffer): FuzzRequest => ({
    cls,
    method: 'PATCH',
    path: item + pick(r, QUERIES),
    contentType,
    body: Buffer.from(body),
  });
  const depth = pick(r, [200, 1000, 5000, 10_000, 100_000]);
  switch (Math.floor(r() * 12)) {
    case 0:
      return patch('deep-apply-yaml', 'application/apply-patch+yaml', deep(depth, r() < 0.5));
    case 1:
      return patch('deep-merge', 'application/merge-patch+json', `{"metadata":{"annotations":{"a":"b"}},"data":${deep(depth, r() < 0.5)}}`);
    case 2:
      return patch('deep-strategic', 'application/strategic-merge-patch+json', `{"spec":${deep(depth, r() < 0.5)}}`);
    case 3: {
      const body = `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"${name}"},"data":{"x":"y"},"extra":${deep(depth, r() < 0.5)}}`;
      return {
        cls: 'deep-create',
        method: 'POST',
        path: VALID.configmaps!.collection + pick(r, QUERIES),
        contentType: pick(r, ['application/json', 'application/yaml']),
        body: Buffer.from(body),
      };
    }
    case 4: {
      const ops: Json[] = [{ op: 'add', path: '/metadata/annotations/big', value: 'x'.repeat(1024) }];
      for (let i = 0; i < 30; i++) ops.push({ op: 'copy', from: '/metadata/annotations', path: `/metadata/annotations/c${i}` });
      return patch('copy-amplification', 'application/json-patch+json', JSON.stringify(ops));
    }
    case 5: {
      const levels = 8 + Math.floor(r() * 8);
      let yaml = 'a0: &a0 ["x","x","x","x","x","x","x","x","x","x"]\n';
      for (let i = 1; i < levels; i++)
        yaml += `a${i}: &a${i} [${Array(10)
          .fill(`*a${i - 1}`)
          .join(',')}]\n`;
      yaml += `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: seed}\ndata: {x: *a${levels - 1}}\n`;
      return r() < 0.5
        ? patch('yaml-alias-bomb', 'application/apply-patch+yaml', yaml)
        : { cls: 'yaml-alias-bomb', method: 'POST', path: VALID.configmaps!.collection, contentType: 'application/yaml', body: Buffer.from(yaml) };
    }
    case 6:
      return patch('self-alias', 'application/apply-patch+yaml', 'a: &a [*a]\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: seed}\n');
    case 7:
      return patch(
        'smp-directive',
        'application/strategic-merge-patch+json',
        JSON.stringify(
          pick(r, [
            { $patch: 'garbage' },
            { $setElementOrder: 'x' },
            { subjects: [{ $patch: 'delete' }], '$setElementOrder/subjects': 'x' },
            { spec: { containers: [{ image: 'x' }] } },
            { spec: { template: { spec: { containers: [{ image: 'x' }, { $patch: 'delete' }] } } } },
            { spec: { containers: [{ name: 'c', $patch: 'replace' }], $retainKeys: 'x' } },
            { metadata: { $deleteFromPrimitiveList: 'x' } },
            { spec: { containers: 'x' } },
            { rules: [{ $patch: 'merge', verbs: null }] },
            { metadata: { labels: { $patch: 'replace', a: { b: 1 } } } },
          ] as Json[]),
        ),
      );
    case 8:
      return {
        cls: 'type-confusion',
        method: 'POST',
        path: pick(r, [VALID.rolebindings!.collection, VALID.replicasets!.collection, VALID.roles!.collection, VALID.clusterroles!.collection]),
        contentType: 'application/json',
        body: Buffer.from(
          JSON.stringify(
            pick(r, [
              { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name }, subjects: [null], roleRef: null },
              { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name }, subjects: 'x', roleRef: { kind: 1, name: [] } },
              {
                apiVersion: 'apps/v1',
                kind: 'ReplicaSet',
                metadata: { name },
                spec: { selector: { matchExpressions: [{ key: 'a', operator: 'In', values: [null] }] }, template: { metadata: { labels: { a: 'b' } } } },
              },
              { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name }, spec: { selector: { matchExpressions: 'x' } } },
              { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name }, spec: { selector: { matchLabels: { a: 1 } }, template: null } },
              { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name }, rules: [null, { verbs: 'get' }] },
              {
                apiVersion: 'rbac.authorization.k8s.io/v1',
                kind: 'ClusterRole',
                metadata: { name: `fuzz-${name}` },
                aggregationRule: { clusterRoleSelectors: [null, 'x'] },
              },
              { apiVersion: 'v1', kind: 'ConfigMap', metadata: [], data: null },
              {
                apiVersion: 'v1',
                kind: 'ConfigMap',
                metadata: { name, labels: 'x', annotations: [1], ownerReferences: [null], finalizers: 'x', managedFields: 'x' },
              },
            ] as Json[]),
          ),
        ),
      };
    case 9:
      return patch('apply-wrong-types', 'application/apply-patch+yaml', YAML.stringify(mutate(r, { ...valid.object('seed'), metadata: { name: 'seed' } })));
    case 10: {
      const ops = pick(r, [
        [{ op: 'move', from: '/metadata', path: '/metadata/x' }],
        [{ op: 'add', path: '/spec/containers/-1', value: {} }],
        [{ op: 'copy', from: '/nope', path: '/x' }],
        [{ op: 'test', path: '/metadata/name', value: { deep: deep(50, true) } }],
        [{ op: 'replace', path: '', value: 5 }],
        [{ op: 'add', path: '/metadata/labels/~2', value: 'x' }],
        [
          { op: 'remove', path: '/data' },
          { op: 'remove', path: '/data' },
        ],
        { op: 'add' },
        [null, 1, 'x'],
        Array.from({ length: 20_000 }, () => ({ op: 'test', path: '/kind', value: 'ConfigMap' })),
      ] as Json[]);
      return patch('json-patch-shapes', 'application/json-patch+json', JSON.stringify(ops));
    }
    default: {
      const bytes = Buffer.alloc(64 + Math.floor(r() * 256));
      for (let i = 0; i < bytes.length; i++) bytes[i] = Math.floor(r() * 256);
      const ct = pick(r, [...CONTENT_TYPES, 'application/vnd.kubernetes.protobuf', ...PATCH_TYPES]);
      return ct.includes('patch')
        ? patch('random-bytes', ct, bytes)
        : { cls: 'random-bytes', method: 'POST', path: valid.collection, contentType: ct, body: bytes };
    }
  }
}

/** Request number `i` of the run seeded with `seed`. */
export function fuzzRequest(seed: number, i: number): FuzzRequest {
  const r = rng(seed * 1_000_003 + i);
  const type = pick(r, TYPES);
  const valid = VALID[type]!;
  const name = `f${i}`;
  if (r() < 0.45) return hostile(r, type, name);
  const body = mutate(r, valid.object(name));
  const x = r();
  if (x < 0.4) {
    const contentType = pick(r, CONTENT_TYPES);
    return { cls: 'mutated-create', method: 'POST', path: valid.collection + pick(r, QUERIES), contentType, body: encodeAs(contentType, body) };
  }
  if (x < 0.6) {
    const contentType = pick(r, CONTENT_TYPES);
    return {
      cls: 'mutated-update',
      method: 'PUT',
      path: `${valid.collection}/seed${pick(r, QUERIES)}`,
      contentType,
      body: encodeAs(contentType, { ...(body as object), metadata: { name: 'seed' } } as Json),
    };
  }
  const contentType = pick(r, PATCH_TYPES);
  let patch: Json = body;
  if (contentType === 'application/json-patch+json') {
    patch = [
      {
        op: pick(r, ['add', 'replace', 'remove', 'test', 'copy', 'move']),
        path: pick(r, ['/metadata/labels/x', '/spec', '/data/a', '/metadata/annotations', '/spec/template/spec/containers/0/image', '/rules/0/verbs/-']),
        from: '/metadata/labels',
        value: junk(r),
      },
    ];
  } else if (contentType === 'application/apply-patch+yaml') {
    patch = { ...(body as object), metadata: { name: 'seed' } } as Json;
  }
  const query =
    contentType === 'application/apply-patch+yaml' ? `?fieldManager=fuzz${pick(r, ['', '&force=true', '&fieldValidation=Strict'])}` : pick(r, QUERIES);
  return { cls: 'mutated-patch', method: 'PATCH', path: `${valid.collection}/seed${query}`, contentType, body: encodeAs(contentType, patch) };
}
