import type { Namespace } from '../../../src/core/resources';
import { createNaming } from '../../../src/naming';
import { create, definition, stored, update } from './through-store';

const ns = definition('namespaces');
const nameLabel = createNaming('kubernetes').key('metadata.name');

describe('namespaces', () => {
  it('adds the lifecycle finalizer, phase Active and the name label on create', async () => {
    const { object, messages } = await create<Namespace>(ns, { metadata: { name: 'team-a' } });
    expect(messages).toEqual([]);
    expect(object.spec?.finalizers).toEqual(['kubernetes']);
    expect(object.status).toEqual({ phase: 'Active' });
    expect(object.metadata?.labels).toEqual({ [nameLabel]: 'team-a' });
  });

  it('keeps other finalizers and appends the lifecycle one', async () => {
    const { object } = await create<Namespace>(ns, { metadata: { name: 'a' }, spec: { finalizers: ['example.com/x'] } });
    expect(object.spec?.finalizers).toEqual(['example.com/x', 'kubernetes']);
  });

  it('names namespaces with DNS labels', async () => {
    expect((await create(ns, { metadata: { name: 'a.b' } })).messages).toEqual(['metadata.name: Invalid value: "a.b": must not contain dots']);
  });

  it("drops a namespace given on a namespace, as upstream's BeforeCreate clears it for cluster-scoped types", async () => {
    const { object, messages } = await create<Namespace>(ns, { metadata: { name: 'a', namespace: 'b' } });
    expect(messages).toEqual([]);
    expect(object.metadata).not.toHaveProperty('namespace');
  });

  it('validates spec.finalizers on the list path', async () => {
    expect((await create(ns, { metadata: { name: 'a' }, spec: { finalizers: ['bad/x/y'] } })).errors.map((e) => e.field)).toEqual(['spec.finalizers']);
    expect((await create(ns, { metadata: { name: 'a' }, spec: { finalizers: ['custom'] } })).messages).toEqual([
      'spec.finalizers: Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified',
    ]);
  });

  it('ignores spec.finalizers and status on update, and re-labels with the name', async () => {
    const old = await stored<Namespace>(ns, { metadata: { name: 'a' } });
    const { object, messages } = await update<Namespace>(
      ns,
      { metadata: { name: 'a', labels: {} }, spec: { finalizers: [] }, status: { phase: 'Terminating' } },
      old,
    );
    expect(messages).toEqual([]);
    expect(object.spec?.finalizers).toEqual(['kubernetes']);
    expect(object.status?.phase).toBe('Active');
    expect(object.metadata?.labels).toEqual({ [nameLabel]: 'a' });
  });

  it('lets /status change the phase only in step with deletion', async () => {
    const old = await stored<Namespace>(ns, { metadata: { name: 'a' } });
    expect((await update(ns, { ...old, status: { phase: 'Terminating' } }, old, 'status')).messages).toEqual([
      'status.Phase: Invalid value: "Terminating": may only be \'Active\' if `deletionTimestamp` is empty',
    ]);
    const deleting = { ...old, metadata: { ...old.metadata, deletionTimestamp: '2024-05-02T00:00:00Z' } };
    expect((await update(ns, { ...deleting, status: { phase: 'Active' } }, deleting, 'status')).messages).toEqual([
      'status.Phase: Invalid value: "Active": may only be \'Terminating\' if `deletionTimestamp` is not empty',
    ]);
    const viaStatus = await update<Namespace>(ns, { ...deleting, spec: { finalizers: [] }, status: { phase: 'Terminating' } }, deleting, 'status');
    expect(viaStatus.messages).toEqual([]);
    expect(viaStatus.object.spec?.finalizers).toEqual(['kubernetes']);
  });

  it('stays pending while spec.finalizers remain and turns Terminating on delete', async () => {
    const obj = await stored<Namespace>(ns, { metadata: { name: 'a' } });
    expect(ns.pendingFinalizers?.(obj)).toBe(true);
    ns.prepareForDelete?.(obj);
    expect(obj.status?.phase).toBe('Terminating');
    expect(ns.pendingFinalizers?.({ ...obj, spec: { finalizers: [] } })).toBe(false);
  });

  it('selects on status.phase and the legacy name field', async () => {
    expect(ns.selectableFields?.(await stored(ns, { metadata: { name: 'a' } }))).toEqual({ 'status.phase': 'Active', name: 'a' });
  });
});
