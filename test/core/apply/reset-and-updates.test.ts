/**
 * Clearing managedFields (docs/API.md, "Clearing managedFields"), update (PUT) and non-apply
 * patch semantics ("Update and conflicts", "Patch types"): conflicts on stale versions, create
 * on update per type, 404 for patches of absent objects, 400 for renames, 422 for invalid
 * results with nothing stored, and kubectl's client-side apply annotation meeting server-side apply.
 */
import { BACKENDS, coreBackend, statusOf } from '../registry/core-backends';
import type { ApiObject, Core } from '../../../src/core';
import type { ManualClock } from '../../../src/clock';
import { apply, at, copy, ctx, freshNamespace, ownership, rs, rsConfig, templateFields, where } from './support';

const configMaps = (name?: string) => ({ group: '', version: 'v1', resource: 'configmaps', namespace: where.namespace, name });
const roleBindings = (name?: string) => ({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings', namespace: where.namespace, name });

describe.each(BACKENDS)('managedFields reset and update semantics on %s', (backendName) => {
  const backend = coreBackend(backendName);
  let core: Core;
  let clock: ManualClock;

  beforeEach(async () => {
    ({ core, clock } = await backend.open());
    await freshNamespace(core);
  });
  afterEach(() => backend.closeAll());
  afterAll(() => backend.teardown());

  async function appliedConfigMap(): Promise<ApiObject> {
    const body = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', labels: { a: '1' } }, data: { k: 'v' } };
    return (await apply(core, body, 'alice', {}, configMaps('cm'))).object;
  }

  it('clears managedFields with [{}] through merge patch, JSON patch and update; not with []', async () => {
    await appliedConfigMap();
    const kept = await core.patch(configMaps('cm'), { type: 'merge', body: { metadata: { managedFields: [] } } }, {}, ctx);
    expect(ownership(kept.object).map(([m]) => m)).toEqual(['alice(Apply)']);
    const cleared = await core.patch(configMaps('cm'), { type: 'merge', body: { metadata: { managedFields: [{}] } } }, {}, ctx);
    expect(cleared.object.metadata!.managedFields).toBeUndefined();
    expect(cleared.object.metadata!.labels).toEqual({ a: '1' });
    // With nothing tracked, updates do not start tracking; the next apply does.
    const untracked = await core.patch(configMaps('cm'), { type: 'merge', body: { data: { k: 'w' } } }, { fieldManager: 'tool' }, ctx);
    expect(untracked.object.metadata!.managedFields).toBeUndefined();
    const reapplied = await apply(core, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { other: 'x' } }, 'bob', {}, configMaps('cm'));
    expect(ownership(reapplied.object)).toEqual([
      ['bob(Apply)', { 'f:data': { 'f:other': {} } }],
      ['before-first-apply(Update)', { 'f:data': { '.': {}, 'f:k': {} }, 'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } } }],
    ]);
    const viaJson = await core.patch(configMaps('cm'), { type: 'json', body: [{ op: 'replace', path: '/metadata/managedFields', value: [{}] }] }, {}, ctx);
    expect(viaJson.object.metadata!.managedFields).toBeUndefined();
    await apply(core, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { other: 'x' } }, 'bob', {}, configMaps('cm'));
    const current = copy(await core.get(configMaps('cm'), {}, ctx));
    current.metadata!.managedFields = [{}];
    const viaUpdate = await core.update(configMaps('cm'), current, {}, ctx);
    expect(viaUpdate.object.metadata!.managedFields).toBeUndefined();
  });

  it('gives the writer the fields it changed in the request that resets managedFields', async () => {
    await appliedConfigMap();
    const reset = await core.patch(
      configMaps('cm'),
      { type: 'merge', body: { metadata: { managedFields: [{}], labels: { b: '2' } } } },
      { fieldManager: 'tool' },
      ctx,
    );
    expect(ownership(reset.object)).toEqual([['tool(Update)', { 'f:metadata': { 'f:labels': { 'f:b': {} } } }]]);
  });

  it('answers stale updates with 409 and creates on update only where the type allows it', async () => {
    await apply(core, rsConfig({ replicas: 2 }), 'alice');
    const first = copy(await core.get(rs('web'), {}, ctx));
    const second = copy(first);
    (first.spec as { replicas: number }).replicas = 3;
    await core.update(rs('web'), first, {}, ctx);
    (second.spec as { replicas: number }).replicas = 4;
    const stale = await statusOf(core.update(rs('web'), second, {}, ctx), 409, 'Conflict');
    expect(stale.status.message).toBe(
      'Operation cannot be fulfilled on replicasets.apps "web": the object has been modified; please apply your changes to the latest version and try again',
    );
    // No resourceVersion: an unconditional update, allowed for every served type.
    delete second.metadata!.resourceVersion;
    const unconditional = await core.update(rs('web'), second, {}, ctx);
    expect((unconditional.object.spec as { replicas: number }).replicas).toBe(4);
    const nameless = copy(second);
    delete nameless.metadata!.name;
    const noName = await statusOf(core.update(rs('web'), nameless, {}, ctx), 400, 'BadRequest');
    expect(noName.status.message).toBe('the name of the object () does not match the name on the URL (web)');
    const absentRs = { ...rsConfig(), metadata: { name: 'nope' } };
    await statusOf(core.update(rs('nope'), absentRs, {}, ctx), 404, 'NotFound');
    const binding = {
      metadata: { name: 'b' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
      subjects: [{ kind: 'User', name: 'u', apiGroup: 'rbac.authorization.k8s.io' }],
    };
    const created = await core.update(roleBindings('b'), binding, { fieldManager: 'kubectl-replace' }, ctx);
    expect(created.created).toBe(true);
    expect(ownership(created.object)).toEqual([['kubectl-replace(Update)', { 'f:roleRef': {}, 'f:subjects': {} }]]);
  });

  it('refuses patches of absent objects, renames and invalid results, storing nothing', async () => {
    await statusOf(core.patch(rs('ghost'), { type: 'merge', body: { spec: { replicas: 1 } } }, {}, ctx), 404, 'NotFound');
    const created = await apply(core, rsConfig({ replicas: 2 }), 'alice');
    const renamed = await statusOf(core.patch(rs('web'), { type: 'merge', body: { metadata: { name: 'other' } } }, {}, ctx), 400, 'BadRequest');
    expect(renamed.status.message).toBe('the name of the object (other) does not match the name on the URL (web)');
    const invalid = await statusOf(core.patch(rs('web'), { type: 'strategic', body: { spec: { replicas: -1 } } }, {}, ctx), 422, 'Invalid');
    expect(invalid.status.message).toMatch(/^ReplicaSet.apps "web" is invalid: spec.replicas: Invalid value: -1/);
    const uid = await statusOf(core.patch(rs('web'), { type: 'merge', body: { metadata: { uid: 'other' } } }, {}, ctx), 422, 'Invalid');
    expect(uid.status.message).toBe('ReplicaSet.apps "web" is invalid: metadata.uid: Invalid value: "other": field is immutable');
    const moved = await statusOf(core.patch(rs('web'), { type: 'merge', body: { metadata: { namespace: 'elsewhere' } } }, {}, ctx), 400, 'BadRequest');
    expect(moved.status.message).toBe('the namespace of the provided object does not match the namespace sent on the request');
    await statusOf(core.patch(rs('web'), { type: 'merge', body: { metadata: { resourceVersion: '1' } } }, {}, ctx), 409, 'Conflict');
    const stored = await core.get(rs('web'), {}, ctx);
    expect(stored.metadata!.resourceVersion).toBe(created.object.metadata!.resourceVersion);
  });

  it('lets kubectl take over fields its client-side apply set, and keeps the annotation in step', async () => {
    const annotation = 'kubectl.kubernetes.io/last-applied-configuration';
    const csaConfig = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: where.namespace }, data: { k: 'v' } };
    await core.create(
      configMaps(),
      { ...csaConfig, metadata: { ...csaConfig.metadata, annotations: { [annotation]: JSON.stringify(csaConfig) } } },
      { fieldManager: 'kubectl-client-side-apply' },
      ctx,
    );
    const other = await statusOf(
      apply(core, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { k: 'w' } }, 'someone', {}, configMaps('cm')),
      409,
      'Conflict',
    );
    expect(other.status.message).toBe('Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using v1: .data.k');
    const upgraded = await apply(core, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' }, data: { k: 'w' } }, 'kubectl', {}, configMaps('cm'));
    expect(upgraded.object.data).toEqual({ k: 'w' });
    expect(JSON.parse(upgraded.object.metadata!.annotations![annotation]!)).toEqual({
      apiVersion: 'v1',
      data: { k: 'w' },
      kind: 'ConfigMap',
      metadata: { name: 'cm' },
    });
    expect(ownership(upgraded.object).map(([m]) => m)).toEqual(['kubectl(Apply)', 'kubectl-client-side-apply(Update)']);
  });

  it('tracks a create on the defaulted object, before the strategy adds its own fields', async () => {
    const name = `${where.namespace}-x`;
    const created = await core.create({ group: '', version: 'v1', resource: 'namespaces' }, { metadata: { name } }, { fieldManager: 'kubectl-create' }, ctx);
    // Defaulting labels the namespace; the strategy's spec.finalizers and status are not the creator's.
    expect(created.object.spec).toEqual({ finalizers: ['kubernetes'] });
    expect(ownership(created.object)).toEqual([['kubectl-create(Update)', { 'f:metadata': { 'f:labels': { '.': {}, 'f:kubernetes.io/metadata.name': {} } } }]]);
  });

  it('keeps at most ten update entries, merging the oldest into ancient-changes', async () => {
    await core.create(configMaps(), { metadata: { name: 'many' }, data: { k0: 'v' } }, { fieldManager: 'creator' }, ctx);
    for (let i = 1; i <= 11; i++) {
      clock.advance(1000);
      await core.patch(configMaps('many'), { type: 'merge', body: { data: { [`k${i}`]: 'v' } } }, { fieldManager: `m${i}` }, ctx);
    }
    const cm = await core.get(configMaps('many'), {}, ctx);
    const list = ownership(cm);
    expect(list.map(([m]) => m)).toEqual(['ancient-changes(Update)', ...Array.from({ length: 9 }, (_, i) => `m${i + 3}(Update)`)]);
    expect(list[0]![1]).toEqual({ 'f:data': { '.': {}, 'f:k0': {}, 'f:k1': {}, 'f:k2': {} } });
    expect(cm.metadata!.managedFields![0]!.time).toBe(at(2));
  });

  it('keeps stored timestamps for a write that changes nothing', async () => {
    await apply(core, rsConfig({ replicas: 2 }), 'alice');
    const before = await core.get(rs('web'), {}, ctx);
    const same = await core.patch(rs('web'), { type: 'merge', body: { spec: { replicas: 2 } } }, { fieldManager: 'alice-tool' }, ctx);
    expect(same.object.metadata!.resourceVersion).toBe(before.metadata!.resourceVersion);
    expect(ownership(same.object)).toEqual([['alice(Apply)', { 'f:spec': { 'f:replicas': {}, 'f:selector': {}, 'f:template': templateFields } }]]);
    expect(same.object.metadata!.managedFields![0]!.time).toBe(at(0));
  });

  it('keeps stored timestamps when a writer sends again what it wrote before, and moves them when it changes something', async () => {
    await apply(core, rsConfig({ replicas: 2 }), 'alice');
    const first = await core.patch(rs('web'), { type: 'merge', body: { metadata: { labels: { tier: 'web' } } } }, { fieldManager: 'tool' }, ctx);
    const entry = (o: ApiObject) => o.metadata!.managedFields!.find((e) => e.manager === 'tool')!;
    expect(entry(first.object).time).toBe(at(0));
    clock.advance(5000);
    // The same object sent back whole, managedFields and all: nothing changes, not even a time.
    const again = await core.update(rs('web'), copy(first.object), { fieldManager: 'tool' }, ctx);
    expect(again.object.metadata!.resourceVersion).toBe(first.object.metadata!.resourceVersion);
    expect(entry(again.object).time).toBe(at(0));
    // A label changed: the writer's entry takes the time of the write.
    const changed = copy(first.object);
    changed.metadata!.labels = { ...changed.metadata!.labels, tier: 'db' };
    const moved = await core.update(rs('web'), changed, { fieldManager: 'tool' }, ctx);
    expect(moved.object.metadata!.resourceVersion).not.toBe(first.object.metadata!.resourceVersion);
    expect(entry(moved.object).time).toBe(at(5));
    expect(moved.object.metadata!.managedFields!.find((e) => e.manager === 'alice')!.time).toBe(at(0));
  });
});
