/**
 * Who owns a write's body (docs/ARCHITECTURE.md, "Ownership"): an in-process caller's object,
 * nested parts included, is never changed by create, update or patch (the core copies it before
 * its field checks drop unknown and empty fields), and its answer is its own to change; a body a
 * door hands over (`Owned`) is taken as it is, without a copy, and checked against the decode
 * limits only when the door did not.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createCore, type Core } from '../../../src/core';
import { handOver, type ApiObject } from '../../../src/core/api';
import { MAX_NESTING_DEPTH } from '../../../src/codecs/limits';
import { createStore } from '../../../src/store';
import { createNaming } from '../../../src/naming';

let dir: string;
let core: Core;
const ctx = () => ({ user: { username: 'admin', groups: ['system:masters'] } });
const target = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' };
const replicaSets = { group: 'apps', version: 'v1', resource: 'replicasets', namespace: 'default' };
const configMap = (name: string): ApiObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { a: '1' } });

/**
 * A ReplicaSet with what the core's field checks change, deep inside: an unknown field, Go's
 * omitempty zero values (`minReadySeconds: 0`, `hostPort: 0`, `finalizers: []`) and a null list
 * element.
 */
const replicaSet = (name: string, replicas = 1): ApiObject => ({
  apiVersion: 'apps/v1',
  kind: 'ReplicaSet',
  metadata: { name, labels: { app: name }, finalizers: [] },
  spec: {
    replicas,
    minReadySeconds: 0,
    unknownField: { nested: true },
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: { containers: [{ name: 'c', image: 'i', ports: [{ containerPort: 80, hostPort: 0 }], args: [null] }] },
    },
  },
});

/** What `value` holds now, to compare with later (zero values and empty lists included). */
const snapshot = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-handover-'));
  core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming: createNaming('kubernetes'), compactionIntervalMs: 0 });
  await core.ready();
});

afterAll(async () => {
  await core.close();
  await fs.rm(dir, { recursive: true, force: true });
});

describe("an in-process caller's object", () => {
  it('is unchanged by a create, nested parts included, and the stored object is checked all the same', async () => {
    const mine = replicaSet('created');
    const before = snapshot(mine);
    const { object } = await core.create(replicaSets, mine, {}, ctx());
    expect(mine).toEqual(before);
    expect(object).not.toBe(mine);
    const spec = object.spec as Record<string, any>;
    expect(spec.minReadySeconds).toBeUndefined();
    expect(spec.unknownField).toBeUndefined();
    expect(spec.template.spec.containers[0].ports).toEqual([{ containerPort: 80, protocol: 'TCP' }]);
    expect(spec.template.spec.containers[0].args).toEqual(['']);
    expect(object.metadata?.finalizers).toBeUndefined();
  });

  it('is unchanged by an update, nested parts included, also when it holds the watch cache’s own parts', async () => {
    const { object: created } = await core.create(replicaSets, replicaSet('updated'), {}, ctx());
    const mine = { ...replicaSet('updated', 2), metadata: { ...replicaSet('updated').metadata, resourceVersion: created.metadata?.resourceVersion } };
    const before = snapshot(mine);
    const { object } = await core.update({ ...replicaSets, name: 'updated' }, mine, {}, ctx());
    expect(mine).toEqual(before);
    expect((object.spec as Record<string, unknown>).replicas).toBe(2);
    expect((object.spec as Record<string, unknown>).unknownField).toBeUndefined();
    // Built from the cache's frozen object, as a controller does: its parts are read, not changed.
    const cached = await core.get({ ...replicaSets, name: 'updated' }, { resourceVersion: '0' }, ctx());
    const spec = cached.spec as Record<string, unknown>;
    const again = { ...cached, spec: { ...spec, replicas: 3, minReadySeconds: 0, unknownField: 1 } };
    const cachedBefore = snapshot(cached);
    const { object: third } = await core.update({ ...replicaSets, name: 'updated' }, again, {}, ctx());
    expect(cached).toEqual(cachedBefore);
    expect(again.spec).toMatchObject({ replicas: 3, minReadySeconds: 0, unknownField: 1 });
    expect((third.spec as Record<string, unknown>).replicas).toBe(3);
    // The answer is the caller's to change.
    expect(Object.isFrozen(third)).toBe(false);
  });

  it('is unchanged by a patch and an apply, nested parts included', async () => {
    await core.create(replicaSets, replicaSet('patched'), {}, ctx());
    const merge = {
      type: 'merge' as const,
      body: {
        spec: {
          minReadySeconds: 0,
          unknownField: { x: 1 },
          template: { spec: { containers: [{ name: 'c', image: 'j', ports: [{ containerPort: 80, hostPort: 0 }] }] } },
        },
      },
    };
    const mergeBefore = snapshot(merge);
    const patched = await core.patch({ ...replicaSets, name: 'patched' }, merge, {}, ctx());
    expect(merge).toEqual(mergeBefore);
    expect((patched.object.spec as Record<string, any>).template.spec.containers[0].image).toBe('j');
    // An apply refuses unknown fields: the configuration holds zero values and a null element only.
    const { unknownField: _, ...spec } = replicaSet('applied').spec as Record<string, unknown>;
    const apply = { type: 'apply' as const, body: { ...replicaSet('applied'), spec } };
    const applyBefore = snapshot(apply);
    await core.patch({ ...replicaSets, name: 'applied' }, apply, { fieldManager: 'tool' }, ctx());
    await core.patch({ ...replicaSets, name: 'applied' }, apply, { fieldManager: 'tool' }, ctx());
    expect(apply).toEqual(applyBefore);
  });
});

describe('a body handed over', () => {
  it('is taken as it is, not copied', async () => {
    const decoded = configMap('taken');
    const { object } = await core.create(target, handOver(decoded), {}, ctx());
    expect(object).toBe(decoded);
    expect(object.metadata?.uid).toEqual(expect.any(String));
    // Stored as written: a read gives the same content.
    const read = await core.get({ ...target, name: 'taken' }, {}, ctx());
    expect(read.data).toEqual({ a: '1' });
    expect(read.metadata?.resourceVersion).toBe(object.metadata?.resourceVersion);
  });

  it('is checked against the decode limits unless the door that decoded it says it did', async () => {
    const deep = (): ApiObject => {
      let v: unknown = 'leaf';
      for (let i = 0; i < MAX_NESTING_DEPTH + 1; i++) v = { v };
      return { ...configMap('deep'), unknownField: v };
    };
    await expect(core.create(target, deep(), {}, ctx())).rejects.toMatchObject({ code: 400 });
    await expect(core.create(target, handOver(deep()), {}, ctx())).rejects.toMatchObject({ code: 400 });
    // Trusted (no door would vouch for this): the core does not walk it again, and drops the unknown field.
    const { object } = await core.create(target, handOver(deep(), { withinLimits: true }), {}, ctx());
    expect(object.unknownField).toBeUndefined();
  });
});
