/**
 * Ownership follows the schema's markers (docs/API.md, "Merge markers"): map-lists and sets are
 * owned item by item, atomic lists and structs as one field, granular maps key by key.
 */
import { BACKENDS, coreBackend, statusOf } from '../registry/core-backends';
import type { ApiObject, Core } from '../../../src/core';
import { apply, ctx, freshNamespace, ownership, rs, rsConfig, where } from './support';

const roleBindings = (name?: string) => ({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings', namespace: where.namespace, name });
const containers = (...c: Array<[string, string]>) => c.map(([name, image]) => ({ name, image }));
const names = (obj: ApiObject) => (obj.spec as { template: { spec: { containers: { name: string }[] } } }).template.spec.containers.map((c) => c.name);

describe.each(BACKENDS)('apply follows list and map markers on %s', (backendName) => {
  const backend = coreBackend(backendName);
  let core: Core;

  beforeEach(async () => {
    ({ core } = await backend.open());
    await freshNamespace(core);
  });
  afterEach(() => backend.closeAll());
  afterAll(() => backend.teardown());

  it('owns map-list items one by one: appliers add, share and remove items independently', async () => {
    await apply(core, rsConfig({ containers: containers(['a', 'a:1']) }), 'alice');
    const both = await apply(core, rsConfig({ containers: containers(['b', 'b:1']) }), 'bob');
    expect(names(both.object)).toEqual(['a', 'b']);
    await apply(core, rsConfig({ containers: containers(['a', 'a:1'], ['b', 'b:1']) }), 'carol');
    const afterAlice = await apply(core, rsConfig({ containers: containers(['z', 'z:1']) }), 'alice');
    // `a` is still carol's: it stays; alice's new item is added after the live ones.
    expect(names(afterAlice.object)).toEqual(['a', 'b', 'z']);
    await apply(core, rsConfig({ containers: containers(['b', 'b:1']) }), 'carol');
    const gone = await core.get(rs('web'), {}, ctx);
    expect(names(gone)).toEqual(['b', 'z']);
  });

  it('owns set items one by one (metadata.finalizers)', async () => {
    const withFinalizers = (f: string[]) => ({ ...rsConfig(), metadata: { name: 'web', finalizers: f } });
    await apply(core, withFinalizers(['x/a']), 'alice');
    const merged = await apply(core, withFinalizers(['x/b']), 'bob');
    expect(merged.object.metadata!.finalizers).toEqual(['x/a', 'x/b']);
    expect(ownership(merged.object).find(([m]) => m === 'bob(Apply)')![1]).toMatchObject({ 'f:metadata': { 'f:finalizers': { 'v:"x/b"': {} } } });
    const dropped = await apply(core, withFinalizers([]), 'alice');
    expect(dropped.object.metadata!.finalizers).toEqual(['x/b']);
  });

  it('owns atomic lists and atomic structs whole: RoleBinding subjects, the label selector', async () => {
    const binding = (subjects: Array<{ kind: string; name: string }>) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: 'rb' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
      subjects: subjects.map((s) => ({ ...s, apiGroup: 'rbac.authorization.k8s.io' })),
    });
    const created = await apply(core, binding([{ kind: 'User', name: 'x' }]), 'alice', {}, roleBindings('rb'));
    expect(ownership(created.object)).toEqual([['alice(Apply)', { 'f:roleRef': {}, 'f:subjects': {} }]]);
    const err = await statusOf(apply(core, binding([{ kind: 'User', name: 'y' }]), 'bob', {}, roleBindings('rb')), 409, 'Conflict');
    // The same roleRef is shared; the different subjects list conflicts as one field.
    expect(err.status.message).toBe('Apply failed with 1 conflict: conflict with "alice": .subjects');

    await apply(core, rsConfig(), 'alice');
    const selector = { ...rsConfig(), spec: { selector: { matchLabels: { app: 'web', extra: 'x' } } } };
    const selectorConflict = await statusOf(apply(core, selector, 'bob'), 409, 'Conflict');
    expect(selectorConflict.status.details!.causes!.map((c) => c.field)).toEqual(['.spec.selector']);
  });

  it('owns granular maps key by key (labels)', async () => {
    const labelled = (labels: Record<string, string>) => ({ ...rsConfig(), metadata: { name: 'web', labels } });
    await apply(core, labelled({ a: '1' }), 'alice');
    const both = await apply(core, labelled({ b: '2' }), 'bob');
    expect(both.object.metadata!.labels).toEqual({ a: '1', b: '2' });
    const conflict = await statusOf(apply(core, labelled({ a: '9' }), 'bob'), 409, 'Conflict');
    expect(conflict.status.message).toBe('Apply failed with 1 conflict: conflict with "alice": .metadata.labels.a');
  });
});
