/**
 * The core's lifecycle over the embedded store (unit level; the e2e tests cover etcd and HTTPS).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCore, type Core, type RequestContext, type ResourceTarget, type ApiObject, type WatchEvent } from '../../src/core';
import { createStore } from '../../src/store';
import { createNaming } from '../../src/naming';
import { ManualClock } from '../../src/clock';
import { StatusError } from '../../src/status';
import { startControllers } from '../../src/controllers';
import { eventually } from '../support/eventually';

const ctx: RequestContext = { user: { username: 'admin', groups: ['system:masters'] }, userAgent: 'kubectl/v1.32.4 (linux/amd64) kubernetes/abc' };
const cm = (ns: string, name?: string): ResourceTarget => ({ group: '', version: 'v1', resource: 'configmaps', namespace: ns, name });
const rs = (ns: string, name?: string, subresource?: string): ResourceTarget => ({
  group: 'apps',
  version: 'v1',
  resource: 'replicasets',
  namespace: ns,
  name,
  subresource,
});

async function expectStatus(p: Promise<unknown>, code: number, reason: string, message?: string | RegExp): Promise<StatusError> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(StatusError);
    const e = err as StatusError;
    expect({ code: e.code, reason: e.reason }).toEqual({ code, reason });
    if (typeof message === 'string') expect(e.status.message).toBe(message);
    else if (message) expect(e.status.message).toMatch(message);
    return e;
  }
  throw new Error(`expected a ${code} ${reason} error`);
}

function replicaSet(name: string, replicas?: number): ApiObject {
  const spec: Record<string, unknown> = {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
  };
  if (replicas !== undefined) spec.replicas = replicas;
  return { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name }, spec };
}

describe('core on the embedded store', () => {
  let dir: string;
  let core: Core;
  const clock = new ManualClock(Date.UTC(2026, 10, 22, 12, 0, 0));

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-core-'));
    core = createCore({ store: await createStore({ kind: 'embedded', dataDir: dir }), naming: createNaming('kubernetes'), clock });
    await core.ready();
  });

  afterEach(async () => {
    await core.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates the system namespaces of the naming profile on first start', async () => {
    const list = await core.list({ group: '', version: 'v1', resource: 'namespaces' }, {}, ctx);
    expect(list.items.map((n) => n.metadata!.name).sort()).toEqual(['default', 'kube-node-lease', 'kube-public', 'kube-system']);
    expect(list.kind).toBe('NamespaceList');
  });

  it('fills system metadata on create and infers the field manager from the User-Agent', async () => {
    const { object, created } = await core.create(cm('default'), { metadata: { name: 'a' }, data: { k: 'v' } }, {}, ctx);
    expect(created).toBe(true);
    const meta = object.metadata!;
    expect(meta.uid).toMatch(/^[0-9a-f-]{36}$/);
    expect(meta.creationTimestamp).toBe('2026-11-22T12:00:00Z');
    expect(Number(meta.resourceVersion)).toBeGreaterThan(0);
    expect(meta.managedFields).toEqual([
      {
        manager: 'kubectl',
        operation: 'Update',
        apiVersion: 'v1',
        time: '2026-11-22T12:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:data': { '.': {}, 'f:k': {} } },
      },
    ]);
    expect(object.apiVersion).toBe('v1');
    expect(object.kind).toBe('ConfigMap');
  });

  it('generates names from generateName', async () => {
    const { object } = await core.create(cm('default'), { metadata: { generateName: 'web-' } }, {}, ctx);
    expect(object.metadata!.name).toMatch(/^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
  });

  it('answers upstream-shaped errors for duplicates, missing objects and stale updates', async () => {
    await core.create(cm('default'), { metadata: { name: 'a' } }, {}, ctx);
    await expectStatus(core.create(cm('default'), { metadata: { name: 'a' } }, {}, ctx), 409, 'AlreadyExists', 'configmaps "a" already exists');
    const e = await expectStatus(core.get(rs('default', 'web'), {}, ctx), 404, 'NotFound', 'replicasets.apps "web" not found');
    expect(e.status.details).toEqual({ name: 'web', group: 'apps', kind: 'replicasets' });
    const first = await core.get(cm('default', 'a'), {}, ctx);
    await core.update(cm('default', 'a'), { ...first, data: { x: '1' } }, {}, ctx);
    await expectStatus(
      core.update(cm('default', 'a'), { ...first, data: { x: '2' } }, {}, ctx),
      409,
      'Conflict',
      'Operation cannot be fulfilled on configmaps "a": the object has been modified; please apply your changes to the latest version and try again',
    );
  });

  it('rejects bodies that do not match the request, storing nothing', async () => {
    await expectStatus(
      core.create(cm('default'), { apiVersion: 'apps/v1', kind: 'ConfigMap', metadata: { name: 'x' } }, {}, ctx),
      400,
      'BadRequest',
      /API version in the data \(apps\/v1\)/,
    );
    await expectStatus(
      core.create(cm('default'), { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } }, {}, ctx),
      400,
      'BadRequest',
      /must be of type ConfigMap/,
    );
    await expectStatus(
      core.create(cm('default'), { metadata: { name: 'x', namespace: 'kube-system' } }, {}, ctx),
      400,
      'BadRequest',
      'the namespace of the provided object does not match the namespace sent on the request',
    );
    await expectStatus(
      core.create(cm('default'), { metadata: { name: 'Bad_Name' } }, {}, ctx),
      422,
      'Invalid',
      /^ConfigMap "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name"/,
    );
    await expectStatus(
      core.create(cm('default'), { metadata: {} }, {}, ctx),
      422,
      'Invalid',
      /metadata.name: Required value: name or generateName is required/,
    );
    await core.create(cm('default'), { metadata: { name: 'y' } }, {}, ctx);
    await expectStatus(
      core.update(cm('default', 'y'), { metadata: { name: 'z' } }, {}, ctx),
      400,
      'BadRequest',
      'the name of the object (z) does not match the name on the URL (y)',
    );
    const list = await core.list(cm('default'), {}, ctx);
    expect(list.items.map((i) => i.metadata!.name)).toEqual(['y']);
  });

  it('refuses objects in missing or terminating namespaces', async () => {
    await expectStatus(core.create(cm('nope'), { metadata: { name: 'a' } }, {}, ctx), 404, 'NotFound', 'namespaces "nope" not found');
    await core.create({ group: '', version: 'v1', resource: 'namespaces' }, { metadata: { name: 'going', finalizers: ['example.com/hold'] } }, {}, ctx);
    await core.delete({ group: '', version: 'v1', resource: 'namespaces', name: 'going' }, {}, ctx);
    const e = await expectStatus(
      core.create(cm('going'), { metadata: { name: 'a' } }, {}, ctx),
      403,
      'Forbidden',
      'configmaps "a" is forbidden: unable to create new content in namespace going because it is being terminated',
    );
    expect(e.status.details!.causes).toEqual([{ reason: 'NamespaceTerminating', message: 'namespace going is being terminated', field: 'metadata.namespace' }]);
  });

  it('pages a list at one revision with continue tokens and remainingItemCount', async () => {
    for (let i = 0; i < 5; i++) await core.create(cm('default'), { metadata: { name: `c${i}`, labels: { n: String(i % 2) } } }, {}, ctx);
    const page1 = await core.list(cm('default'), { limit: 2 }, ctx);
    expect(page1.items.map((i) => i.metadata!.name)).toEqual(['c0', 'c1']);
    expect(page1.metadata.remainingItemCount).toBe(3);
    await core.create(cm('default'), { metadata: { name: 'c9' } }, {}, ctx);
    const page2 = await core.list(cm('default'), { limit: 2, continue: page1.metadata.continue }, ctx);
    expect(page2.metadata.resourceVersion).toBe(page1.metadata.resourceVersion);
    const page3 = await core.list(cm('default'), { limit: 2, continue: page2.metadata.continue }, ctx);
    expect(page3.items.map((i) => i.metadata!.name)).toEqual(['c4']);
    expect(page3.metadata.continue).toBeUndefined();
    expect(page3.metadata.remainingItemCount).toBeUndefined();
    const odd = await core.list(cm('default'), { labelSelector: 'n in (1)' }, ctx);
    expect(odd.items.map((i) => i.metadata!.name)).toEqual(['c1', 'c3']);
    await expectStatus(core.list(cm('default'), { labelSelector: 'n in (' }, ctx), 400, 'BadRequest');
    await expectStatus(
      core.list(cm('default'), { resourceVersionMatch: 'Exact' }, ctx),
      400,
      'BadRequest',
      /resourceVersionMatch is forbidden unless resourceVersion is provided/,
    );
  });

  it('watches from an exact version and from the current state', async () => {
    const a = await core.create(cm('default'), { metadata: { name: 'a' } }, {}, ctx);
    const fromState = await core.watch(cm('default'), {}, ctx);
    const exact = await core.watch(cm('default'), { resourceVersion: a.object.metadata!.resourceVersion }, ctx);
    const b = await core.create(cm('default'), { metadata: { name: 'b' } }, {}, ctx);
    await core.update(cm('default', 'b'), { ...b.object, data: { k: 'v' } }, {}, ctx);
    await core.delete(cm('default', 'a'), {}, ctx);
    const take = async (s: AsyncIterable<WatchEvent>, n: number) => {
      const out: string[] = [];
      for await (const e of s) {
        out.push(`${e.type} ${(e.object as ApiObject).metadata!.name}`);
        if (out.length === n) break;
      }
      return out;
    };
    expect(await take(fromState, 4)).toEqual(['ADDED a', 'ADDED b', 'MODIFIED b', 'DELETED a']);
    expect(await take(exact, 3)).toEqual(['ADDED b', 'MODIFIED b', 'DELETED a']);
  });

  it('keeps an object with finalizers Terminating until the last one is removed', async () => {
    await core.create(cm('default'), { metadata: { name: 'f', finalizers: ['example.com/x'] } }, {}, ctx);
    const del = await core.delete(cm('default', 'f'), {}, ctx);
    const terminating = del.object as ApiObject;
    expect(terminating.metadata!.deletionTimestamp).toBe('2026-11-22T12:00:00Z');
    await core.patch(cm('default', 'f'), { type: 'merge', body: { metadata: { finalizers: null } } }, {}, ctx);
    await expectStatus(core.get(cm('default', 'f'), {}, ctx), 404, 'NotFound');
  });

  it('defaults, splits spec and status, and bumps generation of a ReplicaSet', async () => {
    const created = await core.create(rs('default'), { ...replicaSet('web'), status: { replicas: 5 } }, {}, ctx);
    expect(created.object.spec).toMatchObject({ replicas: 1 });
    // minReadySeconds' default is its zero value, which upstream's JSON leaves out.
    expect(created.object.spec).not.toHaveProperty('minReadySeconds');
    expect(created.object.metadata!.generation).toBe(1);
    expect(created.object.metadata!.labels).toEqual({ app: 'web' });
    expect((created.object.status as { replicas?: number } | undefined)?.replicas ?? 0).toBe(0);
    const zero = await core.create(rs('default'), replicaSet('zero', 0), {}, ctx);
    expect((zero.object.spec as { replicas: number }).replicas).toBe(0);

    const scaled = await core.patch(rs('default', 'web', 'scale'), { type: 'merge', body: { spec: { replicas: 3 } } }, {}, ctx);
    expect(scaled.object).toMatchObject({ kind: 'Scale', apiVersion: 'autoscaling/v1', spec: { replicas: 3 }, status: { selector: 'app=web' } });
    const afterScale = await core.get(rs('default', 'web'), {}, ctx);
    expect(afterScale.metadata!.generation).toBe(2);

    const statusWrite = await core.update(
      rs('default', 'web', 'status'),
      { ...afterScale, spec: { ...(afterScale.spec as object), replicas: 9 }, status: { replicas: 2 } },
      {},
      ctx,
    );
    expect((statusWrite.object.spec as { replicas: number }).replicas).toBe(3);
    expect((statusWrite.object.status as { replicas: number }).replicas).toBe(2);
    expect(statusWrite.object.metadata!.generation).toBe(2);

    await expectStatus(core.update(rs('default', 'web', 'scale'), { spec: { replicas: -1 } }, {}, ctx), 422, 'Invalid', /spec.replicas: Invalid value: -1/);
    await expectStatus(core.create(rs('default', undefined, 'status'), replicaSet('x'), {}, ctx), 405, 'MethodNotAllowed');
  });

  it('deletes a namespace and its content through the namespace controller', async () => {
    const controllers = startControllers(core, ['namespace']);
    try {
      await core.create({ group: '', version: 'v1', resource: 'namespaces' }, { metadata: { name: 'tmp' } }, {}, ctx);
      await core.create(cm('tmp'), { metadata: { name: 'a' } }, {}, ctx);
      const del = await core.delete({ group: '', version: 'v1', resource: 'namespaces', name: 'tmp' }, {}, ctx);
      expect((del.object as ApiObject).status).toEqual({ phase: 'Terminating' });
      await eventually(
        () =>
          core.get({ group: '', version: 'v1', resource: 'namespaces', name: 'tmp' }, {}, ctx).then(
            () => false,
            (err) => StatusError.is(err, 'NotFound'),
          ),
        { what: 'the namespace to go' },
      );
      await expectStatus(core.get({ group: '', version: 'v1', resource: 'namespaces', name: 'tmp' }, {}, ctx), 404, 'NotFound');
      expect((await core.list(cm('tmp'), {}, ctx)).items).toEqual([]);
    } finally {
      controllers.stop();
    }
  });
});
