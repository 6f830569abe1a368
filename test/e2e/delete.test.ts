/**
 * Deletion end to end (docs/API.md, "Object deletion"; issue 5 item 6) against the real server process:
 * `kubectl delete --cascade=orphan|background|foreground` on a ReplicaSet that owns pods (the
 * garbage collector runs in the server as an API client), DeleteOptions from the body or the
 * query with preconditions and the legacy orphanDependents, and the unsafe deletion of an
 * object whose stored bytes are garbage, with and without the AllowUnsafeMalformedObjectDeletion
 * gate (etcd, where the test can write the key directly).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { Etcd3 } from 'etcd3';
import { startEtcd, type EtcdInstance } from '../support/etcd';
import { startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { httpsRequest } from '../gateway/support/https-client';
import { API_ONLY } from '../gateway/support/server-process';
import { eventually, type EventuallyOptions } from '../support/eventually';

/** kubectl calls against a real server take a while: look less often, for longer. */
const POLL: EventuallyOptions = { timeoutMs: 15_000, intervalMs: 100 };

const run = promisify(execFile);

const RS = (name: string) =>
  JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    },
  });

function client(server: () => ServerProcess) {
  const call = (method: string, url: string, body?: string) =>
    httpsRequest(`${server().url}${url}`, server().admin, {
      method,
      body,
      headers: body
        ? { 'content-type': method === 'PATCH' ? 'application/merge-patch+json' : 'application/json', 'content-length': String(Buffer.byteLength(body)) }
        : {},
    });
  const kubectl = async (...args: string[]) => (await run('/usr/bin/kubectl', ['--kubeconfig', server().kubeconfig, ...args], { timeout: 30_000 })).stdout;
  return { call, kubectl };
}

describe('kubectl delete --cascade on a ReplicaSet that owns pods', () => {
  let server: ServerProcess;
  const { call, kubectl } = client(() => server);
  const rsBase = '/apis/apps/v1/namespaces/default/replicasets';
  const podBase = '/api/v1/namespaces/default/pods';

  beforeAll(async () => {
    // The pods here are made by hand to show the garbage collector's cascades: no ReplicaSet controller races them.
    server = await startServerProcess(['--vendor', 'kubernetes', ...API_ONLY]);
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function rsWithPods(name: string): Promise<void> {
    const rs = JSON.parse((await call('POST', rsBase, RS(name))).body);
    for (const i of [0, 1]) {
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `${name}-${i}`,
          labels: { app: name },
          ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name, uid: rs.metadata.uid, controller: true, blockOwnerDeletion: true }],
        },
        spec: { containers: [{ name: 'c', image: 'nginx' }] },
      };
      expect((await call('POST', podBase, JSON.stringify(pod))).status).toBe(201);
    }
  }
  const podNames = async (app: string) => (await kubectl('get', 'pods', '-l', `app=${app}`, '-o', 'name')).trim().split('\n').filter(Boolean);

  it('--cascade=background (the default): the ReplicaSet goes, then its pods', async () => {
    await rsWithPods('bg');
    expect(await kubectl('delete', 'rs', 'bg', '--cascade=background')).toBe('replicaset.apps "bg" deleted\n');
    await eventually(async () => (await podNames('bg')).length === 0, POLL);
  });

  it('--cascade=foreground: kubectl waits until the pods are gone and then the ReplicaSet', async () => {
    await rsWithPods('fg');
    expect(await kubectl('delete', 'rs', 'fg', '--cascade=foreground')).toBe('replicaset.apps "fg" deleted\n');
    expect(await podNames('fg')).toEqual([]);
    await expect(kubectl('get', 'rs', 'fg')).rejects.toMatchObject({ stderr: expect.stringContaining('NotFound') });
  });

  it('--cascade=orphan: the pods stay, without their owner reference', async () => {
    await rsWithPods('or');
    expect(await kubectl('delete', 'rs', 'or', '--cascade=orphan')).toBe('replicaset.apps "or" deleted\n');
    await expect(kubectl('get', 'rs', 'or')).rejects.toMatchObject({ stderr: expect.stringContaining('NotFound') });
    expect(await podNames('or')).toEqual(['pod/or-0', 'pod/or-1']);
    expect(await kubectl('get', 'pod', 'or-0', '-o', 'jsonpath={.metadata.ownerReferences}')).toBe('');
  });

  it('DeleteOptions in the body: preconditions answer 409; legacy orphanDependents=false answers 202 while the object stays', async () => {
    const created = JSON.parse((await call('POST', rsBase, RS('pre'))).body);
    const wrongUid = await call('DELETE', `${rsBase}/pre`, JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', preconditions: { uid: 'nope' } }));
    expect(wrongUid.status).toBe(409);
    expect(JSON.parse(wrongUid.body).message).toBe(
      `Operation cannot be fulfilled on ReplicaSet.apps "pre": the UID in the precondition (nope) does not match the UID in record (${created.metadata.uid}). The object might have been deleted and then recreated`,
    );
    const both = await call('DELETE', `${rsBase}/pre?propagationPolicy=Orphan&orphanDependents=true`);
    expect(both.status).toBe(422);
    expect(JSON.parse(both.body).message).toBe(
      'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set',
    );

    expect((await call('PATCH', `${rsBase}/pre`, '{"metadata":{"finalizers":["example.com/hold"]}}')).status).toBe(200);
    const accepted = await call('DELETE', `${rsBase}/pre`, JSON.stringify({ orphanDependents: false }));
    expect(accepted.status).toBe(202);
    expect(JSON.parse(accepted.body).metadata.deletionTimestamp).toBeDefined();
    await call('PATCH', `${rsBase}/pre`, '{"metadata":{"finalizers":null}}');
    await eventually(async () => (await call('GET', `${rsBase}/pre`)).status === 404, POLL);
  });
});

describe.each([
  ['with AllowUnsafeMalformedObjectDeletion', true],
  ['without the gate', false],
])('an object whose stored bytes cannot be decoded (%s)', (_name, gate) => {
  let etcd: EtcdInstance;
  let server: ServerProcess;
  let raw: Etcd3;
  const { call } = client(() => server);
  const rsBase = '/apis/apps/v1/namespaces/default/replicasets';

  beforeAll(async () => {
    etcd = await startEtcd();
    const args = ['--vendor', 'kubernetes', '--etcd-servers', etcd.endpoint, ...API_ONLY];
    if (gate) args.push('--feature-gates', 'AllowUnsafeMalformedObjectDeletion=true');
    server = await startServerProcess(args);
    raw = new Etcd3({ hosts: etcd.endpoint });
    expect((await call('POST', rsBase, RS('broken'))).status).toBe(201);
    await raw.put('/registry/replicasets/default/broken').value(Buffer.from([0x00, 0xff, 0x13, 0x37]));
  });
  afterAll(async () => {
    raw?.close();
    await server?.stop();
    await etcd?.stop();
  });

  it('a plain delete answers 500', async () => {
    const r = await call('DELETE', `${rsBase}/broken`);
    expect(r.status).toBe(500);
    const message = JSON.parse(r.body).message as string;
    if (gate)
      expect(message).toMatch(
        /^Internal error occurred: StorageError: corrupt object, Code: 7, Key: \/registry\/replicasets\/default\/broken, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=\d+: /,
      );
    else expect(message).toMatch(/^Internal error occurred: unable to decode an object stored at \/registry\/replicasets\/default\/broken: /);
  });

  if (gate) {
    it('ignoreStoreReadErrorWithClusterBreakingPotential with other options is 422; alone it removes the object', async () => {
      const combined = await call('DELETE', `${rsBase}/broken?ignoreStoreReadErrorWithClusterBreakingPotential=true&gracePeriodSeconds=0`);
      expect(combined.status).toBe(422);
      expect(JSON.parse(combined.body).message).toBe(
        'DeleteOptions.meta.k8s.io "" is invalid: ignoreStoreReadErrorWithClusterBreakingPotential: Invalid value: true: cannot be set together with .gracePeriodSeconds',
      );
      const r = await call(
        'DELETE',
        `${rsBase}/broken`,
        JSON.stringify({ kind: 'DeleteOptions', apiVersion: 'v1', ignoreStoreReadErrorWithClusterBreakingPotential: true }),
      );
      expect(r.status).toBe(200);
      expect(JSON.parse(r.body)).toMatchObject({ kind: 'Status', status: 'Success', details: { name: 'broken', kind: 'ReplicaSet' } });
      expect(await raw.get('/registry/replicasets/default/broken').buffer()).toBeNull();
    });
  } else {
    it('the option is ignored: the object stays and the delete still fails', async () => {
      const r = await call('DELETE', `${rsBase}/broken?ignoreStoreReadErrorWithClusterBreakingPotential=true`);
      expect(r.status).toBe(500);
      expect(await raw.get('/registry/replicasets/default/broken').buffer()).not.toBeNull();
    });
  }
});
