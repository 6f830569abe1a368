/**
 * Tables as upstream's printers build them: the columns each served type declares (wide ones at
 * priority 1), the cells of its row, AGE and the other "since" cells from the injected time,
 * upstream's default Name / Created At for types without printers, list metadata on the Table,
 * `includeObject`, and the PartialObjectMetadata forms.
 */
import type { ApiList, ApiObject } from '../../../src/core/api';
import { builtinResources } from '../../../src/core/resources';
import type { ResourceDefinition } from '../../../src/core/resources/definition';
import { asPartialObjectMetadata, asPartialObjectMetadataList, buildTable, humanDuration, podCells } from '../../../src/core/table';
import { createNaming } from '../../../src/naming';

const naming = createNaming('kubernetes');
const defs = builtinResources(naming);
// Of a resource served in two versions, the one the store keeps.
const def = (resource: string): ResourceDefinition => defs.find((d) => d.resource === resource && !d.storedAs)!;
const NOW = Date.parse('2026-01-01T12:00:00Z');
const created = (secondsAgo: number) => new Date(NOW - secondsAgo * 1000).toISOString().replace('.000Z', 'Z');

function table(resource: string, value: ApiObject | ApiList, extra: { includeObject?: 'None' | 'Metadata' | 'Object'; noHeaders?: boolean } = {}) {
  const d = def(resource);
  return buildTable(value, d.table as never, {
    metaApiVersion: 'meta.k8s.io/v1',
    apiVersion: d.group ? `${d.group}/${d.version}` : d.version,
    kind: d.kind,
    ctx: { now: NOW },
    ...extra,
  });
}
const columns = (resource: string) => def(resource).table!.columns.map((c) => `${c.name}${c.priority ? '*' : ''}:${c.type}`);
const cells = (resource: string, obj: ApiObject) => table(resource, obj).rows![0]!.cells;

describe('humanDuration (apimachinery duration.HumanDuration)', () => {
  it.each([
    [-2000, '<invalid>'],
    [-1000, '0s'],
    [0, '0s'],
    [119_000, '119s'],
    [120_000, '2m'],
    [150_000, '2m30s'],
    [10 * 60_000, '10m'],
    [179 * 60_000, '179m'],
    [3 * 3600_000, '3h'],
    [7 * 3600_000 + 59 * 60_000, '7h59m'],
    [47 * 3600_000, '47h'],
    [48 * 3600_000, '2d'],
    [(3 * 24 + 4) * 3600_000, '3d4h'],
    [8 * 24 * 3600_000, '8d'],
    [2 * 365 * 24 * 3600_000, '2y'],
    [(2 * 365 + 30) * 24 * 3600_000, '2y30d'],
    [9 * 365 * 24 * 3600_000, '9y'],
  ])('%i ms is %s', (ms, text) => expect(humanDuration(ms)).toBe(text));
});

describe('columns of each served type, as upstream prints them', () => {
  it.each([
    [
      'replicasets',
      ['Name:string', 'Desired:integer', 'Current:integer', 'Ready:integer', 'Age:string', 'Containers*:string', 'Images*:string', 'Selector*:string'],
    ],
    ['rolebindings', ['Name:string', 'Role:string', 'Age:string', 'Users*:string', 'Groups*:string', 'ServiceAccounts*:string']],
    ['clusterrolebindings', ['Name:string', 'Role:string', 'Age:string', 'Users*:string', 'Groups*:string', 'ServiceAccounts*:string']],
    [
      'pods',
      [
        'Name:string',
        'Ready:string',
        'Status:string',
        'Restarts:string',
        'Age:string',
        'IP*:string',
        'Node*:string',
        'Nominated Node*:string',
        'Readiness Gates*:string',
      ],
    ],
    ['namespaces', ['Name:string', 'Status:string', 'Age:string']],
    ['secrets', ['Name:string', 'Type:string', 'Data:string', 'Age:string']],
    ['configmaps', ['Name:string', 'Data:string', 'Age:string']],
    ['serviceaccounts', ['Name:string', 'Secrets:string', 'Age:string']],
    [
      'events',
      [
        'Last Seen:string',
        'Type:string',
        'Reason:string',
        'Object:string',
        'Subobject*:string',
        'Source*:string',
        'Message:string',
        'First Seen*:string',
        'Count*:string',
        'Name*:string',
      ],
    ],
  ])('%s', (resource, expected) => expect(columns(resource)).toEqual(expected));

  it("leaves Roles and ClusterRoles to upstream's default (no printers there either)", () => {
    expect(def('roles').table).toBeUndefined();
    expect(def('clusterroles').table).toBeUndefined();
    const t = table('roles', { metadata: { name: 'r', creationTimestamp: '2026-01-01T10:00:00Z' } });
    expect(t.columnDefinitions!.map((c) => [c.name, c.type, c.format])).toEqual([
      ['Name', 'string', 'name'],
      ['Created At', 'date', ''],
    ]);
    expect(t.rows![0]!.cells).toEqual(['r', '2026-01-01T10:00:00Z']);
    expect(table('roles', { apiVersion: 'x', kind: 'RoleList', metadata: {}, items: [] }).rows).toBeNull();
  });

  it('writes every column field, format and priority included', () => {
    expect(def('replicasets').table!.columns[5]).toEqual({
      name: 'Containers',
      type: 'string',
      format: '',
      description: 'Names of each container in the template.',
      priority: 1,
    });
  });
});

describe('rows', () => {
  it('ReplicaSet: desired, current, ready, age, then containers, images and the selector', () => {
    const rs = {
      metadata: { name: 'web', creationTimestamp: created(150) },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'In', values: ['b', 'a'] }] },
        template: {
          spec: {
            containers: [
              { name: 'nginx', image: 'nginx:1.27' },
              { name: 'side', image: 'busybox' },
            ],
          },
        },
      },
      status: { replicas: 2, readyReplicas: 1 },
    };
    expect(cells('replicasets', rs)).toEqual(['web', 3, 2, 1, '2m30s', 'nginx,side', 'nginx:1.27,busybox', 'app=web,tier in (a,b)']);
    expect(cells('replicasets', { metadata: { name: 'x' }, spec: { replicas: 0 } })).toEqual(['x', 0, 0, 0, '<unknown>', '', '', '<none>']);
  });

  it('RoleBinding: Kind/name of the role, then users, groups and namespace/name service accounts', () => {
    const rb = {
      metadata: { name: 'rb', creationTimestamp: created(30) },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [
        { kind: 'User', name: 'alice' },
        { kind: 'Group', name: 'devs' },
        { kind: 'ServiceAccount', name: 'sa', namespace: 'ns' },
        { kind: 'User', name: 'bob' },
      ],
    };
    expect(cells('rolebindings', rb)).toEqual(['rb', 'ClusterRole/view', '30s', 'alice, bob', 'devs', 'ns/sa']);
  });

  it('Secret, ConfigMap, ServiceAccount, Namespace count and show what upstream does', () => {
    expect(cells('secrets', { metadata: { name: 's', creationTimestamp: created(5) }, type: 'Opaque', data: { a: 'Yg==', b: '' } })).toEqual([
      's',
      'Opaque',
      2,
      '5s',
    ]);
    expect(cells('configmaps', { metadata: { name: 'c' }, data: { a: 'b' }, binaryData: { x: 'AA==' } })).toEqual(['c', 2, '<unknown>']);
    expect(cells('serviceaccounts', { metadata: { name: 'sa' }, secrets: [{ name: 't' }] })).toEqual(['sa', 1, '<unknown>']);
    expect(cells('namespaces', { metadata: { name: 'n', creationTimestamp: created(3 * 86400) }, status: { phase: 'Active' } })).toEqual(['n', 'Active', '3d']);
  });

  it('Event: the events.k8s.io fields through the core printer (series, singleton count, source)', () => {
    const ev = {
      metadata: { name: 'e1' },
      eventTime: '2026-01-01T11:59:00.000000Z',
      reportingController: 'ctl',
      reportingInstance: 'ctl-1',
      reason: 'Scaled',
      type: 'Normal',
      note: ' scaled up \n',
      regarding: { kind: 'ReplicaSet', name: 'web', fieldPath: 'spec' },
    };
    expect(cells('events', ev)).toEqual(['60s', 'Normal', 'Scaled', 'replicaset/web', 'spec', 'ctl, ctl-1', 'scaled up', '60s', 1, 'e1']);
    const series = {
      ...ev,
      series: { count: 4, lastObservedTime: '2026-01-01T11:59:50.000000Z' },
      deprecatedSource: { component: 'kubelet' },
      regarding: { kind: 'Node' },
    };
    expect(cells('events', series)).toEqual(['10s', 'Normal', 'Scaled', 'node', '', 'kubelet, ctl-1', 'scaled up', '60s', 4, 'e1']);
  });
});

describe('pod status cells (printPod)', () => {
  const now = NOW;
  const running = { ready: true, restartCount: 0, state: { running: {} } };
  it('counts ready containers and shows the phase', () => {
    expect(
      podCells({ spec: { containers: [{}, {}] }, status: { phase: 'Running', containerStatuses: [running, { ...running, ready: false }] } }, now),
    ).toMatchObject({ ready: '1/2', status: 'Running', restarts: '0' });
  });
  it('shows waiting reasons and restarts with the age of the last one', () => {
    const crashing = {
      ready: false,
      restartCount: 5,
      state: { waiting: { reason: 'CrashLoopBackOff' } },
      lastState: { terminated: { exitCode: 1, finishedAt: created(90) } },
    };
    expect(podCells({ spec: { containers: [{}] }, status: { phase: 'Running', containerStatuses: [crashing] } }, now)).toMatchObject({
      status: 'CrashLoopBackOff',
      restarts: '5 (90s ago)',
    });
  });
  it('shows init progress, init failures and sidecars', () => {
    const pending = {
      spec: { containers: [{}], initContainers: [{ name: 'a' }, { name: 'b' }] },
      status: {
        phase: 'Pending',
        initContainerStatuses: [
          { name: 'a', state: { terminated: { exitCode: 0 } } },
          { name: 'b', state: { running: {} } },
        ],
      },
    };
    expect(podCells(pending, now).status).toBe('Init:1/2');
    const failed = {
      spec: { containers: [{}], initContainers: [{ name: 'a' }] },
      status: { phase: 'Pending', initContainerStatuses: [{ name: 'a', state: { terminated: { exitCode: 2 } } }] },
    };
    expect(podCells(failed, now).status).toBe('Init:ExitCode:2');
    const sidecar = {
      spec: { containers: [{}], initContainers: [{ name: 's', restartPolicy: 'Always' }] },
      status: { phase: 'Running', initContainerStatuses: [{ name: 's', started: true, ready: true, state: { running: {} } }], containerStatuses: [running] },
    };
    expect(podCells(sidecar, now)).toMatchObject({ ready: '2/2', status: 'Running' });
  });
  it('marks completed pods with a row condition and terminating pods as Terminating', () => {
    const done = podCells(
      { spec: { containers: [{}] }, status: { phase: 'Succeeded', containerStatuses: [{ state: { terminated: { exitCode: 0, reason: 'Completed' } } }] } },
      now,
    );
    expect(done).toMatchObject({
      status: 'Completed',
      conditions: [{ type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' }],
    });
    expect(podCells({ metadata: { deletionTimestamp: created(1) }, spec: { containers: [{}] }, status: { phase: 'Running' } }, now).status).toBe('Terminating');
  });
  it('fills the wide cells with <none> when unset', () => {
    expect(podCells({ spec: { containers: [] }, status: {} }, now)).toMatchObject({
      ip: '<none>',
      node: '<none>',
      nominatedNode: '<none>',
      readinessGates: '<none>',
    });
    const gated = {
      spec: { containers: [], nodeName: 'n1', readinessGates: [{ conditionType: 'x' }, { conditionType: 'y' }] },
      status: { podIPs: [{ ip: '10.0.0.1' }], conditions: [{ type: 'x', status: 'True' }] },
    };
    expect(podCells(gated, now)).toMatchObject({ ip: '10.0.0.1', node: 'n1', readinessGates: '1/2' });
  });
});

describe('Tables of lists and objects', () => {
  const item = (name: string) => ({ metadata: { name, uid: `u-${name}`, resourceVersion: '7', creationTimestamp: created(10) }, data: { a: 'b' } });
  const list: ApiList = {
    apiVersion: 'v1',
    kind: 'ConfigMapList',
    metadata: { resourceVersion: '42', continue: 'tok', remainingItemCount: 3 },
    items: [item('a'), item('b')],
  };

  it('carries list metadata, and the object resourceVersion for a single object', () => {
    expect(table('configmaps', list).metadata).toEqual({ resourceVersion: '42', continue: 'tok', remainingItemCount: 3 });
    expect(table('configmaps', item('a')).metadata).toEqual({ resourceVersion: '7' });
    expect(table('configmaps', { ...list, items: [] }).rows).toEqual([]);
  });

  it('puts PartialObjectMetadata in each row by default, the full object with includeObject=Object, nothing with None', () => {
    expect(table('configmaps', list).rows![0]!.object).toEqual({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: item('a').metadata });
    expect(table('configmaps', list, { includeObject: 'Object' }).rows![1]!.object).toEqual({ kind: 'ConfigMap', apiVersion: 'v1', ...item('b') });
    expect(table('configmaps', list, { includeObject: 'None' }).rows![0]!.object).toBeNull();
  });

  it('leaves out column definitions when asked (watch events after the first)', () => {
    expect(table('configmaps', item('a'), { noHeaders: true }).columnDefinitions).toBeNull();
  });

  it('builds PartialObjectMetadata and PartialObjectMetadataList (null items when empty)', () => {
    expect(asPartialObjectMetadata(item('a'), 'meta.k8s.io/v1beta1')).toEqual({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1beta1',
      metadata: item('a').metadata,
    });
    expect(asPartialObjectMetadataList(list, 'meta.k8s.io/v1')).toMatchObject({
      kind: 'PartialObjectMetadataList',
      metadata: { resourceVersion: '42', continue: 'tok', remainingItemCount: 3 },
      items: [{ metadata: { name: 'a' } }, { metadata: { name: 'b' } }],
    });
    expect(asPartialObjectMetadataList({ ...list, items: [] }, 'meta.k8s.io/v1').items).toBeNull();
  });
});
