import type { Event } from '../../../src/core/resources';
import { createNaming } from '../../../src/naming';
import { create, definition, stored, update } from './through-store';

const events = definition('events');
const naming = createNaming('kubernetes');

const ev = (extra: Record<string, unknown> = {}) => ({
  metadata: { name: 'web.17a', namespace: 'default' },
  eventTime: '2024-05-01T10:00:00.123456Z',
  reportingController: 'example.com/controller',
  reportingInstance: 'controller-1',
  action: 'Scaling',
  reason: 'ScaledUp',
  type: 'Normal',
  regarding: { kind: 'ReplicaSet', namespace: 'default', name: 'web', apiVersion: 'apps/v1' },
  note: 'scaled up to 3',
  ...extra,
});

describe('events', () => {
  it('accepts a complete event', async () => {
    expect((await create(events, ev())).messages).toEqual([]);
  });

  it('requires the reporting fields, action and reason', async () => {
    const { messages } = await create(events, ev({ reportingController: '', reportingInstance: '', action: '', reason: '' }));
    expect(messages[0]).toBe('reportingController: Required value');
    expect(messages.slice(-3)).toEqual(['reportingInstance: Required value', 'action: Required value', 'reason: Required value']);
  });

  it('requires eventTime and a Normal or Warning type', async () => {
    expect((await create(events, ev({ eventTime: undefined, type: 'Info' }))).messages).toEqual([
      'eventTime: Required value',
      'type: Invalid value: "": has invalid value: Info',
    ]);
  });

  it('limits lengths with upstream paths', async () => {
    expect((await create(events, ev({ action: 'a'.repeat(129), note: 'n'.repeat(1025) }))).messages).toEqual([
      'action: Invalid value: "": can have at most 128 characters',
      'message: Invalid value: "": can have at most 1024 characters',
    ]);
  });

  it('refuses the deprecated fields in new events', async () => {
    expect(
      (
        await create(
          events,
          ev({
            deprecatedFirstTimestamp: '2024-05-01T00:00:00Z',
            deprecatedLastTimestamp: '2024-05-01T00:00:00Z',
            deprecatedCount: 3,
            deprecatedSource: { component: 'x' },
          }),
        )
      ).messages,
    ).toEqual([
      'firstTimestamp: Invalid value: "": needs to be unset',
      'lastTimestamp: Invalid value: "": needs to be unset',
      'count: Invalid value: "": needs to be unset',
      'source: Invalid value: "": needs to be unset',
    ]);
  });

  it('checks a series', async () => {
    expect((await create(events, ev({ series: { count: 1 } }))).messages).toEqual([
      'series.count: Invalid value: "": should be at least 2',
      'series.lastObservedTime: Required value',
    ]);
  });

  it('wants the regarded object in the event namespace unless the event is in default or the system namespace', async () => {
    expect((await create(events, ev({ regarding: { kind: 'Node', name: 'n1' } }))).messages).toEqual([]);
    expect((await create(events, ev({ metadata: { name: 'e', namespace: 'team' }, regarding: { kind: 'Node', name: 'n1' } }))).messages).toEqual([
      'involvedObject.namespace: Invalid value: "": does not match event.namespace',
    ]);
    expect(
      (await create(events, ev({ metadata: { name: 'e', namespace: naming.namespaces.system }, regarding: { kind: 'Node', name: 'n1' } }))).messages,
    ).toEqual([]);
  });

  it('keeps the content immutable on update', async () => {
    const old = await stored<Event>(events, ev());
    expect((await update(events, { ...old, series: { count: 2, lastObservedTime: '2024-05-01T10:05:00.000000Z' } }, old)).messages).toEqual([]);
    expect((await update(events, { ...old, note: 'changed', regarding: { kind: 'Pod', namespace: 'default', name: 'p' } }, old)).messages).toEqual([
      'involvedObject: Invalid value: core.ObjectReference{Kind:"Pod", Namespace:"default", Name:"p", UID:"", APIVersion:"", ResourceVersion:"", FieldPath:""}: field is immutable',
      'message: Invalid value: "changed": field is immutable',
    ]);
    expect((await update(events, { ...old, eventTime: '2024-05-01T11:00:00Z' }, old)).messages).toEqual([
      'eventTime: Invalid value: 2024-05-01 11:00:00 +0000 UTC: field is immutable',
    ]);
  });

  it("selects on the stored fields under the core group's names, through the events group's labels", async () => {
    const fields = events.selectableFields?.(await stored(events, ev()));
    expect(fields).toMatchObject({
      reason: 'ScaledUp',
      type: 'Normal',
      reportingComponent: 'example.com/controller',
      // No deprecated source: the reporting controller stands in (upstream's ToSelectableFields).
      source: 'example.com/controller',
      'involvedObject.kind': 'ReplicaSet',
      'involvedObject.name': 'web',
    });
    expect(events.fieldLabels).toMatchObject({ 'regarding.name': 'involvedObject.name', reportingController: 'reportingComponent', source: 'source' });
    for (const internal of Object.values(events.fieldLabels ?? {})) expect(Object.keys(fields ?? {})).toContain(internal);
  });

  it('holds an update to the legacy rules and the immutable fields, not the strict ones of a create', async () => {
    // Written through the core group: no eventTime, a deprecated source, a count.
    const legacy = {
      metadata: { name: 'old.1', namespace: 'default' },
      reason: 'Pulled',
      type: 'Normal',
      regarding: { kind: 'Pod', namespace: 'default', name: 'p' },
      deprecatedSource: { component: 'kubelet' },
      deprecatedCount: 1,
    };
    expect((await update(events, { ...legacy, deprecatedCount: 2 }, legacy)).messages).toEqual(['count: Invalid value: 2: field is immutable']);
    expect((await update(events, { ...legacy, series: { count: 1 } }, legacy)).messages).toEqual([
      'series.count: Invalid value: "": should be at least 2',
      'series.lastObservedTime: Required value',
    ]);
    expect((await update(events, { ...legacy, metadata: { ...legacy.metadata, labels: { a: 'b' } } }, legacy)).messages).toEqual([]);
  });
});
