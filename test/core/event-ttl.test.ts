/**
 * `--event-ttl`: an event is removed that long after its last write (upstream's etcd lease per
 * event write), on the injected clock, through in-process cores on both backends.
 */
import type { ApiObject, ResourceTarget, WatchEvent } from '../../src/core/api';
import type { Core } from '../../src/core';
import { ManualClock } from '../../src/clock';
import { StatusError } from '../../src/status';
import { BACKENDS, type CoreBackend, type TestCore, coreBackend, ctx as ADMIN, naming } from './registry/core-backends';
import { createCore } from '../../src/core';
import { createStore } from '../../src/store';
import { freePort } from '../support/free-port';
import { eventually } from '../support/eventually';

const GROUP: ResourceTarget = { group: naming.groups.events, version: 'v1', resource: 'events', namespace: 'default' };
const CORE: ResourceTarget = { group: '', version: 'v1', resource: 'events', namespace: 'default' };
const MINUTE = 60_000;
const TTL = 10 * MINUTE;

const event = (name: string, extra: Record<string, unknown> = {}): ApiObject => ({
  metadata: { name },
  eventTime: '2026-11-27T12:00:00.000000Z',
  reportingController: 'example.com/ctl',
  reportingInstance: 'ctl-1',
  action: 'Act',
  reason: 'Happened',
  regarding: { kind: 'Pod', namespace: 'default', name: 'p' },
  type: 'Normal',
  ...extra,
});

/**
 * Real time for the expiry's watch and its sweep's deletes to land (the manual clock does not
 * move meanwhile): they run inside the core, which offers no event to wait on.
 */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe.each(BACKENDS)('event TTL on the %s store', (name) => {
  let backend: CoreBackend;
  let clock: ManualClock;
  let first: TestCore;
  let core: Core;
  const errors: string[] = [];

  const open = async (eventTtlMs: number, shareWith?: TestCore) => {
    const opened = await backend.open({ clock, eventTtlMs, shareWith, onBackgroundError: (what, err) => errors.push(`${what}: ${(err as Error).message}`) });
    await settle();
    return opened;
  };

  beforeAll(() => {
    backend = coreBackend(name);
  });

  beforeEach(async () => {
    clock = new ManualClock(Date.UTC(2026, 10, 27, 12));
    errors.length = 0;
    first = await open(TTL);
    core = first.core;
  });

  afterEach(async () => {
    await backend.closeAll();
  });

  afterAll(async () => {
    await backend.teardown();
  });

  async function exists(name: string): Promise<boolean> {
    try {
      await core.get({ ...GROUP, name }, {}, ADMIN);
      return true;
    } catch (err) {
      if (StatusError.is(err, 'NotFound')) return false;
      throw err;
    }
  }

  /** Whether the event is gone, allowing a sweep's delete a moment of real time to land. */
  async function gone(name: string): Promise<boolean> {
    return eventually(async () => !(await exists(name)), { what: `${name} to be removed`, timeoutMs: 2_000, intervalMs: 50 });
  }

  /** Move the clock a minute at a time, letting each sweep's deletes land. */
  async function advance(ms: number): Promise<void> {
    for (let left = ms; left > 0; left -= MINUTE) {
      clock.advance(Math.min(MINUTE, left));
      await settle();
    }
  }

  it('removes an event the TTL after its last write; a write in between starts its time again', async () => {
    await core.create(GROUP, event('a'), {}, ADMIN);
    await core.create(GROUP, event('b'), {}, ADMIN);
    await settle();
    await advance(6 * MINUTE);
    const a = await core.get({ ...GROUP, name: 'a' }, {}, ADMIN);
    await core.update({ ...GROUP, name: 'a' }, { ...a, metadata: { ...a.metadata, labels: { seen: 'again' } } }, {}, ADMIN);
    await settle();
    await advance(3 * MINUTE);
    expect([await exists('a'), await exists('b')]).toEqual([true, true]);
    // b's ten minutes are up (and the sweep after them has run); a was written four minutes ago.
    await advance(2 * MINUTE);
    expect(await gone('b')).toBe(true);
    expect(await exists('a')).toBe(true);
    await advance(7 * MINUTE);
    expect(await gone('a')).toBe(true);
    expect(errors).toEqual([]);
  });

  it('removes events written through the core group, as watchers of either version see', async () => {
    const { metadata } = await core.list(CORE, {}, ADMIN);
    const stream = await core.watch(CORE, { resourceVersion: metadata.resourceVersion }, ADMIN);
    await core.create(
      CORE,
      {
        metadata: { name: 'legacy' },
        involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' },
        reason: 'Pulled',
        source: { component: 'kubelet' },
        count: 1,
      },
      {},
      ADMIN,
    );
    await settle();
    await advance(TTL + MINUTE);
    const seen: WatchEvent[] = [];
    for await (const e of stream) {
      seen.push(e);
      if (seen.length === 2) break;
    }
    stream.close();
    expect(seen.map((e) => [e.type, (e.object as ApiObject).metadata?.name])).toEqual([
      ['ADDED', 'legacy'],
      ['DELETED', 'legacy'],
    ]);
    expect(seen[1]!.object).toMatchObject({ apiVersion: 'v1', involvedObject: { name: 'p' }, source: { component: 'kubelet' } });
  });

  it('removes an expired event whatever finalizers it holds, as an expiring lease does', async () => {
    await core.create(GROUP, event('held', { metadata: { name: 'held', finalizers: ['example.com/keep'] } }), {}, ADMIN);
    await settle();
    await advance(TTL + MINUTE);
    expect(await gone('held')).toBe(true);
  });

  it('times the events a process finds at its start from that start', async () => {
    // Written while only a process that keeps events runs.
    await backend.closeAll();
    const keeping = await open(0);
    core = keeping.core;
    await core.create(GROUP, event('before'), {}, ADMIN);
    await settle();
    await advance(8 * MINUTE);
    // A process with a TTL starts: it does not know when the event was written.
    await open(TTL, keeping);
    await advance(3 * MINUTE);
    expect(await exists('before')).toBe(true);
    await advance(9 * MINUTE);
    expect(await gone('before')).toBe(true);
    expect(errors).toEqual([]);
  });

  it('two API servers on one store each sweep: the event goes once, and neither reports an error', async () => {
    await open(TTL, first);
    await core.create(GROUP, event('shared'), {}, ADMIN);
    await settle();
    await advance(TTL + 2 * MINUTE);
    expect(await gone('shared')).toBe(true);
    expect(errors).toEqual([]);
  });

  it('keeps events when the TTL is 0, and other kinds never expire', async () => {
    await backend.closeAll();
    core = (await open(0)).core;
    await core.create(GROUP, event('kept'), {}, ADMIN);
    await core.create({ group: '', version: 'v1', resource: 'configmaps', namespace: 'default' }, { metadata: { name: 'cm' } }, {}, ADMIN);
    await settle();
    await advance(2 * TTL);
    expect(await exists('kept')).toBe(true);
    expect((await core.get({ group: '', version: 'v1', resource: 'configmaps', namespace: 'default', name: 'cm' }, {}, ADMIN)).metadata?.name).toBe('cm');
  });
});

describe('event expiry and shutdown', () => {
  it("a core whose store never answered closes without waiting on the expiry's watch", async () => {
    // Nothing listens on the port: the watch cache never loads, and the expiry's watch waits for it.
    const store = createStore({ kind: 'etcd', endpoints: [`http://127.0.0.1:${await freePort()}`] });
    const errors: string[] = [];
    const core = createCore({
      store,
      naming,
      clock: new ManualClock(),
      compactionIntervalMs: 0,
      eventTtlMs: TTL,
      onBackgroundError: (what, err) => errors.push(`${what}: ${String(err)}`),
    });
    await settle();
    await core.close();
    // The watch cache says why it cannot load; the expiry has nothing to report.
    expect(errors.filter((e) => !e.startsWith('watch cache load: '))).toEqual([]);
    expect(errors[0]).toMatch(/^watch cache load: StoreError: etcd is unavailable: connect ECONNREFUSED/);
  });
});
