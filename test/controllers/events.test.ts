/**
 * The event recorder against a real core on the embedded store: the events group's events (the
 * scheduler's), and the core group's with client-go's legacy counting of repeats (the
 * ReplicaSet controller's).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EventRecorder } from '../../src/controllers';
import { createCore, type ApiObject, type Core, type RequestContext } from '../../src/core';
import { createStore } from '../../src/store';
import { createNaming } from '../../src/naming';
import { ManualClock } from '../../src/clock';

const naming = createNaming('kubernetes');
const ctx: RequestContext = { user: { username: 'admin', groups: ['system:masters'] }, userAgent: 'recorder-test' };
const CORE_EVENTS = { group: '', version: 'v1', resource: 'events', namespace: 'default' };
const log: string[] = [];

let dir: string;
let core: Core;
let clock: ManualClock;

beforeEach(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-recorder-'));
  clock = new ManualClock(Date.UTC(2026, 10, 27, 12));
  core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming, clock, compactionIntervalMs: 0 });
  await core.ready();
  log.length = 0;
});

afterEach(async () => {
  await core.close();
  await fs.rm(dir, { recursive: true, force: true });
});

const rs: ApiObject = { metadata: { name: 'web', namespace: 'default', uid: 'u-web', resourceVersion: '7' } };
const about = { apiVersion: 'apps/v1', kind: 'ReplicaSet', object: rs };

async function eventsOf(fieldSelector: string): Promise<ApiObject[]> {
  return (await core.list(CORE_EVENTS, { fieldSelector }, ctx)).items;
}

describe('the core group recorder (client-go legacy)', () => {
  const recorder = () => new EventRecorder({ core, naming, clock, ctx, controller: 'replicaset-controller', api: 'core', log: (m) => log.push(m) });

  it('writes a core Event with source, timestamps and a count of 1', async () => {
    await recorder().record(about, 'Normal', 'SuccessfulCreate', 'Create', 'Created pod: web-abcde');
    const [event] = await eventsOf('involvedObject.name=web');
    expect(event).toMatchObject({
      involvedObject: { apiVersion: 'apps/v1', kind: 'ReplicaSet', namespace: 'default', name: 'web', uid: 'u-web', resourceVersion: '7' },
      reason: 'SuccessfulCreate',
      message: 'Created pod: web-abcde',
      source: { component: 'replicaset-controller' },
      firstTimestamp: '2026-11-27T12:00:00Z',
      lastTimestamp: '2026-11-27T12:00:00Z',
      count: 1,
      type: 'Normal',
      eventTime: null,
      reportingComponent: 'replicaset-controller',
      reportingInstance: '',
    });
    expect(event!.metadata!.name).toMatch(/^web\./);
  });

  it('counts a repeat of the same event on the event already written, and writes it again once that one is gone', async () => {
    const r = recorder();
    await r.record(about, 'Warning', 'FailedCreate', 'Create', 'Error creating: quota');
    clock.advance(30_000);
    await r.record(about, 'Warning', 'FailedCreate', 'Create', 'Error creating: quota');
    await r.record(about, 'Warning', 'FailedCreate', 'Create', 'Error creating: another reason');
    const repeated = await eventsOf('reason=FailedCreate');
    expect(repeated.map((e) => [e.message, e.count, e.firstTimestamp, e.lastTimestamp])).toEqual(
      expect.arrayContaining([
        ['Error creating: quota', 2, '2026-11-27T12:00:00Z', '2026-11-27T12:00:30Z'],
        ['Error creating: another reason', 1, '2026-11-27T12:00:30Z', '2026-11-27T12:00:30Z'],
      ]),
    );
    expect(repeated).toHaveLength(2);
    // Expired (or deleted): the next repeat writes it again, counting on.
    const quota = repeated.find((e) => e.message === 'Error creating: quota')!;
    await core.delete({ ...CORE_EVENTS, name: quota.metadata!.name! }, {}, ctx);
    clock.advance(30_000);
    await r.record(about, 'Warning', 'FailedCreate', 'Create', 'Error creating: quota');
    const again = (await eventsOf('reason=FailedCreate')).find((e) => e.message === 'Error creating: quota')!;
    expect([again.metadata!.name, again.count, again.firstTimestamp, again.lastTimestamp]).toEqual([
      quota.metadata!.name,
      3,
      '2026-11-27T12:00:00Z',
      '2026-11-27T12:01:00Z',
    ]);
    expect(log).toEqual([]);
  });
});

describe('the events group recorder', () => {
  it('writes an events group Event with eventTime, action and the reporting instance', async () => {
    const r = new EventRecorder({ core, naming, clock, ctx, controller: 'default-scheduler', instance: 'default-scheduler-keelson' });
    await r.record(
      { apiVersion: 'v1', kind: 'Pod', object: { metadata: { name: 'p', namespace: 'default', uid: 'u-p' } } },
      'Normal',
      'Scheduled',
      'Binding',
      'Successfully assigned default/p to n1',
    );
    const [event] = (
      await core.list({ group: naming.groups.events, version: 'v1', resource: 'events', namespace: 'default' }, { fieldSelector: 'regarding.name=p' }, ctx)
    ).items;
    expect(event).toMatchObject({
      eventTime: '2026-11-27T12:00:00.000000Z',
      reportingController: 'default-scheduler',
      reportingInstance: 'default-scheduler-keelson',
      action: 'Binding',
      reason: 'Scheduled',
      note: 'Successfully assigned default/p to n1',
      regarding: { kind: 'Pod', name: 'p', uid: 'u-p' },
    });
  });
});
