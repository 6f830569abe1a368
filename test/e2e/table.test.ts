/**
 * Tables through the running server: unmodified kubectl 1.32 prints upstream's columns for every
 * served type (`get rs`, `get rolebindings -o wide`, ..., and `get -w`), and raw HTTP clients
 * get metav1.Table as upstream serves it: column definitions, list metadata, `includeObject`,
 * PartialObjectMetadataList, and a one-row Table per watch event with the headers first only.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import https from 'node:https';
import { promisify } from 'node:util';
import { startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { API_ONLY } from '../gateway/support/server-process';
import { waitForOutput } from '../support/child-output';
import { kubectlRows } from './support/kubectl';

const run = promisify(execFile);
const TABLE = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const RBAC = 'rbac.authorization.k8s.io';

const MANIFEST = `apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: web, namespace: tables}
spec:
  replicas: 3
  selector:
    matchLabels: {app: web}
    matchExpressions: [{key: tier, operator: In, values: [front, edge]}]
  template:
    metadata: {labels: {app: web, tier: front}}
    spec:
      containers:
      - {name: nginx, image: "nginx:1.27"}
      - {name: sidecar, image: busybox}
---
apiVersion: ${RBAC}/v1
kind: RoleBinding
metadata: {name: readers, namespace: tables}
roleRef: {apiGroup: ${RBAC}, kind: ClusterRole, name: view}
subjects:
- {kind: User, name: alice, apiGroup: ${RBAC}}
- {kind: User, name: bob, apiGroup: ${RBAC}}
- {kind: Group, name: devs, apiGroup: ${RBAC}}
- {kind: ServiceAccount, name: robot, namespace: tables}
`;

function get(server: ServerProcess, path: string, accept: string): Promise<{ status: number; type: string; json: any }> {
  return new Promise((resolve, reject) => {
    const { ca, cert, key } = server.admin;
    const req = https.request(`${server.url}${path}`, { headers: { accept }, ca, cert, key, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), json: JSON.parse(Buffer.concat(chunks).toString()) }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

describe('Tables for kubectl and HTTP clients', () => {
  let server: ServerProcess;
  const kubectl = async (...args: string[]) =>
    (await run('/usr/bin/kubectl', ['--kubeconfig', server.kubeconfig, '-n', 'tables', ...args], { timeout: 30_000 })).stdout;

  beforeAll(async () => {
    server = await startServerProcess(['--vendor', 'kubernetes', ...API_ONLY]);
    await run('/usr/bin/kubectl', ['--kubeconfig', server.kubeconfig, 'create', 'namespace', 'tables']);
    const child = spawn('/usr/bin/kubectl', ['--kubeconfig', server.kubeconfig, 'create', '--validate=false', '-f', '-']);
    child.stdin.end(MANIFEST);
    await new Promise((resolve) => child.on('exit', resolve));
    await kubectl('create', 'configmap', 'settings', '--from-literal=a=1', '--from-literal=b=2');
    await kubectl('create', 'secret', 'generic', 'token', '--from-literal=t=x');
    await kubectl('create', 'serviceaccount', 'robot');
    await kubectl('create', 'role', 'reader', '--verb=get', '--resource=pods');
    await kubectl('run', 'solo', '--image=nginx:1.27');
    const event = {
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { name: 'scaled' },
      eventTime: new Date().toISOString().replace('Z', '000Z'),
      reportingController: 'example.com/ctl',
      reportingInstance: 'ctl-1',
      action: 'Scale',
      reason: 'Scaled',
      type: 'Normal',
      note: 'scaled to 3',
      regarding: { kind: 'ReplicaSet', name: 'web', namespace: 'tables', apiVersion: 'apps/v1' },
    };
    const child2 = spawn('/usr/bin/kubectl', ['--kubeconfig', server.kubeconfig, '-n', 'tables', 'create', '--validate=false', '-f', '-']);
    child2.stdin.end(JSON.stringify(event));
    await new Promise((resolve) => child2.on('exit', resolve));
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('kubectl get rs: NAME, DESIRED, CURRENT, READY, AGE; -o wide adds CONTAINERS, IMAGES, SELECTOR', async () => {
    expect(kubectlRows(await kubectl('get', 'rs'))).toEqual([
      'NAME | DESIRED | CURRENT | READY | AGE',
      expect.stringMatching(/^web \| 3 \| \d \| \d \| <age>$/),
    ]);
    const wide = kubectlRows(await kubectl('get', 'rs', '-o', 'wide'));
    expect(wide[0]).toBe('NAME | DESIRED | CURRENT | READY | AGE | CONTAINERS | IMAGES | SELECTOR');
    expect(wide[1]).toMatch(/^web \| 3 \| \d \| \d \| <age> \| nginx,sidecar \| nginx:1\.27,busybox \| app=web,tier in \(edge,front\)$/);
  });

  it('kubectl get rolebindings: NAME, ROLE, AGE; -o wide adds USERS, GROUPS, SERVICEACCOUNTS', async () => {
    expect(kubectlRows(await kubectl('get', 'rolebindings'))).toEqual(['NAME | ROLE | AGE', 'readers | ClusterRole/view | <age>']);
    expect(kubectlRows(await kubectl('get', 'rolebindings', '-o', 'wide'))).toEqual([
      'NAME | ROLE | AGE | USERS | GROUPS | SERVICEACCOUNTS',
      'readers | ClusterRole/view | <age> | alice, bob | devs | tables/robot',
    ]);
  });

  it("kubectl shows every other served type with upstream's columns", async () => {
    expect(kubectlRows(await kubectl('get', 'configmaps', 'settings'))).toEqual(['NAME | DATA | AGE', 'settings | 2 | <age>']);
    expect(kubectlRows(await kubectl('get', 'secrets', 'token'))).toEqual(['NAME | TYPE | DATA | AGE', 'token | Opaque | 1 | <age>']);
    expect(kubectlRows(await kubectl('get', 'serviceaccounts', 'robot'))).toEqual(['NAME | SECRETS | AGE', 'robot | 0 | <age>']);
    expect(kubectlRows(await kubectl('get', 'namespace', 'tables'))[0]).toBe('NAME | STATUS | AGE');
    // Roles have no printer upstream either: the default Name / Created At.
    expect(kubectlRows(await kubectl('get', 'roles'))).toEqual(['NAME | CREATED AT', expect.stringMatching(/^reader \| \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)]);
    expect(kubectlRows(await kubectl('get', 'pods'))).toEqual([
      'NAME | READY | STATUS | RESTARTS | AGE',
      expect.stringMatching(/^solo \| 0\/1 \| \w+ \| 0 \| <age>$/),
    ]);
    expect(kubectlRows(await kubectl('get', 'events'))).toEqual([
      'LAST SEEN | TYPE | REASON | OBJECT | MESSAGE',
      expect.stringMatching(/^\d+s \| Normal \| Scaled \| replicaset\/web \| scaled to 3$/),
    ]);
    expect(kubectlRows(await kubectl('get', 'pods', '-o', 'wide'))[0]).toBe(
      'NAME | READY | STATUS | RESTARTS | AGE | IP | NODE | NOMINATED NODE | READINESS GATES',
    );
  });

  it('kubectl get rs -w prints the table and then each change as a row', async () => {
    const child: ChildProcess = spawn('/usr/bin/kubectl', ['--kubeconfig', server.kubeconfig, '-n', 'tables', 'get', 'rs', '-w']);
    let out = '';
    child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
    const until = (pattern: RegExp) => waitForOutput(child, () => out, pattern, 10_000);
    await until(/web/);
    await kubectl('scale', 'rs', 'web', '--replicas=4');
    await until(/web +4 /);
    child.kill();
    expect(kubectlRows(out)[0]).toBe('NAME | DESIRED | CURRENT | READY | AGE');
  });

  it('serves metav1.Table over HTTP: definitions, list metadata, includeObject', async () => {
    const list = await get(server, `/apis/apps/v1/namespaces/tables/replicasets?limit=1`, TABLE);
    expect(list.type).toBe('application/json');
    expect(list.json).toMatchObject({ kind: 'Table', apiVersion: 'meta.k8s.io/v1', metadata: { resourceVersion: expect.any(String) } });
    expect(list.json.columnDefinitions[7]).toMatchObject({ name: 'Selector', type: 'string', format: '', priority: 1 });
    expect(list.json.rows[0].object).toMatchObject({
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: { name: 'web', namespace: 'tables' },
    });
    const full = await get(
      server,
      `/apis/${RBAC}/v1/namespaces/tables/rolebindings/readers?includeObject=Object`,
      'application/json;as=Table;v=v1beta1;g=meta.k8s.io',
    );
    expect(full.json).toMatchObject({
      apiVersion: 'meta.k8s.io/v1beta1',
      rows: [
        {
          cells: ['readers', 'ClusterRole/view', expect.any(String), 'alice, bob', 'devs', 'tables/robot'],
          object: { kind: 'RoleBinding', roleRef: { name: 'view' } },
        },
      ],
    });
    const metadataOnly = await get(server, '/api/v1/namespaces/tables/configmaps', 'application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io');
    expect(metadataOnly.json).toMatchObject({ kind: 'PartialObjectMetadataList', items: [{ kind: 'PartialObjectMetadata', metadata: { name: 'settings' } }] });
    expect(metadataOnly.json.items[0].data).toBeUndefined();
  });

  it('watches in Table form: a one-row Table per event, column definitions on the first only', async () => {
    const events = await new Promise<any[]>((resolve, reject) => {
      const { ca, cert, key } = server.admin;
      const req = https.request(
        `${server.url}/api/v1/namespaces/tables/configmaps?watch=1`,
        { headers: { accept: TABLE }, ca, cert, key, agent: false },
        (res) => {
          let text = '';
          let created = false;
          res.on('data', (c: Buffer) => {
            text += c.toString();
            const lines = text.split('\n').filter(Boolean);
            // The first event (what is there) shows the watch is running: now the change it must see.
            if (lines.length >= 1 && !created) {
              created = true;
              kubectl('create', 'configmap', 'later', '--from-literal=x=y').catch(reject);
            }
            if (lines.length >= 2) {
              req.destroy();
              resolve(lines.map((l) => JSON.parse(l)));
            }
          });
          res.on('error', () => {});
        },
      );
      req.on('error', () => {});
      req.end();
    });
    expect(
      events.map((e) => [e.type, e.object.kind, e.object.columnDefinitions?.length ?? null, e.object.rows[0].cells[0], e.object.rows[0].cells[1]]),
    ).toEqual([
      ['ADDED', 'Table', 3, 'settings', 2],
      ['ADDED', 'Table', null, 'later', 1],
    ]);
  });
});
