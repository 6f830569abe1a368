/**
 * Extension servers' v2 documents merged as kube-openapi merges them for the aggregator: cut to
 * the APIService's group version with the definitions its paths reach, a path already served
 * left out, a definition of a taken name dropped when equal and renamed `_v2`, `_v3` … when
 * not, with the references following the rename.
 */
import { filterV2ByGroupVersion, mergeRemoteV2 } from '../../../src/gateway/openapi/remote';

const ref = (name: string) => ({ $ref: `#/definitions/${name}` });

describe('filterV2ByGroupVersion', () => {
  it('keeps the paths under /apis/<group>/<version>/ and the definitions they reach, transitively', () => {
    const doc = {
      paths: {
        '/apis/w.example.com/v1/flunders': { get: { responses: { '200': { schema: ref('Flunder') } } } },
        '/apis/w.example.com/v2/flunders': { get: { responses: { '200': { schema: ref('Other') } } } },
        '/apis/w.example.com/v1': { get: { responses: { '200': { schema: ref('Other') } } } },
      },
      definitions: { Flunder: { properties: { spec: ref('Spec') } }, Spec: { type: 'object' }, Other: { type: 'object' }, Unused: {} },
    };
    const cut = filterV2ByGroupVersion(doc, 'w.example.com', 'v1');
    expect(Object.keys(cut.paths)).toEqual(['/apis/w.example.com/v1/flunders']);
    expect(Object.keys(cut.definitions).sort()).toEqual(['Flunder', 'Spec']);
  });

  it('gives nothing for a document without paths or definitions', () => {
    expect(filterV2ByGroupVersion({}, 'g', 'v')).toEqual({ paths: {}, definitions: {} });
  });
});

describe('mergeRemoteV2', () => {
  const local = {
    paths: new Set(['/api/v1/pods']),
    definition: (name: string) => ({ ObjectMeta: { type: 'object', description: 'ours' } })[name],
  };

  it('leaves out a path already served, and what only it reached', () => {
    const merged = mergeRemoteV2(local, [{ paths: { '/api/v1/pods': { get: ref('Pod') } }, definitions: { Pod: {} } }]);
    expect(merged).toEqual({ paths: {}, definitions: {} });
  });

  it('drops an equal definition and renames a different one, its references following', () => {
    const merged = mergeRemoteV2(local, [
      {
        paths: { '/apis/a/v1/xs': { get: ref('X') } },
        definitions: { X: { properties: { metadata: ref('ObjectMeta') } }, ObjectMeta: { type: 'object', description: 'theirs' } },
      },
      {
        paths: { '/apis/b/v1/ys': { get: ref('Y') } },
        definitions: {
          Y: { properties: { metadata: ref('ObjectMeta'), x: ref('X') } },
          ObjectMeta: { type: 'object', description: 'ours' },
          X: { type: 'string' },
        },
      },
    ]);
    expect(merged.paths).toEqual({ '/apis/a/v1/xs': { get: ref('X') }, '/apis/b/v1/ys': { get: ref('Y') } });
    expect(merged.definitions.ObjectMeta_v2).toEqual({ type: 'object', description: 'theirs' });
    expect(merged.definitions.X).toEqual({ properties: { metadata: ref('ObjectMeta_v2') } });
    // The second server's ObjectMeta is ours: no copy. Its X differs from the first server's: X_v2.
    expect(merged.definitions.X_v2).toEqual({ type: 'string' });
    expect(merged.definitions.Y).toEqual({ properties: { metadata: ref('ObjectMeta'), x: ref('X_v2') } });
    expect(Object.keys(merged.definitions).sort()).toEqual(['ObjectMeta_v2', 'X', 'X_v2', 'Y']);
  });

  it('a path two extension servers both serve goes to the first', () => {
    const merged = mergeRemoteV2(local, [
      { paths: { '/apis/a/v1/xs': { get: { description: 'first' } } }, definitions: {} },
      { paths: { '/apis/a/v1/xs': { get: { description: 'second' } } }, definitions: {} },
    ]);
    expect(merged.paths['/apis/a/v1/xs']).toEqual({ get: { description: 'first' } });
  });
});
