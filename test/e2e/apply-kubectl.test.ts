/**
 * Unmodified kubectl 1.32 against the real server process, with its default validation:
 * server-side apply (create, change, a conflict between two managers, `--force-conflicts`),
 * client-side apply twice with a change, `label`, `annotate`, `patch --type=json|merge|strategic`
 * and `scale`, checking the stored objects and their managedFields against what upstream writes
 * for the same sequence. Both backends.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { ServerProcess } from '../gateway/support/server-process';
import { startServerOnBackend } from './support/backend';
import { kubectlFor } from './support/kubectl';
import { webReplicaSetYaml } from './support/manifests';
import { API_ONLY } from '../gateway/support/server-process';

function csaReplicaSet(containers: string): string {
  return `apiVersion: apps/v1
kind: ReplicaSet
metadata:
  name: csa
  namespace: ssa
spec:
  replicas: 1
  selector:
    matchLabels: {app: csa}
  template:
    metadata:
      labels: {app: csa}
    spec:
      containers:
${containers}`;
}

function configMap(data: Record<string, string>): string {
  return `apiVersion: v1
kind: ConfigMap
metadata:
  name: conf
  namespace: ssa
data:
${Object.entries(data)
  .map(([k, v]) => `  ${k}: "${v}"`)
  .join('\n')}
`;
}

interface Entry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: unknown;
  subresource?: string;
}

/** Entries with their time reduced to whether it is set, ordered by manager (times differ run to run). */
function entries(obj: { metadata: { managedFields?: Entry[] } }): Entry[] {
  return (obj.metadata.managedFields ?? [])
    .map((e) => ({ ...e, time: e.time ? 'set' : undefined }))
    .sort((a, b) => {
      const x = `${a.manager} ${a.subresource ?? ''}`;
      const y = `${b.manager} ${b.subresource ?? ''}`;
      return x < y ? -1 : x > y ? 1 : 0;
    });
}

/** upstream's order of entries: Apply before Update, then by time. */
function expectUpstreamOrder(list: Entry[]): void {
  const keys = list.map((e) => [e.operation === 'Apply' ? 0 : 1, e.time ? Date.parse(e.time) : 0] as const);
  for (let i = 1; i < keys.length; i++) {
    const [op0, t0] = keys[i - 1]!;
    const [op1, t1] = keys[i]!;
    expect(op0 < op1 || (op0 === op1 && t0 <= t1)).toBe(true);
  }
}

const nginx = { 'k:{"name":"nginx"}': { '.': {}, 'f:image': {}, 'f:name': {} } };
const template = { 'f:metadata': { 'f:labels': { 'f:app': {} } }, 'f:spec': { 'f:containers': nginx } };

describe.each([
  ['embedded', false],
  ['etcd', true],
])('kubectl apply, patch, label, annotate and scale (%s store)', (_name, useEtcd) => {
  let server: ServerProcess;

  const kubectl = kubectlFor(() => server);
  const file = async (name: string, text: string) => {
    const p = path.join(server.dataDir, name);
    await writeFile(p, text);
    return p;
  };
  const getJson = async (...args: string[]) => JSON.parse(await kubectl('-n', 'ssa', 'get', ...args, '-o', 'json', '--show-managed-fields'));

  beforeAll(async () => {
    server = await startServerOnBackend(useEtcd, ['--vendor', 'kubernetes', ...API_ONLY]);
    await kubectl('create', 'namespace', 'ssa');
  });

  afterAll(async () => {
    await server?.stop();
  });

  it('applies server-side: creates, changes, conflicts between managers, and forces', async () => {
    expect(await kubectl('apply', '--server-side', '-f', await file('rs2.yaml', webReplicaSetYaml('ssa', 2)))).toBe('replicaset.apps/web serverside-applied\n');
    let rs = await getJson('rs', 'web');
    expect(entries(rs)).toEqual([
      {
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'apps/v1',
        time: 'set',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': { 'f:replicas': {}, 'f:selector': {}, 'f:template': template } },
      },
    ]);
    await kubectl('apply', '--server-side', '-f', await file('rs3.yaml', webReplicaSetYaml('ssa', 3)));
    expect((await getJson('rs', 'web')).spec.replicas).toBe(3);

    const rs5 = await file('rs5.yaml', webReplicaSetYaml('ssa', 5));
    await expect(kubectl('apply', '--server-side', '--field-manager=other', '-f', rs5)).rejects.toThrow(
      'error: Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas',
    );
    expect((await getJson('rs', 'web')).spec.replicas).toBe(3);
    await kubectl('apply', '--server-side', '--field-manager=other', '--force-conflicts', '-f', rs5);
    rs = await getJson('rs', 'web');
    expect(rs.spec.replicas).toBe(5);
    expect(entries(rs)).toEqual([
      {
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'apps/v1',
        time: 'set',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': { 'f:selector': {}, 'f:template': template } },
      },
      {
        manager: 'other',
        operation: 'Apply',
        apiVersion: 'apps/v1',
        time: 'set',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': { 'f:replicas': {}, 'f:selector': {}, 'f:template': template } },
      },
    ]);
  });

  it('labels, annotates, patches with each type and scales, recording each manager as upstream does', async () => {
    expect(await kubectl('-n', 'ssa', 'label', 'rs', 'web', 'tier=frontend')).toBe('replicaset.apps/web labeled\n');
    expect(await kubectl('-n', 'ssa', 'annotate', 'rs', 'web', 'note=x')).toBe('replicaset.apps/web annotated\n');
    await kubectl('-n', 'ssa', 'patch', 'rs', 'web', '--type=json', '-p', '[{"op":"add","path":"/spec/minReadySeconds","value":5}]');
    expect((await getJson('rs', 'web')).spec.minReadySeconds).toBe(5);
    await kubectl('-n', 'ssa', 'patch', 'rs', 'web', '--type=merge', '-p', '{"spec":{"minReadySeconds":6}}');
    await kubectl(
      '-n',
      'ssa',
      'patch',
      'rs',
      'web',
      '--type=strategic',
      '-p',
      '{"spec":{"template":{"spec":{"containers":[{"name":"side","image":"busybox"}]}}}}',
    );
    expect(await kubectl('-n', 'ssa', 'scale', 'rs', 'web', '--replicas=4')).toBe('replicaset.apps/web scaled\n');
    // A failing JSON patch test is upstream's generic 422.
    await expect(kubectl('-n', 'ssa', 'patch', 'rs', 'web', '--type=json', '-p', '[{"op":"test","path":"/spec/replicas","value":9}]')).rejects.toThrow(
      'the server rejected our request due to an error in our request',
    );

    const rs = await getJson('rs', 'web');
    expect(rs.metadata.labels).toEqual({ app: 'web', tier: 'frontend' });
    expect(rs.metadata.annotations).toEqual({ note: 'x' });
    expect(rs.spec).toMatchObject({ replicas: 4, minReadySeconds: 6 });
    expect(rs.spec.template.spec.containers.map((c: { name: string }) => c.name)).toEqual(['nginx', 'side']);
    expectUpstreamOrder(rs.metadata.managedFields);
    const update = (manager: string, fieldsV1: unknown, extra: Entry = {}): Entry => ({
      manager,
      operation: 'Update',
      apiVersion: 'apps/v1',
      time: 'set',
      fieldsType: 'FieldsV1',
      fieldsV1,
      ...extra,
    });
    expect(entries(rs)).toEqual([
      {
        manager: 'kubectl',
        operation: 'Apply',
        apiVersion: 'apps/v1',
        time: 'set',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': { 'f:selector': {}, 'f:template': template } },
      },
      // `kubectl scale` writes /scale without a field manager: its User-Agent names it; the
      // Scale's entry comes back to the object without a time (upstream's ScaleHandler).
      update('kubectl', { 'f:spec': { 'f:replicas': {} } }, { time: undefined, subresource: 'scale' }),
      update('kubectl-annotate', { 'f:metadata': { 'f:annotations': { '.': {}, 'f:note': {} } } }),
      update('kubectl-label', { 'f:metadata': { 'f:labels': { 'f:tier': {} } } }),
      update('kubectl-patch', {
        'f:spec': {
          'f:minReadySeconds': {},
          'f:template': {
            'f:spec': {
              'f:containers': {
                'k:{"name":"side"}': {
                  '.': {},
                  'f:image': {},
                  'f:imagePullPolicy': {},
                  'f:name': {},
                  'f:resources': {},
                  'f:terminationMessagePath': {},
                  'f:terminationMessagePolicy': {},
                },
              },
            },
          },
        },
      }),
      {
        manager: 'other',
        operation: 'Apply',
        apiVersion: 'apps/v1',
        time: 'set',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': { 'f:selector': {}, 'f:template': template } },
      },
    ]);
  });

  it('applies client-side twice with a change, then server-side as kubectl, which takes over without conflicts', async () => {
    expect(await kubectl('apply', '-f', await file('cm1.yaml', configMap({ a: '1', b: '2' })))).toBe('configmap/conf created\n');
    expect(await kubectl('apply', '-f', await file('cm2.yaml', configMap({ a: '1', c: '3' })))).toBe('configmap/conf configured\n');
    let cm = await getJson('configmap', 'conf');
    expect(cm.data).toEqual({ a: '1', c: '3' });
    const lastApplied = 'kubectl.kubernetes.io/last-applied-configuration';
    expect(JSON.parse(cm.metadata.annotations[lastApplied])).toEqual({
      apiVersion: 'v1',
      data: { a: '1', c: '3' },
      kind: 'ConfigMap',
      metadata: { annotations: {}, name: 'conf', namespace: 'ssa' },
    });
    expect(entries(cm)).toEqual([
      {
        manager: 'kubectl-client-side-apply',
        operation: 'Update',
        apiVersion: 'v1',
        time: 'set',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { '.': {}, 'f:a': {}, 'f:c': {} }, 'f:metadata': { 'f:annotations': { '.': {}, [`f:${lastApplied}`]: {} } } },
      },
    ]);
    // kubectl's server-side apply takes over what its client-side apply set, and keeps the annotation in step.
    expect(await kubectl('apply', '--server-side', '-f', await file('cm3.yaml', configMap({ a: '9', c: '3' })))).toBe('configmap/conf serverside-applied\n');
    cm = await getJson('configmap', 'conf');
    expect(cm.data).toEqual({ a: '9', c: '3' });
    expect(JSON.parse(cm.metadata.annotations[lastApplied]).data).toEqual({ a: '9', c: '3' });
    // kubectl first moves its client-side apply entry to `kubectl` (Apply) and the annotation to
    // `kubectl-last-applied` with a JSON patch of managedFields, which the server honours.
    expect(entries(cm)).toEqual([
      { manager: 'kubectl', operation: 'Apply', apiVersion: 'v1', time: 'set', fieldsType: 'FieldsV1', fieldsV1: { 'f:data': { 'f:a': {}, 'f:c': {} } } },
      {
        manager: 'kubectl-last-applied',
        operation: 'Apply',
        apiVersion: 'v1',
        time: undefined,
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:metadata': { 'f:annotations': { [`f:${lastApplied}`]: {} } } },
      },
    ]);
  });

  it('applies a ReplicaSet client-side twice: the strategic merge patch kubectl computes reorders and merges containers', async () => {
    const first = `      - {name: a, image: "a:1"}\n      - {name: b, image: "b:1"}\n`;
    const second = `      - {name: c, image: "c:1"}\n      - {name: a, image: "a:2"}\n`;
    expect(await kubectl('apply', '-f', await file('csa1.yaml', csaReplicaSet(first)))).toBe('replicaset.apps/csa created\n');
    expect(await kubectl('apply', '-f', await file('csa2.yaml', csaReplicaSet(second)))).toBe('replicaset.apps/csa configured\n');
    const rs = await getJson('rs', 'csa');
    expect(rs.spec.template.spec.containers.map((c: { name: string; image: string }) => `${c.name}=${c.image}`)).toEqual(['c=c:1', 'a=a:2']);
    expect(entries(rs).map((e) => `${e.manager} ${e.operation}`)).toEqual(['kubectl-client-side-apply Update']);
    const containers = rs.metadata.managedFields[0].fieldsV1['f:spec']['f:template']['f:spec']['f:containers'] as Record<string, unknown>;
    expect(Object.keys(containers)).toEqual(['k:{"name":"a"}', 'k:{"name":"c"}']);
  });
});
