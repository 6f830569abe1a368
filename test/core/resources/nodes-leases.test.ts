import type { Lease, Node } from '../../../src/core/resources';
import { create, definition, update } from './through-store';

const nodeDef = definition('nodes');
const leaseDef = definition('leases');

function node(spec: Record<string, unknown> = {}, status: Record<string, unknown> = {}) {
  return { metadata: { name: 'node-1' }, spec, status };
}

describe('nodes', () => {
  it('keeps the status a registering node reports, and refuses a node name that is not a DNS subdomain', async () => {
    const { object, messages } = await create<Node>(nodeDef, node({}, { conditions: [{ type: 'Ready', status: 'True' }] }));
    expect(messages).toEqual([]);
    expect(object.status?.conditions?.[0]?.type).toBe('Ready');
    expect((await create<Node>(nodeDef, { metadata: { name: 'Node_1' } })).errors[0]?.field).toBe('metadata.name');
  });

  it('validates taints as upstream, under the path upstream gives them', async () => {
    const { errors } = await create<Node>(
      nodeDef,
      node({
        taints: [
          { key: 'a', effect: 'NoSchedule' },
          { key: 'a', effect: 'NoSchedule' },
          { key: 'b', effect: 'Sometimes' },
          { key: 'c', effect: '' },
          { key: 'bad key', value: 'x', effect: 'NoExecute' },
        ],
      }),
    );
    expect(errors.map((e) => `${e.field} ${e.type}`)).toEqual([
      'metadata.taints[1] FieldValueDuplicate',
      'metadata.taints[2].effect FieldValueNotSupported',
      'metadata.taints[3].effect FieldValueRequired',
      'metadata.taints[4].key FieldValueInvalid',
    ]);
    expect(errors[0]!.message).toContain('taints must be unique by key and effect pair');
    expect(`${errors[1]!.field}: ${errors[1]!.message}`).toBe(
      'metadata.taints[2].effect: Unsupported value: "Sometimes": supported values: "NoSchedule", "PreferNoSchedule", "NoExecute"',
    );
  });

  it('validates pod CIDRs: valid CIDRs, at most one per family', async () => {
    expect((await create<Node>(nodeDef, node({ podCIDRs: ['10.0.0.0/24', 'fd00::/64'] }))).errors).toEqual([]);
    expect((await create<Node>(nodeDef, node({ podCIDRs: ['10.0.0.0/33'] }))).messages).toEqual([
      'spec.podCIDRs[0]: Invalid value: "10.0.0.0/33": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)',
    ]);
    expect((await create<Node>(nodeDef, node({ podCIDRs: ['10.0.0.0/24', '10.1.0.0/24'] }))).messages[0]).toContain(
      'may specify no more than one CIDR for each IP family',
    );
  });

  it('lets an update set podCIDRs and providerID once, never change them, and keeps status out of main updates', async () => {
    const old = node({ podCIDRs: ['10.0.0.0/24'], providerID: 'sim://node-1' }, { capacity: { pods: '110' } });
    const changed = await update<Node>(nodeDef, node({ podCIDRs: ['10.0.1.0/24'], providerID: 'sim://other' }, {}), old);
    expect(changed.messages).toEqual([
      'spec.podCIDRs: Forbidden: node updates may not change podCIDR except from "" to valid',
      'spec.providerID: Forbidden: node updates may not change providerID except from "" to valid',
    ]);
    const cordoned = await update<Node>(
      nodeDef,
      node({ podCIDRs: ['10.0.0.0/24'], providerID: 'sim://node-1', unschedulable: true }, { capacity: { pods: '1' } }),
      old,
    );
    expect(cordoned.errors).toEqual([]);
    expect(cordoned.object.spec?.unschedulable).toBe(true);
    expect(cordoned.object.status?.capacity).toEqual({ pods: '110' });
  });

  it('takes only status through /status, and refuses duplicate addresses', async () => {
    const old = node({ unschedulable: false }, {});
    const { object, errors } = await update<Node>(
      nodeDef,
      node({ unschedulable: true }, { addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] }),
      old,
      'status',
    );
    expect(errors).toEqual([]);
    expect(object.spec?.unschedulable).toBe(false);
    expect(object.status?.addresses).toEqual([{ type: 'InternalIP', address: '10.0.0.1' }]);
    const dup = { type: 'InternalIP', address: '10.0.0.1' };
    expect((await update<Node>(nodeDef, node({}, { addresses: [dup, dup] }), old, 'status')).messages[0]).toMatch(/^status\.addresses\[1\]: Duplicate value/);
  });
});

describe('leases', () => {
  const lease = (spec: Record<string, unknown>) => ({ metadata: { name: 'node-1', namespace: 'default' }, spec });

  it('validates duration and transitions as upstream', async () => {
    expect((await create<Lease>(leaseDef, lease({ holderIdentity: 'a', leaseDurationSeconds: 40, leaseTransitions: 0 }))).errors).toEqual([]);
    expect((await create<Lease>(leaseDef, lease({ leaseDurationSeconds: 0, leaseTransitions: -1 }))).messages).toEqual([
      'spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0',
      'spec.leaseTransitions: Invalid value: -1: must be greater than or equal to 0',
    ]);
  });

  it('drops the fields of the CoordinatedLeaderElection gate, which is off', async () => {
    const { object } = await create<Lease>(leaseDef, lease({ holderIdentity: 'a', strategy: 'OldestEmulationVersion', preferredHolder: 'b' }));
    expect(object.spec).toEqual({ holderIdentity: 'a' });
  });
});
