/**
 * The closed string unions of the CoreApi (resourceVersionMatch, fieldValidation,
 * propagationPolicy, patch type, watch event type) mapped onto their proto enums, whose
 * value 0 means "unspecified", i.e. absent. Part of codec.ts, kept apart for length.
 */
import * as pb from '../gen/keelson/core/v1/core';
import type { FieldValidation, PatchType, PropagationPolicy, ResourceVersionMatch, WatchEventType } from '../core';
import { badRequest } from '../status';

/**
 * A closed string union mapped onto a proto enum whose 0 means "unspecified" (absent).
 * Values outside the table are refused rather than guessed.
 */
function enumCodec<A extends string, P extends number>(what: string, unspecified: P, pairs: ReadonlyArray<readonly [A, P]>) {
  const toProto = new Map<string, P>(pairs);
  const fromProto = new Map<number, A>(pairs.map(([api, proto]) => [proto, api]));
  const decode = (value: P): A | undefined => {
    if (value === unspecified) return undefined;
    const api = fromProto.get(value);
    if (api === undefined) throw badRequest(`unknown ${what}: ${value}`);
    return api;
  };
  return {
    encode(value: A | undefined): P {
      if (value === undefined) return unspecified;
      const proto = toProto.get(value);
      if (proto === undefined) throw badRequest(`unknown ${what}: ${JSON.stringify(value)}`);
      return proto;
    },
    decode,
    decodeRequired(value: P): A {
      const api = decode(value);
      if (api === undefined) throw badRequest(`${what} is required`);
      return api;
    },
  };
}

export const RESOURCE_VERSION_MATCHES = enumCodec<ResourceVersionMatch, pb.ResourceVersionMatch>(
  'resourceVersionMatch',
  pb.ResourceVersionMatch.RESOURCE_VERSION_MATCH_UNSPECIFIED,
  [
    ['Exact', pb.ResourceVersionMatch.RESOURCE_VERSION_MATCH_EXACT],
    ['NotOlderThan', pb.ResourceVersionMatch.RESOURCE_VERSION_MATCH_NOT_OLDER_THAN],
  ],
);

export const FIELD_VALIDATIONS = enumCodec<FieldValidation, pb.FieldValidation>('fieldValidation', pb.FieldValidation.FIELD_VALIDATION_UNSPECIFIED, [
  ['Ignore', pb.FieldValidation.FIELD_VALIDATION_IGNORE],
  ['Warn', pb.FieldValidation.FIELD_VALIDATION_WARN],
  ['Strict', pb.FieldValidation.FIELD_VALIDATION_STRICT],
]);

export const PROPAGATION_POLICIES = enumCodec<PropagationPolicy, pb.PropagationPolicy>(
  'propagationPolicy',
  pb.PropagationPolicy.PROPAGATION_POLICY_UNSPECIFIED,
  [
    ['Orphan', pb.PropagationPolicy.PROPAGATION_POLICY_ORPHAN],
    ['Background', pb.PropagationPolicy.PROPAGATION_POLICY_BACKGROUND],
    ['Foreground', pb.PropagationPolicy.PROPAGATION_POLICY_FOREGROUND],
  ],
);

export const PATCH_TYPES = enumCodec<PatchType, pb.PatchType>('patch type', pb.PatchType.PATCH_TYPE_UNSPECIFIED, [
  ['json', pb.PatchType.PATCH_TYPE_JSON],
  ['merge', pb.PatchType.PATCH_TYPE_MERGE],
  ['strategic', pb.PatchType.PATCH_TYPE_STRATEGIC],
  ['apply', pb.PatchType.PATCH_TYPE_APPLY],
]);

export const WATCH_EVENT_TYPES = enumCodec<WatchEventType, pb.WatchEventType>('watch event type', pb.WatchEventType.WATCH_EVENT_TYPE_UNSPECIFIED, [
  ['ADDED', pb.WatchEventType.WATCH_EVENT_TYPE_ADDED],
  ['MODIFIED', pb.WatchEventType.WATCH_EVENT_TYPE_MODIFIED],
  ['DELETED', pb.WatchEventType.WATCH_EVENT_TYPE_DELETED],
  ['BOOKMARK', pb.WatchEventType.WATCH_EVENT_TYPE_BOOKMARK],
  ['ERROR', pb.WatchEventType.WATCH_EVENT_TYPE_ERROR],
]);
