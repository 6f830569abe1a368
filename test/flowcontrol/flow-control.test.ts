import { ManualClock } from '../../src/clock';
import type { FlowSchema, PriorityLevelConfiguration } from '../../src/core';
import { flowControlBootstrap } from '../../src/core/resources/flowcontrol-bootstrap';
import { BORROWING_ADJUSTMENT_MS, FlowControl, type FlowRequest } from '../../src/flowcontrol';
import { levelLimits } from '../../src/flowcontrol/allocation';
import { type Vendor, createNaming } from '../../src/naming';

function request(user: string, groups: string[], over: Partial<FlowRequest> = {}): FlowRequest {
  return {
    user: { username: user, groups },
    isResourceRequest: true,
    verb: 'list',
    path: '/api/v1/namespaces/default/pods',
    apiGroup: '',
    apiVersion: 'v1',
    resource: 'pods',
    subresource: '',
    namespace: 'default',
    name: '',
    ...over,
  };
}

function defaults(vendor: Vendor) {
  const b = flowControlBootstrap(createNaming(vendor));
  return { levels: [...b.priorityLevels.mandatory, ...b.priorityLevels.suggested], schemas: [...b.flowSchemas.mandatory, ...b.flowSchemas.suggested] };
}

function classified(fc: FlowControl, r: FlowRequest) {
  const { schema, level } = fc.classify(r);
  return `${schema.metadata?.name} → ${level.name}`;
}

describe.each(['kubernetes', 'platform'] as const)('classification with upstream’s default configuration (%s profile)', (vendor) => {
  const naming = createNaming(vendor);
  const fc = new FlowControl({ serverConcurrencyLimit: 600, requestTimeoutMs: 60_000, clock: new ManualClock(), naming: createNaming('kubernetes') });
  const { levels, schemas } = defaults(vendor);
  fc.apply(levels, schemas);
  afterAll(() => fc.close());
  const authenticated = ['system:authenticated'];

  it('puts system:masters in exempt, probes of anyone in probes (exempt) and everyone else in global-default', () => {
    expect(classified(fc, request('admin', ['system:masters', ...authenticated]))).toBe('exempt → exempt');
    const probe = request('system:anonymous', ['system:unauthenticated'], {
      isResourceRequest: false,
      verb: 'get',
      path: '/readyz',
      resource: '',
      namespace: '',
    });
    expect(classified(fc, probe)).toBe('probes → exempt');
    expect(classified(fc, request('alice', authenticated))).toBe('global-default → global-default');
  });

  it('takes the highest precedence of several matching schemas: a node’s lease write is node-high, its pod list system', () => {
    const node = (over: Partial<FlowRequest>) => request('system:node:n1', ['system:nodes', ...authenticated], over);
    const lease = node({ verb: 'update', apiGroup: naming.groups.coordination, resource: 'leases', namespace: naming.namespaces.nodeLease, name: 'n1' });
    expect(classified(fc, lease)).toBe('system-node-high → node-high');
    expect(classified(fc, node({ resource: 'nodes', subresource: 'status', verb: 'patch', namespace: '', name: 'n1' }))).toBe('system-node-high → node-high');
    expect(classified(fc, node({}))).toBe('system-nodes → system');
  });

  it('matches users, service accounts with `*`, and namespaces of resource rules', () => {
    const cm = request('system:kube-controller-manager', authenticated, {
      verb: 'get',
      apiGroup: naming.groups.coordination,
      resource: 'leases',
      namespace: naming.namespaces.system,
    });
    expect(classified(fc, cm)).toBe('system-leader-election → leader-election');
    expect(classified(fc, { ...cm, verb: 'list', resource: 'pods', apiGroup: '' })).toBe(`${naming.leaderLeases.controllerManager} → workload-high`);
    const systemAccount = request(`system:serviceaccount:${naming.namespaces.system}:generic-garbage-collector`, ['system:serviceaccounts', ...authenticated]);
    expect(classified(fc, systemAccount)).toBe(`${naming.namespaces.system}-service-accounts → workload-high`);
    const tenantAccount = request('system:serviceaccount:team-a:builder', ['system:serviceaccounts', ...authenticated]);
    expect(classified(fc, tenantAccount)).toBe('service-accounts → workload-low');
  });

  it('names the flow by the schema’s distinguisher: the user (ByUser) or the namespace (ByNamespace)', () => {
    expect(fc.admit(request('alice', authenticated)).classification.distinguisher).toBe('alice');
    const cm = request('system:kube-controller-manager', authenticated, { namespace: 'team-b' });
    expect(fc.admit(cm).classification.distinguisher).toBe('team-b');
  });
});

describe('the mandatory configuration', () => {
  it('classifies before any configuration is read: system:masters exempt, everyone else catch-all (Reject)', () => {
    const fc = new FlowControl({ serverConcurrencyLimit: 10, requestTimeoutMs: 60_000, clock: new ManualClock(), naming: createNaming('kubernetes') });
    expect(classified(fc, request('admin', ['system:masters']))).toBe('exempt → exempt');
    expect(classified(fc, request('alice', ['system:authenticated']))).toBe('catch-all → catch-all');
    // catch-all has every seat (exempt has 0 shares): 10 requests run, the 11th is refused.
    const outcomes = Array.from({ length: 11 }, () => fc.admit(request('alice', ['system:authenticated'])).outcome);
    expect(outcomes.slice(0, 10)).toEqual(Array(10).fill('execute'));
    const refused = fc.admit(request('alice', ['system:authenticated']));
    expect(refused).toMatchObject({ outcome: 'reject', reason: 'concurrency-limit', retryAfterSeconds: 1 });
    // The exempt never wait.
    expect(fc.admit(request('admin', ['system:masters'])).outcome).toBe('execute');
    fc.close();
  });

  it('ignores a schema naming a missing level and a level whose spec is broken', () => {
    const fc = new FlowControl({ serverConcurrencyLimit: 100, requestTimeoutMs: 60_000, clock: new ManualClock(), naming: createNaming('kubernetes') });
    const dangling: FlowSchema = {
      metadata: { name: 'dangling', uid: 'u1' },
      spec: {
        matchingPrecedence: 5,
        priorityLevelConfiguration: { name: 'nowhere' },
        rules: [{ subjects: [{ kind: 'User', user: { name: '*' } }], nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }] }],
      },
    };
    const broken: PriorityLevelConfiguration = { metadata: { name: 'broken' }, spec: { type: 'Exempt', exempt: {} } };
    fc.apply([broken], [dangling]);
    expect(fc.priorityLevels().map((l) => l.name)).toEqual(['catch-all', 'exempt']);
    expect(fc.flowSchemas().map((s) => s.metadata?.name)).toEqual(['exempt', 'catch-all']);
    fc.close();
  });
});

describe('shares and borrowing', () => {
  it('gives the default levels their nominal limits of the server’s 600 seats', () => {
    const fc = new FlowControl({ serverConcurrencyLimit: 600, requestTimeoutMs: 60_000, clock: new ManualClock(), naming: createNaming('kubernetes') });
    const { levels, schemas } = defaults('kubernetes');
    fc.apply(levels, schemas);
    const nominal = Object.fromEntries(fc.priorityLevels().map((l) => [l.name, l.limits.nominal]));
    expect(nominal).toEqual({
      'catch-all': 13,
      exempt: 0,
      'global-default': 49,
      'leader-election': 25,
      'node-high': 98,
      system: 74,
      'workload-high': 98,
      'workload-low': 245,
    });
    fc.close();
  });

  it('lends a quiet level’s lendable seats to a busy one at the 10 s adjustment, and the busy one runs more at once', () => {
    const clock = new ManualClock();
    const fc = new FlowControl({ serverConcurrencyLimit: 100, requestTimeoutMs: 600_000, clock, naming: createNaming('kubernetes') });
    const level = (name: string): PriorityLevelConfiguration => ({
      metadata: { name },
      spec: {
        type: 'Limited',
        limited: {
          nominalConcurrencyShares: 50,
          lendablePercent: 50,
          limitResponse: { type: 'Queue', queuing: { queues: 16, handSize: 4, queueLengthLimit: 100 } },
        },
      },
    });
    const schema = (name: string, user: string): FlowSchema => ({
      metadata: { name },
      spec: {
        matchingPrecedence: 100,
        priorityLevelConfiguration: { name },
        distinguisherMethod: { type: 'ByUser' },
        rules: [
          { subjects: [{ kind: 'User', user: { name: user } }], resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'] }] },
        ],
      },
    });
    fc.apply([level('busy'), level('quiet')], [schema('busy', 'heavy'), schema('quiet', 'light')]);
    const busy = fc.priorityLevels().find((l) => l.name === 'busy')!;
    const quiet = fc.priorityLevels().find((l) => l.name === 'quiet')!;
    const expected = levelLimits(100, 105, { nominalConcurrencyShares: 50, lendablePercent: 50 });
    expect(busy.limits).toEqual(expected);
    // Digesting shares the seats out at once: with no demand anywhere, by the levels' floors.
    expect(busy.current).toBeGreaterThanOrEqual(expected.min);
    expect(busy.current).toBeLessThanOrEqual(expected.max);
    const before = busy.current;
    for (let i = 0; i < 120; i++) fc.admit(request('heavy', ['system:authenticated'], { verb: 'get', name: `p${i}` }));
    expect(busy.queues.totRequestsExecuting).toBe(busy.current);
    clock.advance(BORROWING_ADJUSTMENT_MS);
    expect(busy.current).toBeGreaterThan(expected.nominal);
    expect(busy.current).toBeGreaterThan(before);
    expect(quiet.current).toBeGreaterThanOrEqual(expected.min);
    expect(quiet.current).toBeLessThan(expected.nominal);
    expect(busy.queues.totRequestsExecuting).toBe(busy.current);
    const sum = fc.priorityLevels().reduce((n, l) => n + l.current, 0);
    const nominalSum = fc.priorityLevels().reduce((n, l) => n + l.limits.nominal, 0);
    expect(Math.abs(sum - nominalSum)).toBeLessThanOrEqual(fc.priorityLevels().length);
    fc.close();
  });
});

describe('work estimates', () => {
  it('costs a list by the objects it reads, a watch by its initial events, a write by the watchers it wakes', () => {
    const clock = new ManualClock();
    const fc = new FlowControl({
      serverConcurrencyLimit: 600,
      requestTimeoutMs: 60_000,
      clock,
      naming: createNaming('kubernetes'),
      objectCounts: () => [
        { resource: 'pods', objects: 450 },
        { resource: 'configmaps', objects: 5_000 },
      ],
    });
    const { levels, schemas } = defaults('kubernetes');
    fc.apply(levels, schemas);
    const seats = (r: FlowRequest, list?: Parameters<FlowControl['admit']>[1]) => {
      const admitted = fc.admit(r, list);
      if (admitted.outcome === 'reject') throw new Error('refused');
      const e = admitted.ticket.request.estimate;
      fc.finish(admitted.ticket);
      return [e.initialSeats, e.finalSeats];
    };
    const alice = ['system:authenticated'];
    const hints = { limit: 0, hasSelector: false, fromStorage: false, sendInitialEvents: false };
    expect(seats(request('alice', alice), { list: hints })).toEqual([5, 0]);
    // 5,000 objects would be 50 seats; global-default's widest is min(ceil(15% of 49), 49 / handSize 6) = 8.
    expect(seats(request('alice', alice, { resource: 'configmaps' }), { list: hints })).toEqual([8, 0]);
    expect(seats(request('alice', alice, { resource: 'configmaps' }), { list: { ...hints, limit: 100, fromStorage: true } })).toEqual([2, 0]);
    expect(seats(request('alice', alice, { resource: 'secrets' }), { list: hints })).toEqual([1, 0]);
    expect(seats(request('alice', alice, { verb: 'watch' }), { list: hints })).toEqual([1, 0]);
    expect(seats(request('alice', alice, { verb: 'watch' }), { list: { ...hints, sendInitialEvents: true } })).toEqual([5, 0]);
    const forgets = Array.from({ length: 25 }, () => fc.watches.register(request('bob', alice, { verb: 'watch' })));
    expect(seats(request('alice', alice, { verb: 'create' }))).toEqual([1, 3]);
    for (const forget of forgets) forget();
    expect(seats(request('alice', alice, { verb: 'create' }))).toEqual([1, 0]);
    fc.close();
  });
});
