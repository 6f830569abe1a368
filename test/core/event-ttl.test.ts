/**
 * `--event-ttl`: an event is removed that long after its last write (upstream's etcd lease per
 * event write), on the injected clock, through an in-process core on the embedded store.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ApiObject, RequestContext, ResourceTarget, WatchEvent } from '../../src/core/api';
import { createCore, type Core } from '../../src/core';
import { createStore, type Store } from '../../src/store';
import { createNaming } from '../../src/naming';
import { ManualClock } from '../../src/clock';
import { StatusError } from '../../src/status';

const ADMIN: RequestContext = { user: { username: 'admin', groups: ['system:masters'] }, userAgent: 'ttl-test' };
const naming = createNaming('kubernetes');
const GROUP: ResourceTarget = { group: naming.groups.events, version: 'v1', resource: 'events', namespace: 'default' };
const CORE: ResourceTarget = { group: '', version: 'v1', resource: 'events', namespace: 'default' };
const MINUTE = 60_000;
const TTL = 10 * MINUTE;

let dir: string;
let store: Store;
let clock: ManualClock;
let core: Core;

async function open(eventTtlMs = TTL): Promise<void> {
  store = createStore({ kind: 'embedded', dataDir: dir });
  core = createCore({ store, naming, clock, compactionIntervalMs: 0, eventTtlMs });
  await core.ready();
  await settle();
}

/** A restart on the same data (closing the core closes its store). */
async function reopen(eventTtlMs = TTL): Promise<void> {
  await core.close();
  await open(eventTtlMs);
}

beforeEach(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keelson-event-ttl-'));
  clock = new ManualClock(Date.UTC(2026, 10, 27, 12));
  await open();
});

afterEach(async () => {
  await core.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

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

/** Real time for the watch and the store to catch up (the manual clock does not move meanwhile). */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

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
  for (let i = 0; i < 40; i++) {
    if (!(await exists(name))) return true;
    await settle();
  }
  return false;
}

/** Move the clock, letting each sweep's deletes land. */
async function advance(ms: number): Promise<void> {
  for (let left = ms; left > 0; left -= MINUTE) {
    clock.advance(Math.min(MINUTE, left));
    await settle();
  }
}

describe('event TTL', () => {
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
  });

  it('removes events written through the core group, as watchers of either version see', async () => {
    const { metadata } = await core.list(CORE, {}, ADMIN);
    const stream = await core.watch(CORE, { resourceVersion: metadata.resourceVersion }, ADMIN);
    await core.create(CORE, { metadata: { name: 'legacy' }, involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' }, reason: 'Pulled', source: { component: 'kubelet' }, count: 1 }, {}, ADMIN);
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
    await core.create(GROUP, event('before'), {}, ADMIN);
    await settle();
    await advance(8 * MINUTE);
    // A restart on the same data: the new process does not know when the event was written.
    await reopen();
    await advance(3 * MINUTE);
    expect(await exists('before')).toBe(true);
    await advance(9 * MINUTE);
    expect(await gone('before')).toBe(true);
  });

  it('keeps events when the TTL is 0, and other kinds never expire', async () => {
    await reopen(0);
    await core.create(GROUP, event('kept'), {}, ADMIN);
    await core.create({ group: '', version: 'v1', resource: 'configmaps', namespace: 'default' }, { metadata: { name: 'cm' } }, {}, ADMIN);
    await settle();
    await advance(2 * TTL);
    expect(await exists('kept')).toBe(true);
    expect((await core.get({ group: '', version: 'v1', resource: 'configmaps', namespace: 'default', name: 'cm' }, {}, ADMIN)).metadata?.name).toBe('cm');
  });
});
