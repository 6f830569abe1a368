/**
 * API Priority and Fairness' configuration controller over a real core (embedded store), in
 * both naming profiles: the default objects made at start, mandatory ones restored, suggested
 * ones updated only while their autoupdate annotation allows, and the Dangling condition set
 * and cleared.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCore, type ApiObject, type Core, type RequestContext, type ResourceTarget } from '../../src/core';
import { builtinResources } from '../../src/core/resources';
import { FlowControlConfigController } from '../../src/controllers';
import { ManualClock } from '../../src/clock';
import { createStore } from '../../src/store';
import { createNaming, type Vendor } from '../../src/naming';

const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };
type Spec = Record<string, unknown>;

describe.each<Vendor>(['kubernetes', 'platform'])('the priority and fairness configuration (%s profile)', (vendor) => {
  const naming = createNaming(vendor);
  const key = naming.labels.apfAutoupdate;
  const target = (resource: string, name?: string, subresource?: string): ResourceTarget => ({
    group: naming.groups.flowcontrol,
    version: 'v1',
    resource,
    ...(name ? { name } : {}),
    ...(subresource ? { subresource } : {}),
  });
  let dir: string;
  let core: Core;
  let controller: FlowControlConfigController;
  const names = async (resource: string) => ((await core.list(target(resource), {}, admin)).items as ApiObject[]).map((o) => o.metadata!.name).sort();
  const get = async (resource: string, name: string) => (await core.get(target(resource, name), {}, admin)) as ApiObject & { spec: Spec; status?: Spec };
  const settle = async () => {
    // A write's watch event reaches the informer after the write resolves; the queue then runs once more.
    for (let i = 0; i < 5; i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      await controller.idle();
    }
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-apf-config-'));
    core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming, compactionIntervalMs: 0, resources: builtinResources(naming) });
    await core.ready();
    controller = new FlowControlConfigController({ core, naming, clock: new ManualClock(Date.parse('2026-01-01T00:00:00Z')), user: admin.user });
    controller.start();
    await settle();
  });
  afterAll(async () => {
    controller.stop();
    await core.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("creates upstream's mandatory and suggested objects at start, annotated for autoupdate, under the profile's names", async () => {
    expect(await names('prioritylevelconfigurations')).toEqual([
      'catch-all',
      'exempt',
      'global-default',
      'leader-election',
      'node-high',
      'system',
      'workload-high',
      'workload-low',
    ]);
    const prefix = naming.namespaces.system.replace(/-system$/, '');
    expect(await names('flowschemas')).toEqual(
      [
        'catch-all',
        'endpoint-controller',
        'exempt',
        'global-default',
        `${prefix}-controller-manager`,
        `${prefix}-scheduler`,
        `${prefix}-system-service-accounts`,
        'probes',
        'service-accounts',
        'system-leader-election',
        'system-node-high',
        'system-nodes',
        'workload-leader-election',
      ].sort(),
    );
    const high = await get('prioritylevelconfigurations', 'workload-high');
    expect(high.metadata?.annotations).toEqual({ [key]: 'true' });
    expect(high.spec).toEqual({
      type: 'Limited',
      limited: {
        nominalConcurrencyShares: 40,
        limitResponse: { type: 'Queue', queuing: { queues: 128, handSize: 6, queueLengthLimit: 50 } },
        lendablePercent: 50,
      },
    });
    const election = await get('flowschemas', 'system-leader-election');
    expect((election.spec.rules as Array<{ resourceRules: Array<{ apiGroups: string[]; namespaces: string[] }> }>)[0]!.resourceRules).toEqual([
      { verbs: ['get', 'create', 'update'], apiGroups: [''], resources: ['endpoints', 'configmaps'], namespaces: [naming.namespaces.system] },
      { verbs: ['get', 'create', 'update'], apiGroups: [naming.groups.coordination], resources: ['leases'], namespaces: ['*'] },
    ]);
  });

  it('restores a deleted mandatory object and stomps an opt-out annotation on one', async () => {
    await core.delete(target('prioritylevelconfigurations', 'catch-all'), {}, admin);
    await settle();
    expect((await get('prioritylevelconfigurations', 'catch-all')).spec).toMatchObject({ type: 'Limited', limited: { nominalConcurrencyShares: 5 } });
    const exempt = await get('flowschemas', 'exempt');
    await core.update(target('flowschemas', 'exempt'), { ...exempt, metadata: { ...exempt.metadata, annotations: { [key]: 'false' } } }, {}, admin);
    await settle();
    expect((await get('flowschemas', 'exempt')).metadata?.annotations).toEqual({ [key]: 'true' });
  });

  it('updates a suggested object while its annotation is true, leaves it alone when false', async () => {
    const level = await get('prioritylevelconfigurations', 'workload-low');
    const changed = { ...level, spec: { ...level.spec, limited: { ...(level.spec.limited as Spec), nominalConcurrencyShares: 7 } } };
    await core.update(target('prioritylevelconfigurations', 'workload-low'), changed, {}, admin);
    await settle();
    expect((await get('prioritylevelconfigurations', 'workload-low')).spec.limited).toMatchObject({ nominalConcurrencyShares: 100 });

    const again = await get('prioritylevelconfigurations', 'workload-low');
    const optedOut = {
      ...again,
      metadata: { ...again.metadata, annotations: { [key]: 'false' } },
      spec: { ...again.spec, limited: { ...(again.spec.limited as Spec), nominalConcurrencyShares: 7 } },
    };
    await core.update(target('prioritylevelconfigurations', 'workload-low'), optedOut, {}, admin);
    await settle();
    const kept = await get('prioritylevelconfigurations', 'workload-low');
    expect(kept.spec.limited).toMatchObject({ nominalConcurrencyShares: 7 });
    expect(kept.metadata?.annotations).toEqual({ [key]: 'false' });
  });

  it('reads a missing annotation from the generation: a changed object is marked false and kept', async () => {
    const level = await get('prioritylevelconfigurations', 'global-default');
    const changed = {
      ...level,
      metadata: { ...level.metadata, annotations: {} },
      spec: { ...level.spec, limited: { ...(level.spec.limited as Spec), nominalConcurrencyShares: 3 } },
    };
    await core.update(target('prioritylevelconfigurations', 'global-default'), changed, {}, admin);
    await settle();
    const kept = await get('prioritylevelconfigurations', 'global-default');
    expect(kept.metadata?.generation).toBeGreaterThan(1);
    expect(kept.spec.limited).toMatchObject({ nominalConcurrencyShares: 3 });
    expect(kept.metadata?.annotations).toEqual({ [key]: 'false' });
  });

  it('sets Dangling when a schema names a missing priority level and clears it once the level exists', async () => {
    const schema = {
      apiVersion: `${naming.groups.flowcontrol}/v1`,
      kind: 'FlowSchema',
      metadata: { name: 'tenant-a' },
      spec: {
        priorityLevelConfiguration: { name: 'tenant-a' },
        matchingPrecedence: 500,
        rules: [{ subjects: [{ kind: 'User', user: { name: 'alice' } }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }] }],
      },
    };
    await core.create(target('flowschemas'), schema, {}, admin);
    await settle();
    expect((await get('flowschemas', 'tenant-a')).status).toEqual({
      conditions: [
        {
          type: 'Dangling',
          status: 'True',
          lastTransitionTime: '2026-01-01T00:00:00Z',
          reason: 'NotFound',
          message: 'This FlowSchema references the PriorityLevelConfiguration object named "tenant-a" but there is no such object',
        },
      ],
    });
    await core.create(
      target('prioritylevelconfigurations'),
      { metadata: { name: 'tenant-a' }, spec: { type: 'Limited', limited: { limitResponse: { type: 'Reject' } } } },
      {},
      admin,
    );
    await settle();
    expect((await get('flowschemas', 'tenant-a')).status?.conditions).toEqual([
      expect.objectContaining({
        type: 'Dangling',
        status: 'False',
        reason: 'Found',
        message: 'This FlowSchema references the PriorityLevelConfiguration object named "tenant-a" and it exists',
      }),
    ]);
    // A user's own objects (no annotation) are never removed.
    expect(await names('flowschemas')).toContain('tenant-a');
    expect((await get('flowschemas', 'global-default')).status?.conditions).toEqual([expect.objectContaining({ type: 'Dangling', status: 'False' })]);
  });
});
