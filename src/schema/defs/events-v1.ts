/**
 * events/v1 Event.
 * Facts (field numbers, JSON names, markers, pointer and omitempty) follow upstream 1.32.
 */
import { definePackage, f, msg, listKind, ref, STRING, INT32, TIME, MICRO_TIME } from '../dsl';

export const EVENTS_V1 = definePackage('events.v1', [
  msg(
    'Event',
    [
      f('metadata', 1, ref('meta.v1.ObjectMeta'), { emitEmpty: true }),
      f('eventTime', 2, MICRO_TIME, { emitEmpty: true, required: true }),
      f('series', 3, ref('EventSeries'), { pointer: true }),
      f('reportingController', 4, STRING),
      f('reportingInstance', 5, STRING),
      f('action', 6, STRING),
      f('reason', 7, STRING),
      f('regarding', 8, ref('core.v1.ObjectReference')),
      f('related', 9, ref('core.v1.ObjectReference'), { pointer: true }),
      f('note', 10, STRING),
      f('type', 11, STRING),
      f('deprecatedSource', 12, ref('core.v1.EventSource')),
      f('deprecatedFirstTimestamp', 13, TIME),
      f('deprecatedLastTimestamp', 14, TIME),
      f('deprecatedCount', 15, INT32),
    ],
    { typeMeta: true },
  ),
  listKind('EventList', 'Event'),
  msg('EventSeries', [f('count', 1, INT32, { emitEmpty: true, required: true }), f('lastObservedTime', 2, MICRO_TIME, { emitEmpty: true, required: true })]),
]);
