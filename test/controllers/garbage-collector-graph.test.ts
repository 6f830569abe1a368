/**
 * The collector's graph on its own: owners and dependents linked and unlinked as objects come,
 * change and go, and the work each change asks for.
 */
import { Graph, type GraphWork, dependentsOf } from '../../src/controllers/garbage-collector-graph';
import type { ApiObject } from '../../src/core';
import type { ResourceDefinition } from '../../src/core/resources/definition';

const def = { group: 'apps', version: 'v1', resource: 'replicasets', kind: 'ReplicaSet', namespaced: true } as unknown as ResourceDefinition;

function object(uid: string, owners: string[] = [], extra: Record<string, unknown> = {}): ApiObject {
  return {
    metadata: {
      uid,
      name: `n-${uid}`,
      namespace: 'default',
      ...(owners.length ? { ownerReferences: owners.map((o) => ({ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: `n-${o}`, uid: o })) } : {}),
      ...extra,
    },
  };
}

describe('garbage collector graph', () => {
  let work: GraphWork[];
  let graph: Graph;
  beforeEach(() => {
    work = [];
    graph = new Graph((w) => work.push(w));
  });

  it('links a dependent to its owner, seen before or after it, and unlinks it when its references change', () => {
    graph.upsert(def, object('child', ['owner']));
    // The owner is not seen yet: a placeholder holds the link, and the child is to be checked.
    expect([...dependentsOf(graph.nodes.get('owner')!)]).toEqual(['child']);
    expect(work).toEqual([{ action: 'delete', uid: 'child' }]);

    graph.upsert(def, object('owner'));
    expect(graph.nodes.get('owner')!.observed).toBe(true);
    expect([...dependentsOf(graph.nodes.get('owner')!)]).toEqual(['child']);

    graph.upsert(def, object('child'));
    expect(dependentsOf(graph.nodes.get('owner')!).size).toBe(0);
    expect(graph.nodes.get('child')!.owners).toEqual([]);
  });

  it('forgets an owner known only through a dependent once that dependent lets go', () => {
    graph.upsert(def, object('child', ['ghost']));
    graph.upsert(def, object('child'));
    expect(graph.nodes.has('ghost')).toBe(false);
  });

  it('asks for its dependents to be checked when an owner goes, and for them all when it starts a foreground deletion', () => {
    graph.upsert(def, object('owner'));
    graph.upsert(def, object('a', ['owner']));
    graph.upsert(def, object('b', ['owner']));
    work = [];
    graph.upsert(def, object('owner', [], { deletionTimestamp: '2026-11-27T00:00:00Z', finalizers: ['foregroundDeletion'] }));
    expect(work).toEqual([
      { action: 'delete', uid: 'a' },
      { action: 'delete', uid: 'b' },
      { action: 'delete', uid: 'owner' },
    ]);
    work = [];
    graph.remove('owner');
    expect(work).toEqual([
      { action: 'delete', uid: 'a' },
      { action: 'delete', uid: 'b' },
    ]);
    // Still an owner of record for its dependents until they let go.
    expect(graph.nodes.get('owner')!.observed).toBe(false);
    graph.remove('a');
    graph.remove('b');
    expect(graph.nodes.has('owner')).toBe(false);
  });

  it('removes an object that owns nothing and is owned by nothing entirely', () => {
    graph.upsert(def, object('alone'));
    expect(dependentsOf(graph.nodes.get('alone')!).size).toBe(0);
    graph.remove('alone');
    expect(graph.nodes.has('alone')).toBe(false);
  });
});
