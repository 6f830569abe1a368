/**
 * The core group's v1 Event over the events group's storage, through an in-process core on each
 * backend: each version reads what the other wrote, converted; field selectors use each
 * version's labels; watches, writes, validation and deletes go through the conversion.
 */
import type { ApiObject, RequestContext, ResourceTarget, WatchEvent } from '../../../src/core/api';
import type { Core } from '../../../src/core';
import type { Store } from '../../../src/store';
import { StatusError } from '../../../src/status';
import { objectKey } from '../../../src/core/storage/keys';
import { BACKENDS, type CoreBackend, coreBackend, naming } from '../registry/core-backends';

const ADMIN: RequestContext = { user: { username: 'admin', groups: ['system:masters'] }, userAgent: 'events-test' };
const CORE: ResourceTarget = { group: '', version: 'v1', resource: 'events', namespace: 'default' };
const GROUP: ResourceTarget = { group: naming.groups.events, version: 'v1', resource: 'events', namespace: 'default' };
const named = (target: ResourceTarget, name: string): ResourceTarget => ({ ...target, name });

/** What kubelet's recorder writes through the core group. */
const kubeletEvent = (name: string, extra: Record<string, unknown> = {}): ApiObject => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name, namespace: 'default' },
  involvedObject: { kind: 'Pod', namespace: 'default', name: 'web-1', uid: 'u-1', apiVersion: 'v1', fieldPath: 'spec.containers{app}' },
  reason: 'Pulled',
  message: 'Container image pulled',
  source: { component: 'kubelet', host: 'node-1' },
  firstTimestamp: '2026-01-01T00:00:00Z',
  lastTimestamp: '2026-01-01T00:00:00Z',
  count: 1,
  type: 'Normal',
  ...extra,
});

/** What a controller's events-group recorder writes. */
const controllerEvent = (name: string, extra: Record<string, unknown> = {}): ApiObject => ({
  apiVersion: `${naming.groups.events}/v1`,
  kind: 'Event',
  metadata: { name, namespace: 'default' },
  eventTime: '2026-01-01T00:00:00.000000Z',
  reportingController: 'example.com/rs-controller',
  reportingInstance: 'rs-controller-1',
  action: 'Scale',
  reason: 'ScalingReplicaSet',
  regarding: { kind: 'ReplicaSet', namespace: 'default', name: 'web', uid: 'u-rs', apiVersion: 'apps/v1' },
  note: 'Scaled up to 3',
  type: 'Normal',
  ...extra,
});

async function refusal(promise: Promise<unknown>): Promise<StatusError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof StatusError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

async function firstEvents(stream: AsyncIterable<WatchEvent> & { close(): void }, n: number): Promise<WatchEvent[]> {
  const out: WatchEvent[] = [];
  for await (const event of stream) {
    out.push(event);
    if (out.length === n) break;
  }
  stream.close();
  return out;
}

describe.each(BACKENDS)('the core group Event, kept as the events group Event, on the %s store', (backendName) => {
  let backend: CoreBackend;
  let store: Store;
  let core: Core;

  beforeAll(async () => {
    backend = coreBackend(backendName);
    ({ store, core } = await backend.open());
  });

  afterAll(async () => {
    await backend.closeAll();
    await backend.teardown();
  });

  it('is stored once, as the events group version, and read by both versions', async () => {
    const { object: written } = await core.create(CORE, kubeletEvent('pulled.1'), {}, ADMIN);
    // The answer is what a read gives: Go's members of the core Event are all there.
    expect(written).toMatchObject({
      apiVersion: 'v1',
      kind: 'Event',
      eventTime: null,
      reportingComponent: '',
      reportingInstance: '',
      message: 'Container image pulled',
    });

    const kv = (await store.get(objectKey('events', 'default', 'pulled.1'))).kv!;
    const stored = JSON.parse(Buffer.from(kv.value).toString('utf8')) as Record<string, unknown>;
    expect(stored).toMatchObject({
      apiVersion: `${naming.groups.events}/v1`,
      kind: 'Event',
      eventTime: null,
      regarding: { kind: 'Pod', name: 'web-1', fieldPath: 'spec.containers{app}' },
      note: 'Container image pulled',
      deprecatedSource: { component: 'kubelet', host: 'node-1' },
      deprecatedFirstTimestamp: '2026-01-01T00:00:00Z',
      deprecatedLastTimestamp: '2026-01-01T00:00:00Z',
      deprecatedCount: 1,
    });
    expect(stored).not.toHaveProperty('involvedObject');
    expect(stored).not.toHaveProperty('message');

    const asGroup = await core.get(named(GROUP, 'pulled.1'), {}, ADMIN);
    expect(asGroup).toMatchObject({
      apiVersion: `${naming.groups.events}/v1`,
      note: 'Container image pulled',
      deprecatedCount: 1,
      metadata: { uid: written.metadata!.uid, resourceVersion: written.metadata!.resourceVersion },
    });
    const asCore = await core.get(named(CORE, 'pulled.1'), {}, ADMIN);
    expect(asCore).toEqual(written);
  });

  it("reads what the events group wrote with the core group names, and Go's members of either", async () => {
    const { object: created } = await core.create(GROUP, controllerEvent('scaled.1'), {}, ADMIN);
    // Not older than the write: the watch cache answers once it has it (on etcd its watch may lag a `0` read).
    const fresh = { resourceVersion: created.metadata!.resourceVersion };
    const ev = await core.get(named(CORE, 'scaled.1'), fresh, ADMIN);
    expect(ev).toMatchObject({
      apiVersion: 'v1',
      kind: 'Event',
      involvedObject: { kind: 'ReplicaSet', name: 'web' },
      reason: 'ScalingReplicaSet',
      message: 'Scaled up to 3',
      source: {},
      firstTimestamp: null,
      lastTimestamp: null,
      eventTime: '2026-01-01T00:00:00.000000Z',
      action: 'Scale',
      reportingComponent: 'example.com/rs-controller',
      reportingInstance: 'rs-controller-1',
      type: 'Normal',
    });
    expect(ev).not.toHaveProperty('regarding');
    expect(ev).not.toHaveProperty('count');
    // The cache's object is converted once: every reader gets the same frozen view.
    expect(Object.isFrozen(ev)).toBe(true);
    expect(await core.get(named(CORE, 'scaled.1'), fresh, ADMIN)).toBe(ev);
  });

  it("selects with each version's field labels", async () => {
    const names = async (target: ResourceTarget, fieldSelector: string) =>
      (await core.list(target, { fieldSelector }, ADMIN)).items.map((i) => i.metadata!.name).sort();
    await core.create(CORE, kubeletEvent('sel.1', { involvedObject: { kind: 'Pod', namespace: 'default', name: 'sel-pod' } }), {}, ADMIN);
    await core.create(GROUP, controllerEvent('sel.2', { regarding: { kind: 'ReplicaSet', namespace: 'default', name: 'sel-rs' } }), {}, ADMIN);

    expect(await names(CORE, 'involvedObject.name=sel-pod')).toEqual(['sel.1']);
    expect(await names(CORE, 'involvedObject.kind=ReplicaSet,involvedObject.name=sel-rs')).toEqual(['sel.2']);
    // `source` is the deprecated source's component, else the reporting controller.
    expect(await names(CORE, 'source=example.com/rs-controller,involvedObject.name=sel-rs')).toEqual(['sel.2']);
    expect(await names(CORE, 'source=kubelet,involvedObject.name=sel-pod')).toEqual(['sel.1']);
    expect(await names(CORE, 'reportingComponent=example.com/rs-controller,involvedObject.name=sel-rs')).toEqual(['sel.2']);

    expect(await names(GROUP, 'regarding.name=sel-pod')).toEqual(['sel.1']);
    expect(await names(GROUP, 'reportingController=example.com/rs-controller,regarding.name=sel-rs')).toEqual(['sel.2']);
    expect(await names(GROUP, 'source=kubelet,regarding.name=sel-pod')).toEqual(['sel.1']);

    // Each version knows only its own labels (upstream's field label conversion).
    const fromCore = await refusal(core.list(CORE, { fieldSelector: 'regarding.name=sel-pod' }, ADMIN));
    expect(fromCore.status).toMatchObject({ code: 400, reason: 'BadRequest', message: 'field label not supported: regarding.name' });
    const fromGroup = await refusal(core.list(GROUP, { fieldSelector: 'involvedObject.name=sel-pod' }, ADMIN));
    expect(fromGroup.status).toMatchObject({ code: 400, reason: 'BadRequest', message: 'field label not supported: involvedObject.name' });
    // From the store too (an exact list is not served by the watch cache).
    const { metadata } = await core.list(CORE, {}, ADMIN);
    const exact = await core.list(
      CORE,
      { fieldSelector: 'involvedObject.name=sel-rs', resourceVersion: metadata.resourceVersion, resourceVersionMatch: 'Exact' },
      ADMIN,
    );
    expect(exact.items.map((i) => [i.metadata!.name, (i as { message?: string }).message])).toEqual([['sel.2', 'Scaled up to 3']]);
    expect(exact.items[0]).not.toHaveProperty('apiVersion');
    expect(exact.kind).toBe('EventList');
    expect(exact.apiVersion).toBe('v1');
  });

  it('watches in the core group version, whichever version wrote', async () => {
    const { object } = await core.create(CORE, kubeletEvent('watch.1', { involvedObject: { kind: 'Pod', namespace: 'default', name: 'watched' } }), {}, ADMIN);
    const stream = await core.watch(
      CORE,
      { resourceVersion: object.metadata!.resourceVersion, fieldSelector: 'involvedObject.name=watched', allowWatchBookmarks: true },
      ADMIN,
    );
    const current = await core.get(named(GROUP, 'watch.1'), {}, ADMIN);
    // The events group may only change what is not immutable: labels here.
    await core.update(named(GROUP, 'watch.1'), { ...current, metadata: { ...current.metadata, labels: { seen: 'yes' } } }, {}, ADMIN);
    await core.delete(named(CORE, 'watch.1'), {}, ADMIN);
    const events = await firstEvents(stream, 2);
    expect(events.map((e) => e.type)).toEqual(['MODIFIED', 'DELETED']);
    for (const e of events)
      expect(e.object).toMatchObject({ apiVersion: 'v1', kind: 'Event', involvedObject: { name: 'watched' }, source: { component: 'kubelet' }, count: 1 });
    expect((events[0]!.object as ApiObject).metadata!.labels).toEqual({ seen: 'yes' });
  });

  it('writes through the conversion: a PUT and a merge patch of the core version change the stored Event', async () => {
    const { object } = await core.create(CORE, kubeletEvent('count.1'), {}, ADMIN);
    // The core group keeps its legacy rules on update: a recorder counts repeats and changes the message.
    const { object: put } = await core.update(
      named(CORE, 'count.1'),
      { ...object, count: 2, lastTimestamp: '2026-01-01T00:05:00Z', message: 'pulled again' },
      {},
      ADMIN,
    );
    expect(put).toMatchObject({ count: 2, lastTimestamp: '2026-01-01T00:05:00Z', message: 'pulled again', eventTime: null });
    const { object: patched } = await core.patch(named(CORE, 'count.1'), { type: 'merge', body: { count: 3 } }, {}, ADMIN);
    expect(patched).toMatchObject({ count: 3, message: 'pulled again', source: { component: 'kubelet' } });
    expect(await core.get(named(GROUP, 'count.1'), {}, ADMIN)).toMatchObject({
      deprecatedCount: 3,
      note: 'pulled again',
      deprecatedLastTimestamp: '2026-01-01T00:05:00Z',
    });
    // The events group holds the same content immutable.
    const asGroup = await core.get(named(GROUP, 'count.1'), {}, ADMIN);
    const refused = await refusal(core.update(named(GROUP, 'count.1'), { ...asGroup, note: 'changed' }, {}, ADMIN));
    expect(refused.status).toMatchObject({
      code: 422,
      reason: 'Invalid',
      message: `Event.${naming.groups.events} "count.1" is invalid: message: Invalid value: "changed": field is immutable`,
    });
  });

  it("records each writer's fields with its own version's schema", async () => {
    const fieldsOf = (obj: ApiObject) => Object.keys(obj.metadata!.managedFields![0]!.fieldsV1!).sort();
    const { object: viaCore } = await core.create(CORE, kubeletEvent('owned.1'), {}, ADMIN);
    expect(viaCore.metadata!.managedFields![0]).toMatchObject({ manager: 'events-test', operation: 'Update', apiVersion: 'v1' });
    expect(fieldsOf(viaCore)).toEqual(['f:count', 'f:firstTimestamp', 'f:involvedObject', 'f:lastTimestamp', 'f:message', 'f:reason', 'f:source', 'f:type']);
    const { object: viaGroup } = await core.create(GROUP, controllerEvent('owned.2'), {}, ADMIN);
    expect(viaGroup.metadata!.managedFields![0]).toMatchObject({ apiVersion: `${naming.groups.events}/v1` });
    expect(fieldsOf(viaGroup)).toEqual([
      'f:action',
      'f:eventTime',
      'f:note',
      'f:reason',
      'f:regarding',
      'f:reportingController',
      'f:reportingInstance',
      'f:type',
    ]);
  });

  it("keeps and compares the other version's managers, in each version's field names", async () => {
    const ownersOf = async (name: string) =>
      Object.fromEntries(
        ((await core.get(named(CORE, name), {}, ADMIN)).metadata!.managedFields ?? []).map((e) => [
          e.manager,
          [e.apiVersion, Object.keys(e.fieldsV1 ?? {}).sort()],
        ]),
      );
    await core.create(GROUP, controllerEvent('owned.3'), { fieldManager: 'recorder' }, ADMIN);
    // A core group write keeps the events group writer's entry (it was dropped before), in that version's names.
    await core.patch(named(CORE, 'owned.3'), { type: 'merge', body: { count: 2 } }, { fieldManager: 'counter' }, ADMIN);
    expect(await ownersOf('owned.3')).toEqual({
      recorder: [
        `${naming.groups.events}/v1`,
        ['f:action', 'f:eventTime', 'f:note', 'f:reason', 'f:regarding', 'f:reportingController', 'f:reportingInstance', 'f:type'],
      ],
      counter: ['v1', ['f:count']],
    });
    // An apply through the core group meets the recorder's `note` as `message`.
    const applied = { apiVersion: 'v1', kind: 'Event', metadata: { name: 'owned.3', namespace: 'default' }, message: 'rewritten' };
    const conflict = await refusal(core.patch(named(CORE, 'owned.3'), { type: 'apply', body: applied }, { fieldManager: 'applier' }, ADMIN));
    expect(conflict.status).toMatchObject({
      code: 409,
      reason: 'Conflict',
      message: `Apply failed with 1 conflict: conflict with "recorder" using ${naming.groups.events}/v1: .message`,
    });
    await core.patch(named(CORE, 'owned.3'), { type: 'apply', body: applied }, { fieldManager: 'applier', force: true }, ADMIN);
    expect(await ownersOf('owned.3')).toEqual({
      recorder: [
        `${naming.groups.events}/v1`,
        ['f:action', 'f:eventTime', 'f:reason', 'f:regarding', 'f:reportingController', 'f:reportingInstance', 'f:type'],
      ],
      counter: ['v1', ['f:count']],
      applier: ['v1', ['f:message']],
    });
    expect(await core.get(named(GROUP, 'owned.3'), {}, ADMIN)).toMatchObject({ note: 'rewritten', deprecatedCount: 2 });
  });

  it('answers a dry run as a read would, storing nothing', async () => {
    const { object } = await core.create(CORE, kubeletEvent('dry.1'), { dryRun: ['All'] }, ADMIN);
    expect(object).toMatchObject({ apiVersion: 'v1', eventTime: null, reportingComponent: '', count: 1 });
    expect((await store.get(objectKey('events', 'default', 'dry.1'))).kv).toBeUndefined();
  });

  it("validates a core group write with the legacy rules and upstream's paths", async () => {
    // An old-style event names its object's namespace.
    const mismatch = await refusal(core.create(CORE, kubeletEvent('bad.1', { involvedObject: { kind: 'Pod', namespace: 'other', name: 'p' } }), {}, ADMIN));
    expect(mismatch.status).toMatchObject({
      code: 422,
      reason: 'Invalid',
      message: 'Event "bad.1" is invalid: involvedObject.namespace: Invalid value: "other": does not match event.namespace',
    });
    // A new-style one (eventTime set) needs its reporting fields, action and reason.
    const newStyle = await refusal(
      core.create(
        CORE,
        {
          metadata: { name: 'bad.2' },
          involvedObject: { kind: 'Pod', name: 'p', namespace: 'default' },
          eventTime: '2026-01-01T00:00:00.000000Z',
          reportingComponent: 'ctl',
        },
        {},
        ADMIN,
      ),
    );
    expect(newStyle.status.details?.causes?.map((c) => `${c.field}: ${c.message}`)).toEqual([
      'reportingInstance: Required value',
      'action: Required value',
      'reason: Required value',
    ]);
    // Names are path segments, as upstream's generic metadata check has them for this group.
    expect((await core.create(CORE, kubeletEvent('Pulled_Image.1'), { dryRun: ['All'] }, ADMIN)).object.metadata!.name).toBe('Pulled_Image.1');
    const badName = await refusal(core.create(CORE, kubeletEvent('a%b'), {}, ADMIN));
    expect(badName.status.message).toBe('Event "a%b" is invalid: metadata.name: Invalid value: "a%b": may not contain \'%\'');
    // The events group still holds its own creates to the strict rules.
    const strict = await refusal(core.create(GROUP, controllerEvent('bad.3', { deprecatedCount: 2 }), {}, ADMIN));
    expect(strict.status.details?.causes?.map((c) => `${c.field}: ${c.message}`)).toEqual(['count: Invalid value: "": needs to be unset']);
    for (const name of ['bad.1', 'bad.2', 'a%b']) expect((await store.get(objectKey('events', 'default', name))).kv).toBeUndefined();
  });

  it('deletes through either version, and a collection through the core version', async () => {
    await core.create(CORE, kubeletEvent('gone.1', { involvedObject: { kind: 'Pod', namespace: 'default', name: 'gone' } }), {}, ADMIN);
    await core.create(GROUP, controllerEvent('gone.2', { regarding: { kind: 'Pod', namespace: 'default', name: 'gone' } }), {}, ADMIN);
    const { object } = await core.delete(named(GROUP, 'gone.1'), {}, ADMIN);
    expect(object).toMatchObject({ kind: 'Status', status: 'Success' });
    const listed = await core.deleteCollection(CORE, { fieldSelector: 'involvedObject.name=gone' }, {}, ADMIN);
    expect(listed.items.map((i) => [i.metadata!.name, (i as { message?: string }).message])).toEqual([['gone.2', 'Scaled up to 3']]);
    expect((await core.list(GROUP, { fieldSelector: 'regarding.name=gone' }, ADMIN)).items).toEqual([]);
  });

  it("converts a bookmark's apiVersion only", async () => {
    const { metadata } = await core.list(CORE, {}, ADMIN);
    const stream = await core.watch(
      CORE,
      {
        sendInitialEvents: true,
        resourceVersionMatch: 'NotOlderThan',
        allowWatchBookmarks: true,
        fieldSelector: 'involvedObject.name=nothing-here',
        resourceVersion: metadata.resourceVersion,
      },
      ADMIN,
    );
    const [bookmark] = await firstEvents(stream, 1);
    expect(bookmark).toMatchObject({
      type: 'BOOKMARK',
      object: { apiVersion: 'v1', kind: 'Event', metadata: { annotations: { [`${naming.groupDomain}/initial-events-end`]: 'true' } } },
    });
    expect(bookmark!.object).not.toHaveProperty('involvedObject');
  });
});
