/**
 * The Event, served twice over one storage as upstream serves it: the events group's v1 (docs/API.md,
 * "Event"), which the store keeps, and the core group's v1, kept as the events group's and converted
 * at every read and write (`storedAs`). Validation is upstream's `ValidateEventCreate` and
 * `ValidateEventUpdate`: the strict rules for writes through the events group, the legacy ones
 * through the core group.
 * Error paths use upstream's internal field names (`involvedObject`, `message`, `firstTimestamp`,
 * ...) exactly as upstream reports them, whichever version was written.
 */
import type { ApiObject } from '../api';
import type { Naming } from '../../naming';
import { fieldErrors, type FieldError } from '../validation/field-errors';
import { semanticEqual } from '../validation/equality';
import { GO_NIL, goString, goStringStruct, goTime, immutableWithRendering } from '../validation/go-format';
import { byteLength, isDns1123Subdomain, isQualifiedName } from '../validation/names';
import { defineTyped, STANDARD_VERBS } from './common';
import type { DefineResource, EquivalentVersion, ResourceDefinition } from './definition';
import { column, OBJECT_META_NAME_DESCRIPTION, since, type TableDefinition } from '../table';

export interface ObjectReference {
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiVersion?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

export interface EventSeries {
  count?: number;
  lastObservedTime?: string;
}

export interface Event extends ApiObject {
  eventTime?: string | null;
  series?: EventSeries | null;
  reportingController?: string;
  reportingInstance?: string;
  action?: string;
  reason?: string;
  regarding?: ObjectReference;
  related?: ObjectReference | null;
  note?: string;
  type?: string;
  deprecatedSource?: { component?: string; host?: string };
  deprecatedFirstTimestamp?: string | null;
  deprecatedLastTimestamp?: string | null;
  deprecatedCount?: number;
}

/** The core group's v1 Event: the same object, its fields under their older names. */
export interface CoreEvent extends ApiObject {
  involvedObject?: ObjectReference;
  reason?: string;
  message?: string;
  source?: { component?: string; host?: string };
  firstTimestamp?: string | null;
  lastTimestamp?: string | null;
  count?: number;
  type?: string;
  eventTime?: string | null;
  series?: EventSeries | null;
  action?: string;
  related?: ObjectReference | null;
  reportingComponent?: string;
  reportingInstance?: string;
}

/**
 * A core Event as the events group's, with the members Go's encoding of that struct always
 * writes (`eventTime`, `regarding`, `deprecatedSource`, the deprecated timestamps) and without
 * the empty ones it omits. Parts are shared, not copied.
 */
export function eventFromCore(ev: CoreEvent, apiVersion: string): Event {
  const out: Event = { kind: 'Event', apiVersion };
  if (ev.metadata !== undefined) out.metadata = ev.metadata;
  out.eventTime = ev.eventTime ?? null;
  if (ev.series) out.series = ev.series;
  if (ev.reportingComponent) out.reportingController = ev.reportingComponent;
  if (ev.reportingInstance) out.reportingInstance = ev.reportingInstance;
  if (ev.action) out.action = ev.action;
  if (ev.reason) out.reason = ev.reason;
  out.regarding = ev.involvedObject ?? {};
  if (ev.related) out.related = ev.related;
  if (ev.message) out.note = ev.message;
  if (ev.type) out.type = ev.type;
  out.deprecatedSource = ev.source ?? {};
  out.deprecatedFirstTimestamp = ev.firstTimestamp ?? null;
  out.deprecatedLastTimestamp = ev.lastTimestamp ?? null;
  if (ev.count) out.deprecatedCount = ev.count;
  return out;
}

/**
 * An events-group Event as the core group's, with the members Go always writes for that struct
 * (`involvedObject`, `source`, the timestamps, `reportingComponent`, `reportingInstance`). Keeps
 * `kind` and `apiVersion` absent where they are (a list's items). Parts are shared, not copied.
 */
export function coreFromEvent(ev: Event): CoreEvent {
  const out: CoreEvent = {};
  if (ev.kind !== undefined) out.kind = ev.kind;
  if (ev.apiVersion !== undefined) out.apiVersion = 'v1';
  if (ev.metadata !== undefined) out.metadata = ev.metadata;
  out.involvedObject = ev.regarding ?? {};
  if (ev.reason) out.reason = ev.reason;
  if (ev.note) out.message = ev.note;
  out.source = ev.deprecatedSource ?? {};
  out.firstTimestamp = ev.deprecatedFirstTimestamp ?? null;
  out.lastTimestamp = ev.deprecatedLastTimestamp ?? null;
  if (ev.deprecatedCount) out.count = ev.deprecatedCount;
  if (ev.type) out.type = ev.type;
  out.eventTime = ev.eventTime ?? null;
  if (ev.series) out.series = ev.series;
  if (ev.action) out.action = ev.action;
  if (ev.related) out.related = ev.related;
  out.reportingComponent = ev.reportingController ?? '';
  out.reportingInstance = ev.reportingInstance ?? '';
  return out;
}

export const REPORTING_INSTANCE_LENGTH_LIMIT = 128;
export const ACTION_LENGTH_LIMIT = 128;
export const REASON_LENGTH_LIMIT = 128;
export const NOTE_LENGTH_LIMIT = 1024;

const atMost = (n: number) => `can have at most ${n} characters`;

/** Checks every event passes, whatever API wrote it (upstream legacyValidateEvent). */
function legacyValidateEvent(ev: Event, naming: Naming): FieldError[] {
  const errs: FieldError[] = [];
  const ns = ev.metadata?.namespace ?? '';
  const regardingNs = ev.regarding?.namespace ?? '';
  const mismatch = () => fieldErrors.invalid('involvedObject.namespace', regardingNs, 'does not match event.namespace');
  if (!ev.eventTime) {
    if (regardingNs === '' ? ns !== '' && ns !== naming.namespaces.default : ns !== regardingNs) errs.push(mismatch());
  } else {
    if (regardingNs === '' && ns !== naming.namespaces.default && ns !== naming.namespaces.system) errs.push(mismatch());
    const controller = ev.reportingController ?? '';
    if (!controller) errs.push(fieldErrors.required('reportingController'));
    errs.push(...isQualifiedName(controller).map((msg) => fieldErrors.invalid('reportingController', controller, msg)));
    const limited: Array<[string, string | undefined, number, boolean]> = [
      ['reportingInstance', ev.reportingInstance, REPORTING_INSTANCE_LENGTH_LIMIT, true],
      ['action', ev.action, ACTION_LENGTH_LIMIT, true],
      ['reason', ev.reason, REASON_LENGTH_LIMIT, true],
      ['message', ev.note, NOTE_LENGTH_LIMIT, false],
    ];
    for (const [field, value, limit, required] of limited) {
      if (required && !value) errs.push(fieldErrors.required(field));
      if (byteLength(value ?? '') > limit) errs.push(fieldErrors.invalid(field, '', atMost(limit)));
    }
  }
  errs.push(...isDns1123Subdomain(ns).map((msg) => fieldErrors.invalid('namespace', ns, msg)));
  return errs;
}

function validateSeries(ev: Event): FieldError[] {
  if (!ev.series) return [];
  const errs: FieldError[] = [];
  if ((ev.series.count ?? 0) < 2) errs.push(fieldErrors.invalid('series.count', '', 'should be at least 2'));
  if (!ev.series.lastObservedTime) errs.push(fieldErrors.required('series.lastObservedTime'));
  return errs;
}

/** upstream ValidateEventUpdate through the events group: the legacy rules, the series when it changed, the immutable fields. */
function validateEventsGroupUpdate(ev: Event, old: Event, naming: Naming): FieldError[] {
  const series = semanticEqual(ev.series ?? null, old.series ?? null) ? [] : validateSeries(ev);
  return [...legacyValidateEvent(ev, naming), ...series, ...validateEventUpdate(ev, old)];
}

/** upstream ValidateEventCreate for the events group: the strict rules, deprecated fields unset. */
export function validateEvent(ev: Event, naming: Naming): FieldError[] {
  const errs = [...legacyValidateEvent(ev, naming), ...validateSeries(ev)];
  if (!ev.eventTime) errs.push(fieldErrors.required('eventTime'));
  if (ev.type !== 'Normal' && ev.type !== 'Warning') errs.push(fieldErrors.invalid('type', '', `has invalid value: ${ev.type ?? ''}`));
  if (ev.deprecatedFirstTimestamp) errs.push(fieldErrors.invalid('firstTimestamp', '', 'needs to be unset'));
  if (ev.deprecatedLastTimestamp) errs.push(fieldErrors.invalid('lastTimestamp', '', 'needs to be unset'));
  if (ev.deprecatedCount) errs.push(fieldErrors.invalid('count', '', 'needs to be unset'));
  if (ev.deprecatedSource?.component || ev.deprecatedSource?.host) errs.push(fieldErrors.invalid('source', '', 'needs to be unset'));
  return errs;
}

function goObjectReference(ref: ObjectReference | null | undefined): string {
  if (!ref) return GO_NIL;
  return goStringStruct('core.ObjectReference', [
    ['Kind', ref.kind],
    ['Namespace', ref.namespace],
    ['Name', ref.name],
    ['UID', ref.uid],
    ['APIVersion', ref.apiVersion],
    ['ResourceVersion', ref.resourceVersion],
    ['FieldPath', ref.fieldPath],
  ]);
}

/** upstream ValidateEventUpdate's immutable fields (reason is checked twice there too). */
export function validateEventUpdate(ev: Event, old: Event): FieldError[] {
  const errs: FieldError[] = [];
  const check = (field: string, now: unknown, before: unknown, rendered: string) => {
    if (!semanticEqual(now, before)) errs.push(immutableWithRendering(field, now ?? null, rendered));
  };
  const str = (v: string | undefined) => goString(v ?? '');
  const source = (e: Event) => ({ component: e.deprecatedSource?.component ?? '', host: e.deprecatedSource?.host ?? '' });
  check('involvedObject', ev.regarding, old.regarding, goObjectReference(ev.regarding ?? {}));
  check('reason', ev.reason, old.reason, str(ev.reason));
  check('message', ev.note, old.note, str(ev.note));
  check(
    'source',
    source(ev),
    source(old),
    goStringStruct('core.EventSource', [
      ['Component', source(ev).component],
      ['Host', source(ev).host],
    ]),
  );
  check('firstTimestamp', ev.deprecatedFirstTimestamp, old.deprecatedFirstTimestamp, goTime(ev.deprecatedFirstTimestamp));
  check('lastTimestamp', ev.deprecatedLastTimestamp, old.deprecatedLastTimestamp, goTime(ev.deprecatedLastTimestamp));
  check('count', ev.deprecatedCount ?? 0, old.deprecatedCount ?? 0, String(ev.deprecatedCount ?? 0));
  check('reason', ev.reason, old.reason, str(ev.reason));
  check('type', ev.type, old.type, str(ev.type));
  check('eventTime', ev.eventTime, old.eventTime, goTime(ev.eventTime));
  check('action', ev.action, old.action, str(ev.action));
  check('related', ev.related, old.related, goObjectReference(ev.related));
  check('reportingController', ev.reportingController, old.reportingController, str(ev.reportingController));
  check('reportingInstance', ev.reportingInstance, old.reportingInstance, str(ev.reportingInstance));
  return errs;
}

/**
 * upstream's Event printer, which serves the events group too (its storage is the core Event's):
 * the fields as the core Event names them (`regarding` is involvedObject, `note` the message,
 * the `deprecated*` fields the first/last timestamps, count and source).
 */
const EVENT_TABLE: TableDefinition<Event> = {
  columns: [
    column('Last Seen', 'string', 'The time at which the most recent occurrence of this event was recorded.'),
    column('Type', 'string', 'Type of this event (Normal, Warning), new types could be added in the future'),
    column(
      'Reason',
      'string',
      "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
    ),
    column('Object', 'string', 'The object that this event is about.'),
    column(
      'Subobject',
      'string',
      'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.',
      { priority: 1 },
    ),
    column('Source', 'string', 'The component reporting this event. Should be a short machine understandable string.', { priority: 1 }),
    column('Message', 'string', 'A human-readable description of the status of this operation.'),
    column('First Seen', 'string', 'The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)', { priority: 1 }),
    column('Count', 'string', 'The number of times this event has occurred.', { priority: 1 }),
    column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name', priority: 1 }),
  ],
  row(ev, { now }) {
    const first = ev.deprecatedFirstTimestamp ? since(ev.deprecatedFirstTimestamp, now) : since(ev.eventTime, now);
    let last = ev.deprecatedLastTimestamp ? since(ev.deprecatedLastTimestamp, now) : first;
    let count = ev.deprecatedCount ?? 0;
    if (ev.series) {
      last = since(ev.series.lastObservedTime, now);
      count = ev.series.count ?? 0;
    } else if (count === 0) {
      count = 1; // singleton events of the new API carry no count
    }
    const regarding = ev.regarding ?? {};
    const kind = (regarding.kind ?? '').toLowerCase();
    const target = regarding.name ? `${kind}/${regarding.name}` : kind;
    const component = ev.deprecatedSource?.component || ev.reportingController || '';
    const instance = ev.deprecatedSource?.host || ev.reportingInstance || '';
    const source = instance ? `${component}, ${instance}` : component;
    const cells = [
      last,
      ev.type ?? '',
      ev.reason ?? '',
      target,
      regarding.fieldPath ?? '',
      source,
      (ev.note ?? '').trim(),
      first,
      count,
      ev.metadata?.name ?? '',
    ];
    return { cells };
  },
};

/**
 * The stored Event's field-selector view, under the core group's names (upstream's
 * ToSelectableFields): `source` is the deprecated source's component, else the reporting controller.
 */
function eventFields(ev: Event): Record<string, string> {
  const r = ev.regarding ?? {};
  return {
    'involvedObject.kind': r.kind ?? '',
    'involvedObject.namespace': r.namespace ?? '',
    'involvedObject.name': r.name ?? '',
    'involvedObject.uid': r.uid ?? '',
    'involvedObject.apiVersion': r.apiVersion ?? '',
    'involvedObject.resourceVersion': r.resourceVersion ?? '',
    'involvedObject.fieldPath': r.fieldPath ?? '',
    reason: ev.reason ?? '',
    reportingComponent: ev.reportingController ?? '',
    source: ev.deprecatedSource?.component || ev.reportingController || '',
    type: ev.type ?? '',
  };
}

const CORE_FIELD_LABELS = Object.fromEntries(Object.keys(eventFields({})).map((label) => [label, label]));

/** The events group's field labels and the stored fields they select (upstream's events/v1 field label conversion). */
const EVENTS_GROUP_FIELD_LABELS: Readonly<Record<string, string>> = {
  reason: 'reason',
  'regarding.kind': 'involvedObject.kind',
  'regarding.namespace': 'involvedObject.namespace',
  'regarding.name': 'involvedObject.name',
  'regarding.uid': 'involvedObject.uid',
  'regarding.apiVersion': 'involvedObject.apiVersion',
  'regarding.resourceVersion': 'involvedObject.resourceVersion',
  'regarding.fieldPath': 'involvedObject.fieldPath',
  reportingController: 'reportingComponent',
  source: 'source',
  type: 'type',
};

/** The core Event's top-level fields named differently in the events group (core name → events group name). */
const CORE_TO_EVENTS_GROUP_FIELDS: Readonly<Record<string, string>> = {
  involvedObject: 'regarding',
  message: 'note',
  source: 'deprecatedSource',
  firstTimestamp: 'deprecatedFirstTimestamp',
  lastTimestamp: 'deprecatedLastTimestamp',
  count: 'deprecatedCount',
  reportingComponent: 'reportingController',
};

const EVENTS_GROUP_TO_CORE_FIELDS = Object.fromEntries(Object.entries(CORE_TO_EVENTS_GROUP_FIELDS).map(([core, events]) => [events, core]));

/** What both versions share: names, scope, verbs, and writes that may create (upstream's event strategy). */
const EVENT_RESOURCE = {
  version: 'v1',
  kind: 'Event',
  resource: 'events',
  singular: 'event',
  namespaced: true,
  shortNames: ['ev'],
  verbs: STANDARD_VERBS,
  allowCreateOnUpdate: true,
  allowUnconditionalUpdate: true,
} satisfies Partial<ResourceDefinition>;

export const defineEvents: DefineResource = (naming) =>
  defineTyped<Event>({
    ...EVENT_RESOURCE,
    group: naming.groups.events,
    nameRule: 'dns1123Subdomain',
    validate: (ev) => validateEvent(ev, naming),
    // An update is held to the legacy rules and the immutable fields, not the create's strict ones.
    validateOnlyOnCreate: true,
    validateUpdate: (ev, old) => validateEventsGroupUpdate(ev, old, naming),
    selectableFields: eventFields,
    fieldLabels: EVENTS_GROUP_FIELD_LABELS,
    equivalentVersions: [
      {
        apiVersion: 'v1',
        fieldNames: CORE_TO_EVENTS_GROUP_FIELDS,
        toThat: (obj) => coreFromEvent(obj as Event),
        fromThat: (obj) => eventFromCore(obj as CoreEvent, `${naming.groups.events}/v1`),
      },
    ],
    table: EVENT_TABLE,
  });

/** The core group's v1 Event, kept as the events group's. */
export const defineCoreEvents: DefineResource = (naming) => {
  const storedVersion = `${naming.groups.events}/v1`;
  const eventsGroup: EquivalentVersion = {
    apiVersion: storedVersion,
    fieldNames: EVENTS_GROUP_TO_CORE_FIELDS,
    toThat: (obj) => eventFromCore(obj as CoreEvent, storedVersion),
    fromThat: (obj) => coreFromEvent(obj as Event),
  };
  return defineTyped<CoreEvent>({
    ...EVENT_RESOURCE,
    group: '',
    // Upstream checks only path-segment names for the core group's events (its generic metadata check).
    nameRule: 'pathSegment',

    // The legacy rules alone, on create and update (upstream's backwards compatibility for the core group).
    validate: (ev) => legacyValidateEvent(eventFromCore(ev, storedVersion), naming),
    fieldLabels: CORE_FIELD_LABELS,
    storedAs: eventsGroup,
    equivalentVersions: [eventsGroup],
    table: { columns: EVENT_TABLE.columns, row: (ev, ctx) => EVENT_TABLE.row(eventFromCore(ev, storedVersion), ctx) },
  });
};
