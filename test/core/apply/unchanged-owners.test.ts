/**
 * A non-apply write keeps the FieldsV1 object of every manager whose paths it leaves as they
 * were, the writer's own included when it changed only what it owned: the watch cache's entries
 * are frozen and shared (cached-object.ts), and their field sets are read once and written back
 * as the same object (set.ts).
 */
import { deepFreeze } from '../../../src/util/frozen';
import type { ApiObject } from '../../../src/core';
import { fieldManagerScope, updateManagedFields } from '../../../src/core/registry/managed-fields';
import { applyConfiguration } from '../../../src/core/apply';
import { builtinResources } from '../../../src/core/resources';
import { createNaming } from '../../../src/naming';

const naming = createNaming('kubernetes');
const NOW = Date.parse('2026-11-29T12:00:00Z');
const kubelet = { manager: 'kubelet', apiVersion: 'v1', subresource: 'status' };
const creator = { manager: 'kubectl-create', apiVersion: 'v1', subresource: '' };

function pod(ready: string): ApiObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default', uid: 'u-1', resourceVersion: '5', creationTimestamp: '2026-11-29T11:00:00Z', labels: { app: 'a' } },
    spec: { nodeName: 'n1', containers: [{ name: 'c', image: 'nginx:1.27' }] },
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: ready, lastTransitionTime: '2026-11-29T11:30:00Z' }] },
  };
}

/** The pod as the watch cache holds it after the creator and the kubelet wrote it: frozen. */
function stored(): ApiObject {
  const created = pod('True');
  delete created.status;
  created.metadata!.managedFields = updateManagedFields(undefined, created, creator, NOW - 60_000, naming);
  const withStatus = { ...pod('True'), metadata: { ...created.metadata } };
  withStatus.metadata.managedFields = updateManagedFields(created, withStatus, kubelet, NOW - 30_000, naming);
  return deepFreeze(JSON.parse(JSON.stringify(withStatus)) as ApiObject);
}

const byManager = (entries: readonly { manager?: string; fieldsV1?: unknown }[]) => new Map(entries.map((e) => [e.manager, e.fieldsV1]));

describe('managedFields of a write that leaves owners as they were', () => {
  it('keeps the FieldsV1 objects of the kubelet, changing only what it owns, and of the creator', () => {
    const live = stored();
    const before = byManager(live.metadata!.managedFields!);
    expect([...before.keys()]).toEqual(['kubectl-create', 'kubelet']);
    const next = pod('False');
    const after = byManager(updateManagedFields(live, next, kubelet, NOW, naming));
    expect(after.get('kubelet')).toBe(before.get('kubelet'));
    expect(after.get('kubectl-create')).toBe(before.get('kubectl-create'));
  });

  it('writes a new FieldsV1 for the kubelet when it takes a field it did not own, the same paths as a fresh read gives', () => {
    const live = stored();
    const before = byManager(live.metadata!.managedFields!);
    const next = pod('True');
    (next.status as Record<string, unknown>).podIP = '10.0.0.1';
    const entries = updateManagedFields(live, next, kubelet, NOW, naming);
    const after = byManager(entries);
    expect(after.get('kubelet')).not.toBe(before.get('kubelet'));
    // What the same write computes from an object that is not frozen (read afresh, written afresh).
    const fresh = byManager(updateManagedFields(JSON.parse(JSON.stringify(live)) as ApiObject, next, kubelet, NOW, naming));
    expect(after.get('kubelet')).toEqual(fresh.get('kubelet'));
    expect(JSON.stringify(after.get('kubelet'))).toContain('"f:podIP":{}');
    expect(after.get('kubectl-create')).toBe(before.get('kubectl-create'));
  });

  it('reads a body that sends the stored entries back as those entries', () => {
    const live = stored();
    const before = byManager(live.metadata!.managedFields!);
    const next = {
      ...pod('True'),
      metadata: { ...pod('True').metadata, labels: { app: 'b' }, managedFields: JSON.parse(JSON.stringify(live.metadata!.managedFields)) },
    };
    const after = byManager(updateManagedFields(live, next, creator, NOW, naming));
    // The creator owned the label it changed; the kubelet was not touched.
    expect(after.get('kubectl-create')).toBe(before.get('kubectl-create'));
    expect(after.get('kubelet')).toBe(before.get('kubelet'));
  });
});

describe('managedFields of an apply that applies what it applied before', () => {
  it("keeps the applier's FieldsV1 object, and still prunes what it stops applying", () => {
    const def = builtinResources(naming).find((d) => d.resource === 'configmaps')!;
    const scope = fieldManagerScope(def, 'v1', '', NOW, naming)!;
    const config = (data: Record<string, string>): ApiObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', namespace: 'default' }, data });
    const first = applyConfiguration(undefined, config({ a: '1', b: '2' }), 'tool', false, scope).object;
    first.metadata = { ...first.metadata, uid: 'u-1', resourceVersion: '3', creationTimestamp: '2026-11-29T11:00:00Z' };
    const live = deepFreeze(JSON.parse(JSON.stringify(first)) as ApiObject);
    const again = applyConfiguration(live, config({ a: '1', b: '2' }), 'tool', false, scope);
    expect(again.changed).toBe(false);
    expect(again.object.metadata!.managedFields![0]!.fieldsV1).toBe(live.metadata!.managedFields![0]!.fieldsV1);
    // Applying less gives the rest up: b is nobody's now, and goes.
    const less = applyConfiguration(live, config({ a: '1' }), 'tool', false, scope);
    expect(less.changed).toBe(true);
    expect(less.object.data).toEqual({ a: '1' });
    expect(less.object.metadata!.managedFields![0]!.fieldsV1).toEqual({ 'f:data': { 'f:a': {} } });
  });
});
