/**
 * events/v1 Event (docs/API.md, "Event"; upstream pkg/apis/core/validation/events.go with the
 * strict rules of the events group). Error paths use upstream's internal field names
 * (`involvedObject`, `message`, `firstTimestamp`, ...) exactly as upstream reports them.
 */
import type { ApiObject } from '../api';
import type { Naming } from '../../naming';
import { fieldErrors, type FieldError } from '../validation/field-errors';
import { semanticEqual } from '../validation/equality';
import { GO_NIL, goString, goStringStruct, goTime, immutableWithRendering } from '../validation/go-format';
import { byteLength, isDns1123Subdomain, isQualifiedName } from '../validation/names';
import { defineTyped, STANDARD_VERBS } from './common';
import type { DefineResource } from './definition';
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
  check('source', source(ev), source(old), goStringStruct('core.EventSource', [['Component', source(ev).component], ['Host', source(ev).host]]));
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
    column('Reason', 'string', "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."),
    column('Object', 'string', 'The object that this event is about.'),
    column('Subobject', 'string', 'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.', { priority: 1 }),
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
    const cells = [last, ev.type ?? '', ev.reason ?? '', target, regarding.fieldPath ?? '', source, (ev.note ?? '').trim(), first, count, ev.metadata?.name ?? ''];
    return { cells };
  },
};

export const defineEvents: DefineResource = (naming) =>
  defineTyped<Event>({
    group: naming.groups.events,
    version: 'v1',
    kind: 'Event',
    resource: 'events',
    singular: 'event',
    namespaced: true,
    shortNames: ['ev'],
    verbs: STANDARD_VERBS,
    nameRule: 'dns1123Subdomain',
    allowCreateOnUpdate: true,
    allowUnconditionalUpdate: true,

    validate: (ev) => validateEvent(ev, naming),
    validateUpdate: validateEventUpdate,
    // The events group's field labels (upstream maps them onto the core Event's fields).
    selectableFields(ev) {
      const r = ev.regarding ?? {};
      return {
        reason: ev.reason ?? '',
        'regarding.kind': r.kind ?? '',
        'regarding.namespace': r.namespace ?? '',
        'regarding.name': r.name ?? '',
        'regarding.uid': r.uid ?? '',
        'regarding.apiVersion': r.apiVersion ?? '',
        'regarding.resourceVersion': r.resourceVersion ?? '',
        'regarding.fieldPath': r.fieldPath ?? '',
        reportingController: ev.reportingController ?? '',
        type: ev.type ?? '',
      };
    },
    table: EVENT_TABLE,
  });
