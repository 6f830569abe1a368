/**
 * The managedFields of a create are remembered per object shape (registry/managed-fields.ts):
 * each answer must be what the full schema walk gives for that object, and only the time may
 * differ between objects of one shape. Each core has a memo of its own (CreatedManagedFields).
 */
import type { ApiObject } from '../../../src/core/api';
import { CreatedManagedFields, type ManagerIdentity, updateManagedFields as update } from '../../../src/core/registry/managed-fields';
import { createNaming } from '../../../src/naming';

const naming = createNaming('kubernetes');
/** One core's memo, shared by the tests below as one core's creates share it. */
const created = new CreatedManagedFields();
const updateManagedFields = (prev: ApiObject | undefined, next: ApiObject, who: ManagerIdentity, now: number, memo = created) =>
  update(prev, next, who, now, naming, memo);

const who = { manager: 'kube-controller-manager', apiVersion: 'v1', subresource: '' };

function pod(name: string, containers: string[], extra: Record<string, unknown> = {}): ApiObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'default',
      uid: `uid-${name}`,
      creationTimestamp: '2026-11-26T10:00:00Z',
      labels: { app: 'web' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'rs', controller: true }],
    },
    spec: { containers: containers.map((c) => ({ name: c, image: `${c}:1`, ports: [{ containerPort: 80, protocol: 'TCP' }] })), ...extra },
    status: { phase: 'Pending' },
  };
}

/** The same create without the remembered path: a request that names empty managedFields is walked every time. */
function walked(obj: ApiObject, now: number) {
  return updateManagedFields(undefined, { ...obj, metadata: { ...obj.metadata, managedFields: [] } }, who, now);
}

describe('managedFields of created objects', () => {
  it('match the full walk for objects of one shape, differing only in time', () => {
    const first = updateManagedFields(undefined, pod('web-1', ['app']), who, Date.UTC(2026, 10, 26, 10));
    const second = updateManagedFields(undefined, pod('web-2', ['app']), who, Date.UTC(2026, 10, 26, 11));
    expect(first).toEqual(walked(pod('web-1', ['app']), Date.UTC(2026, 10, 26, 10)));
    expect(second).toEqual(walked(pod('web-2', ['app']), Date.UTC(2026, 10, 26, 11)));
    expect(second[0]!.time).toBe('2026-11-26T11:00:00Z');
    expect({ ...first[0], time: '' }).toEqual({ ...second[0], time: '' });
  });

  it('follow what the shape includes: list keys, extra fields, set values', () => {
    const cases = [
      pod('a', ['app']),
      pod('b', ['app', 'sidecar']),
      pod('c', ['other']),
      pod('d', ['app'], { nodeName: 'n1' }),
      pod('e', ['app'], { tolerations: [{ key: 'k', operator: 'Exists' }] }),
      { ...pod('f', ['app']), metadata: { ...pod('f', ['app']).metadata, finalizers: ['x.example.com/y'] } },
      { ...pod('g', ['app']), metadata: { ...pod('g', ['app']).metadata, finalizers: ['x.example.com/z'] } },
    ];
    const now = Date.UTC(2026, 10, 26, 12);
    const answers = cases.map((c) => updateManagedFields(undefined, c, who, now));
    cases.forEach((c, i) => expect(answers[i]).toEqual(walked(c, now)));
    const distinct = new Set(answers.map((a) => JSON.stringify(a)));
    expect(distinct.size).toBe(cases.length);
  });

  it('keeps each manager and apiVersion apart', () => {
    const now = Date.UTC(2026, 10, 26, 13);
    const byKubectl = updateManagedFields(undefined, pod('h', ['app']), { ...who, manager: 'kubectl' }, now);
    const byController = updateManagedFields(undefined, pod('h', ['app']), who, now);
    expect(byKubectl[0]!.manager).toBe('kubectl');
    expect(byController[0]!.manager).toBe('kube-controller-manager');
    // The same shape again right after (the last shape is compared first), under an apiVersion
    // with no schema for the kind: no managedFields, not the v1 answer remembered.
    expect(updateManagedFields(undefined, pod('h2', ['app']), { ...who, apiVersion: 'v1beta1' }, now)).toEqual([]);
    expect(updateManagedFields(undefined, pod('h3', ['app']), who, now)[0]!.apiVersion).toBe('v1');
  });

  it('answers runs of one shape and shapes taking turns alike', () => {
    const now = Date.UTC(2026, 10, 26, 15);
    const order = ['app', 'app', 'other', 'app', 'other', 'other', 'app'];
    order.forEach((c, i) => expect(updateManagedFields(undefined, pod(`k${i}`, [c]), who, now)).toEqual(walked(pod(`k${i}`, [c]), now)));
  });

  it('compares with the last shape by value: key order aside, undefined members skipped, anything else JSON would change is no match', () => {
    const now = Date.UTC(2026, 10, 26, 16);
    const base = pod('m0', ['app']);
    const reordered: ApiObject = {
      status: base.status,
      spec: base.spec,
      kind: base.kind,
      apiVersion: base.apiVersion,
      metadata: { ...base.metadata, name: 'm1' },
    };
    const withUndefined = pod('m2', ['app'], { nodeName: undefined });
    const withLabel = { ...pod('m3', ['app']), metadata: { ...pod('m3', ['app']).metadata, labels: { app: 'web', tier: 'front' } } };
    const withDate = pod('m4', ['app'], { nodeName: new Date(Date.UTC(2026, 0, 1)) });
    const withInfinity = pod('m5', ['app'], { activeDeadlineSeconds: Infinity });
    const withHole = pod('m6', ['app'], { tolerations: [undefined, { key: 'k', operator: 'Exists' }] });
    for (const c of [base, reordered, withUndefined, withLabel, base, withDate, base, withInfinity, base, withHole, base]) {
      expect(updateManagedFields(undefined, c, who, now)).toEqual(walked(c, now));
    }
  });

  it('hands out entries a caller may change without touching the next answer', () => {
    const now = Date.UTC(2026, 10, 26, 14);
    const one = updateManagedFields(undefined, pod('i', ['app']), who, now);
    one[0]!.manager = 'changed';
    one.push({ manager: 'extra' });
    const two = updateManagedFields(undefined, pod('j', ['app']), who, now);
    expect(two).toHaveLength(1);
    expect(two[0]!.manager).toBe('kube-controller-manager');
  });

  it("are one core's: another memo (another server's core) walks the shape itself", () => {
    const now = Date.UTC(2026, 10, 26, 17);
    const here = updateManagedFields(undefined, pod('n1', ['app']), who, now);
    const hereAgain = updateManagedFields(undefined, pod('n2', ['app']), who, now);
    const other = new CreatedManagedFields();
    const there = updateManagedFields(undefined, pod('n3', ['app']), who, now, other);
    // Within one memo the field set is the one remembered; the other memo made its own.
    expect(hereAgain[0]!.fieldsV1).toBe(here[0]!.fieldsV1);
    expect(there[0]!.fieldsV1).toEqual(here[0]!.fieldsV1);
    expect(there[0]!.fieldsV1).not.toBe(here[0]!.fieldsV1);
    expect(updateManagedFields(undefined, pod('n4', ['app']), who, now, other)[0]!.fieldsV1).toBe(there[0]!.fieldsV1);
  });
});
