import type { ObjectMeta } from '../../../src/core/api';
import { validateObjectMeta, validateObjectMetaUpdate } from '../../../src/core/validation/metadata';

const messages = (errs: { message: string }[]) => errs.map((e) => e.message);
const namespaced = { namespaced: true, nameRule: 'dns1123Subdomain' as const };
const cluster = { namespaced: false, nameRule: 'dns1123Subdomain' as const };

describe('validateObjectMeta', () => {
  it('accepts a plain namespaced object', () => {
    expect(validateObjectMeta({ name: 'web', namespace: 'default', labels: { app: 'web' } }, namespaced)).toEqual([]);
  });

  it('requires a name', () => {
    expect(messages(validateObjectMeta({ namespace: 'default' }, namespaced))).toEqual(['metadata.name: Required value: name or generateName is required']);
  });

  it('reports an invalid name with the upstream detail', () => {
    expect(messages(validateObjectMeta({ name: 'Web', namespace: 'default' }, namespaced))).toEqual([
      `metadata.name: Invalid value: "Web": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`,
    ]);
  });

  it('validates generateName as a prefix and the generated name as a name', () => {
    expect(validateObjectMeta({ generateName: 'web-', name: 'web-abcde', namespace: 'default' }, namespaced)).toEqual([]);
    const errs = validateObjectMeta({ generateName: 'Web-', name: 'Web-abcde', namespace: 'default' }, namespaced);
    expect(errs.map((e) => e.field)).toEqual(['metadata.generateName', 'metadata.name']);
  });

  it('requires a namespace for namespaced types and forbids it for cluster-scoped ones', () => {
    expect(messages(validateObjectMeta({ name: 'a' }, namespaced))).toEqual(['metadata.namespace: Required value']);
    expect(messages(validateObjectMeta({ name: 'a', namespace: 'ns' }, cluster))).toEqual(['metadata.namespace: Forbidden: not allowed on this type']);
    expect(validateObjectMeta({ name: 'a', namespace: 'a.b' }, namespaced)[0]!.message).toBe('metadata.namespace: Invalid value: "a.b": must not contain dots');
  });

  it('checks label keys and values against the map path', () => {
    const errs = validateObjectMeta({ name: 'a', labels: { 'bad key': 'x', ok: '-bad' } }, cluster);
    expect(errs.map((e) => e.field)).toEqual(['metadata.labels', 'metadata.labels']);
    expect(errs[0]!.message).toMatch(/^metadata.labels: Invalid value: "bad key": name part must consist of/);
    expect(errs[1]!.message).toMatch(/^metadata.labels: Invalid value: "-bad": a valid label must be an empty string/);
  });

  it('checks annotation keys case-insensitively and limits their total size', () => {
    expect(validateObjectMeta({ name: 'a', annotations: { 'Example.COM/Key': 'v' } }, cluster)).toEqual([]);
    expect(messages(validateObjectMeta({ name: 'a', annotations: { big: 'x'.repeat(256 * 1024) } }, cluster))).toEqual([
      'metadata.annotations: Too long: may not be more than 262144 bytes',
    ]);
  });

  it('requires owner reference fields and at most one controller', () => {
    const errs = validateObjectMeta(
      {
        name: 'a',
        ownerReferences: [
          { apiVersion: '', kind: '', name: '', uid: '' },
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'r1', uid: 'u1', controller: true },
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'r2', uid: 'u2', controller: true },
        ],
      },
      cluster,
    );
    expect(messages(errs).slice(0, 4)).toEqual([
      'metadata.ownerReferences.apiVersion: Invalid value: "": version must not be empty',
      'metadata.ownerReferences.kind: Invalid value: "": must not be empty',
      'metadata.ownerReferences.name: Invalid value: "": must not be empty',
      'metadata.ownerReferences.uid: Invalid value: "": must not be empty',
    ]);
    expect(errs[4]!.detail).toBe('Only one reference can have Controller set to true. Found "true" in references for ReplicaSet/r1 and ReplicaSet/r2');
  });

  it('refuses core Events as owners', () => {
    const errs = validateObjectMeta({ name: 'a', ownerReferences: [{ apiVersion: 'v1', kind: 'Event', name: 'e', uid: 'u' }] }, cluster);
    expect(errs[0]!.detail).toBe('/v1, Kind=Event is disallowed from being an owner');
  });

  it('checks finalizers', () => {
    expect(validateObjectMeta({ name: 'a', finalizers: ['example.com/cleanup', 'kubernetes', 'orphan'] }, cluster)).toEqual([]);
    expect(messages(validateObjectMeta({ name: 'a', finalizers: ['cleanup'] }, cluster))).toEqual([
      'metadata.finalizers[0]: Invalid value: "cleanup": name is neither a standard finalizer name nor is it fully qualified',
    ]);
    expect(validateObjectMeta({ name: 'a', finalizers: ['cleanup'] }, { ...cluster, customResource: true })).toEqual([]);
    expect(messages(validateObjectMeta({ name: 'a', finalizers: ['orphan', 'foregroundDeletion'] }, cluster))).toEqual([
      'metadata.finalizers: Invalid value: []string{"orphan", "foregroundDeletion"}: finalizer orphan and foregroundDeletion cannot be both set',
    ]);
  });

  it('checks managed fields entries', () => {
    const errs = validateObjectMeta({ name: 'a', managedFields: [{ manager: 'x\ty', operation: 'Patch' as never, fieldsType: 'FieldsV2' as never }] }, cluster);
    expect(messages(errs)).toEqual([
      'metadata.managedFields[0].operation: Invalid value: "Patch": must be `Apply` or `Update`',
      'metadata.managedFields[0].fieldsType: Invalid value: "FieldsV2": must be `FieldsV1`',
      'metadata.managedFields[0].manager: Invalid value: "x\\ty": invalid character U+0009 (at position 1)',
    ]);
  });

  it('refuses a negative generation', () => {
    expect(messages(validateObjectMeta({ name: 'a', generation: -1 }, cluster))).toEqual([
      'metadata.generation: Invalid value: -1: must be greater than or equal to 0',
    ]);
  });
});

describe('validateObjectMetaUpdate', () => {
  const old: ObjectMeta = { name: 'a', namespace: 'ns', uid: 'u1', resourceVersion: '5', generation: 2, creationTimestamp: '2024-05-01T10:00:00Z' };

  it('accepts an unchanged identity', () => {
    expect(validateObjectMetaUpdate({ ...old, labels: { x: 'y' } }, old)).toEqual([]);
  });

  it('keeps name, namespace, uid and creationTimestamp immutable', () => {
    const errs = validateObjectMetaUpdate({ ...old, name: 'b', namespace: 'other', uid: 'u2', creationTimestamp: '2024-05-02T10:00:00Z' }, old);
    expect(messages(errs)).toEqual([
      'metadata.name: Invalid value: "b": field is immutable',
      'metadata.namespace: Invalid value: "other": field is immutable',
      'metadata.uid: Invalid value: "u2": field is immutable',
      'metadata.creationTimestamp: Invalid value: 2024-05-02 10:00:00 +0000 UTC: field is immutable',
    ]);
  });

  it('does not treat generateName as immutable', () => {
    expect(validateObjectMetaUpdate({ ...old, generateName: 'x-' }, old)).toEqual([]);
  });

  it('requires a resourceVersion and refuses a lower generation', () => {
    expect(messages(validateObjectMetaUpdate({ ...old, resourceVersion: undefined, generation: 1 }, old))).toEqual([
      'metadata.resourceVersion: Invalid value: "": must be specified for an update',
      'metadata.generation: Invalid value: 1: must not be decremented',
    ]);
  });

  it('refuses new finalizers on an object being deleted', () => {
    const deleting = { ...old, deletionTimestamp: '2024-05-03T00:00:00Z', finalizers: ['a.io/x'] };
    expect(validateObjectMetaUpdate({ ...deleting, finalizers: [] }, deleting)).toEqual([]);
    expect(messages(validateObjectMetaUpdate({ ...deleting, finalizers: ['a.io/x', 'b.io/y', 'a.io/z'] }, deleting))).toEqual([
      'metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{"a.io/z", "b.io/y"}',
    ]);
  });

  it('keeps deletion fields immutable', () => {
    expect(messages(validateObjectMetaUpdate({ ...old, deletionTimestamp: '2024-05-03T00:00:00.5Z', deletionGracePeriodSeconds: 30 }, old))).toEqual([
      'metadata.deletionTimestamp: Invalid value: 2024-05-03 00:00:00.5 +0000 UTC: field is immutable',
      'metadata.deletionGracePeriodSeconds: Invalid value: 30: field is immutable',
    ]);
  });
});
