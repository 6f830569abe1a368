/**
 * Strategic merge patch against the schema's patch strategies and merge keys, with every
 * directive and upstream's ordering and error rules (apimachinery strategicpatch, server side).
 */
import { createNaming, UPSTREAM_VENDOR } from '../../../src/naming';
import { schemaTypes } from '../../../src/schema';
import { SmpError, strategicMergePatch } from '../../../src/core/patch';

const type = (name: string) => schemaTypes(createNaming(UPSTREAM_VENDOR)).get(name)!;
const pod = type('core.v1.Pod');
const rs = type('apps.v1.ReplicaSet');
const rb = type('rbac.v1.RoleBinding');

const patch = (original: unknown, p: unknown, t = pod) => strategicMergePatch(JSON.parse(JSON.stringify(original)), JSON.parse(JSON.stringify(p)), t);

function smpError(fn: () => unknown): SmpError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SmpError);
    return err as SmpError;
  }
  throw new Error('expected an SmpError');
}

const base = {
  metadata: { name: 'p', labels: { a: '1', b: '2' }, finalizers: ['x/a', 'x/b', 'x/c'] },
  spec: {
    containers: [
      {
        name: 'app',
        image: 'app:1',
        env: [
          { name: 'A', value: '1' },
          { name: 'B', value: '2' },
        ],
        ports: [{ containerPort: 80, protocol: 'TCP' }],
      },
      { name: 'side', image: 'side:1' },
    ],
    volumes: [{ name: 'data', hostPath: { path: '/data' } }],
  },
};

describe('strategic merge patch', () => {
  it('merges maps key by key, deletes with null and drops nulls inside new values', () => {
    const out = patch(base, { metadata: { labels: { a: null, c: '3' }, annotations: { k: 'v', gone: null } } });
    expect(out.metadata).toEqual({ name: 'p', labels: { b: '2', c: '3' }, annotations: { k: 'v' }, finalizers: ['x/a', 'x/b', 'x/c'] });
  });

  it('merges lists of objects by the merge key the schema declares, keeping live order', () => {
    const out = patch(base, {
      spec: {
        containers: [
          { name: 'side', image: 'side:2' },
          { name: 'new', image: 'new:1' },
        ],
      },
    });
    const containers = (out.spec as { containers: { name: string; image: string }[] }).containers;
    expect(containers.map((c) => `${c.name}=${c.image}`)).toEqual(['app=app:1', 'side=side:2', 'new=new:1']);
    const env = patch(base, {
      spec: {
        containers: [
          {
            name: 'app',
            env: [
              { name: 'B', value: 'b' },
              { name: 'C', value: 'c' },
            ],
          },
        ],
      },
    });
    expect((env.spec as { containers: { env: unknown[] }[] }).containers[0]!.env).toEqual([
      { name: 'A', value: '1' },
      { name: 'B', value: 'b' },
      { name: 'C', value: 'c' },
    ]);
  });

  it('merges ReplicaSet status conditions by type', () => {
    const original = { status: { replicas: 1, conditions: [{ type: 'ReplicaFailure', status: 'True', reason: 'x' }] } };
    const out = patch(
      original,
      {
        status: {
          conditions: [
            { type: 'ReplicaFailure', status: 'False' },
            { type: 'Other', status: 'True' },
          ],
        },
      },
      rs,
    );
    expect(out.status).toEqual({
      replicas: 1,
      conditions: [
        { type: 'ReplicaFailure', status: 'False', reason: 'x' },
        { type: 'Other', status: 'True' },
      ],
    });
  });

  it('replaces lists without a merge strategy: RoleBinding subjects are atomic', () => {
    const original = {
      subjects: [
        { kind: 'User', name: 'a' },
        { kind: 'User', name: 'b' },
      ],
      roleRef: { kind: 'Role', name: 'r', apiGroup: 'rbac' },
    };
    const out = patch(original, { subjects: [{ kind: 'User', name: 'c' }] }, rb);
    expect(out.subjects).toEqual([{ kind: 'User', name: 'c' }]);
  });

  it('merges scalar lists with the merge strategy as sets and deletes with $deleteFromPrimitiveList', () => {
    // The patch's items keep the patch's order; a new item ahead of a live one stays ahead of it.
    expect(patch(base, { metadata: { finalizers: ['x/d', 'x/a'] } }).metadata).toMatchObject({ finalizers: ['x/d', 'x/a', 'x/b', 'x/c'] });
    expect(patch(base, { metadata: { finalizers: ['x/b', 'x/e'] } }).metadata).toMatchObject({ finalizers: ['x/a', 'x/b', 'x/e', 'x/c'] });
    expect(patch(base, { metadata: { '$deleteFromPrimitiveList/finalizers': ['x/b'] } }).metadata).toMatchObject({ finalizers: ['x/a', 'x/c'] });
    expect(smpError(() => patch(base, { metadata: { $deleteFromPrimitiveList: ['x/b'] } })).message).toBe('invalid patch format of primitive list');
  });

  it('orders a list by $setElementOrder, then the patch, then the live list', () => {
    const out = patch(base, { spec: { '$setElementOrder/containers': [{ name: 'side' }, { name: 'app' }], containers: [{ name: 'app', image: 'app:2' }] } });
    expect((out.spec as { containers: { name: string; image: string }[] }).containers.map((c) => `${c.name}=${c.image}`)).toEqual(['side=side:1', 'app=app:2']);
    const finalizers = patch(base, { metadata: { '$setElementOrder/finalizers': ['x/c', 'x/a', 'x/b'] } });
    expect(finalizers.metadata).toMatchObject({ finalizers: ['x/c', 'x/a', 'x/b'] });
  });

  it('replaces a map with $patch: replace and empties it with $patch: delete', () => {
    expect(patch(base, { metadata: { labels: { $patch: 'replace', z: '9' } } }).metadata).toMatchObject({ labels: { z: '9' } });
    expect(patch(base, { metadata: { labels: { $patch: 'delete' } } }).metadata).toMatchObject({ labels: {} });
  });

  it('deletes list items with $patch: delete and replaces a list with a $patch: replace item', () => {
    const deleted = patch(base, { spec: { containers: [{ name: 'side', $patch: 'delete' }] } });
    expect((deleted.spec as { containers: { name: string }[] }).containers.map((c) => c.name)).toEqual(['app']);
    const replaced = patch(base, { spec: { containers: [{ $patch: 'replace' }, { name: 'only', image: 'o' }] } });
    expect((replaced.spec as { containers: unknown[] }).containers).toEqual([{ name: 'only', image: 'o' }]);
  });

  it('keeps only the listed keys with $retainKeys and checks the patch against them', () => {
    const out = patch(base, { spec: { volumes: [{ name: 'data', $retainKeys: ['name', 'emptyDir'], emptyDir: {} }] } });
    expect((out.spec as { volumes: unknown[] }).volumes).toEqual([{ name: 'data', emptyDir: {} }]);
    const bad = smpError(() => patch(base, { spec: { volumes: [{ name: 'data', $retainKeys: ['name'], emptyDir: {} }] } }));
    expect({ kind: bad.kind, message: bad.message }).toEqual({ kind: 'badRequest', message: 'invalid patch format of retainKeys' });
    expect(smpError(() => patch(base, { spec: { $retainKeys: 'containers' } })).kind).toBe('badRequest');
  });

  it('drops directives inside values that are new to the object', () => {
    const out = patch(
      { metadata: { name: 'p' } },
      {
        metadata: { labels: { a: '1', nested: null } },
        spec: {
          containers: [
            { $patch: 'delete', name: 'x' },
            { name: 'y', image: 'y' },
          ],
        },
      },
    );
    expect(out).toEqual({ metadata: { name: 'p', labels: { a: '1' } }, spec: { containers: [{ name: 'y', image: 'y' }] } });
  });

  it('answers the errors upstream answers, with its messages', () => {
    const mergeInMap = smpError(() => patch(base, { metadata: { labels: { $patch: 'merge' } } }));
    expect({ kind: mergeInMap.kind, message: mergeInMap.message }).toEqual({
      kind: 'internal',
      message: 'unknown patch type: merge in map: map[$patch:merge]',
    });
    expect(smpError(() => patch(base, { spec: { containers: [{ $patch: 'merge' }] } })).message).toBe('merging lists cannot yet be specified in the patch');
    const noKey = smpError(() => patch(base, { spec: { containers: [{ image: 'x' }] } }));
    expect(noKey.message).toBe('map: map[image:x] does not contain declared merge key: name');
    const listOfLists = smpError(() => patch({ metadata: { finalizers: [['a']] } }, { metadata: { finalizers: [['b']] } }));
    expect(listOfLists.kind).toBe('unprocessable');
    expect(smpError(() => patch(base, [1])).message).toBe('json: cannot unmarshal array into Go value of type map[string]interface {}');
  });

  it('treats a null patch as no change', () => {
    expect(patch(base, null)).toEqual(base);
  });
});
