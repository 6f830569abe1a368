/**
 * Leader election over a Lease, two candidates on one in-process core, time on a manual clock.
 */
import { LeaderElector } from '../../src/controllers';
import { createNaming } from '../../src/naming';
import { ManualClock } from '../../src/clock';
import { ctx, eventually, openCore, type TestCore } from './support';

const naming = createNaming('kubernetes');
const lease = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', namespace: 'kube-system', name: 'kube-controller-manager' };

describe('leader election', () => {
  let t: TestCore;
  let clock: ManualClock;
  const log: string[] = [];
  let candidates: LeaderElector[] = [];
  const candidate = (identity: string) => {
    const elector = new LeaderElector({
      core: t.core,
      naming,
      clock,
      user: ctx.user,
      name: 'kube-controller-manager',
      identity,
      onStartedLeading: () => log.push(`${identity} leads`),
      onStoppedLeading: () => log.push(`${identity} stops`),
    });
    candidates.push(elector);
    return elector;
  };
  const holder = async () => ((await t.core.get(lease, {}, ctx)).spec as { holderIdentity?: string }).holderIdentity;
  /** Move the clock a second at a time, each time waiting for the rounds it started (async store calls). */
  const advance = async (ms: number) => {
    for (let done = 0; done < ms; done += 1000) {
      clock.advance(1000);
      await Promise.all(candidates.map((c) => c.idle()));
    }
  };

  beforeEach(async () => {
    t = await openCore();
    clock = new ManualClock(Date.UTC(2026, 10, 25, 11, 0, 0));
    log.length = 0;
    candidates = [];
  });
  afterEach(async () => t.close());

  it('lets one candidate lead; a released lease passes to the other at once', async () => {
    const a = candidate('a');
    a.start();
    await eventually(async () => a.isLeader);
    const b = candidate('b');
    b.start();
    await advance(20_000);
    expect(b.isLeader).toBe(false);
    expect(await holder()).toBe('a');
    await a.stop();
    expect(await holder()).toBe('');
    await advance(2_000);
    await eventually(async () => b.isLeader);
    expect(await holder()).toBe('b');
    const spec = (await t.core.get(lease, {}, ctx)).spec as { leaseTransitions: number; leaseDurationSeconds: number };
    expect(spec).toMatchObject({ leaseTransitions: 1, leaseDurationSeconds: 15 });
    expect(log).toEqual(['a leads', 'a stops', 'b leads']);
    await b.stop();
  });

  it('takes over from a leader that stopped renewing, once the lease duration has passed on its own clock', async () => {
    const a = candidate('a');
    a.start();
    await eventually(async () => a.isLeader);
    // a crashes: it never renews again and never releases.
    (a as unknown as { cancel: () => void }).cancel();
    const b = candidate('b');
    b.start();
    await advance(10_000);
    expect(b.isLeader).toBe(false);
    await advance(8_000);
    await eventually(async () => b.isLeader);
    expect(await holder()).toBe('b');
    await b.stop();
  });

  it('a leader whose lease went unrenewed for its duration and 20 s more fails its health check', async () => {
    const a = candidate('a');
    a.start();
    await eventually(async () => a.isLeader);
    expect(() => a.check()).not.toThrow();
    // Its renewals stop (a stuck process): the check holds for 15 s + 20 s, then fails.
    (a as unknown as { cancel: () => void }).cancel();
    clock.advance(35_000);
    expect(() => a.check()).not.toThrow();
    clock.advance(1_000);
    expect(() => a.check()).toThrow('failed election to renew leadership on lease kube-controller-manager');
    expect(() => candidate('b').check()).not.toThrow();
    await a.stop();
  });
});
