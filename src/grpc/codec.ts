/**
 * Conversion between the generated gRPC messages (src/gen) and the CoreApi types, both
 * directions, in one place. Each method has one record: the client encodes requests and
 * decodes responses with it, the server does the opposite with the same record, so the two
 * sides cannot drift apart.
 *
 * Presence is kept where it means something: an option the CoreApi leaves undefined stays
 * absent on the wire (proto3 `optional`, or enum value 0 = unspecified) and decodes to
 * undefined again, while zero values (limit 0, gracePeriodSeconds 0, false, '') come back
 * as themselves. Empty repeated fields and maps (dryRun, groups' extra) decode as absent;
 * the core reads `[]` and absent alike.
 */
import type * as pb from '../gen/keelson/core/v1/core';
import type { Unknown } from '../gen/keelson/core/v1/envelope';
import {
  bodyValue,
  handOver,
  type ApiList,
  type ApiObject,
  type DecodeReport,
  type DeleteOptions,
  type DeleteResult,
  type GetOptions,
  type ListOptions,
  type Patch,
  type ResourceTarget,
  type UserInfo,
  type WatchEvent,
  type WriteBody,
  type WriteOptions,
  type WriteResult,
} from '../core';
import { badRequest } from '../status';
import { decodeList, decodeObject, decodeObjectOrStatus, decodeStatus, encodeEnvelope } from './envelope';
import { FIELD_VALIDATIONS, PATCH_TYPES, PROPAGATION_POLICIES, RESOURCE_VERSION_MATCHES, WATCH_EVENT_TYPES } from './enums';

/** What of a RequestContext crosses the wire: who asks, with which user agent, and what the door saw in the body. */
export interface Caller {
  user: UserInfo;
  userAgent?: string;
  decodeReport?: DecodeReport;
}

/** A request: the CoreApi method's arguments (without the context) plus the caller. */
export interface RequestCodec<Args extends unknown[], Req> {
  encodeRequest(args: Args, caller: Caller): Req;
  decodeRequest(request: Req): { args: Args; caller: Caller };
}

/** A unary response: the CoreApi method's result plus the warnings collected serving it. */
export interface ResponseCodec<Result, Res> {
  encodeResponse(result: Result, warnings: readonly string[]): Res;
  decodeResponse(response: Res): { result: Result; warnings: string[] };
}

export type MethodCodec<Args extends unknown[], Result, Req, Res> = RequestCodec<Args, Req> & ResponseCodec<Result, Res>;

// --- Methods ---

export const getCodec: MethodCodec<[ResourceTarget, GetOptions], ApiObject, pb.GetRequest, pb.GetResponse> = {
  encodeRequest: ([target, options], caller) => ({
    target: encodeTarget(target),
    options: { resourceVersion: options.resourceVersion },
    caller: encodeCaller(caller),
  }),
  decodeRequest: (request) => ({
    args: [decodeTarget(request.target), compact({ resourceVersion: request.options?.resourceVersion })],
    caller: decodeCaller(request.caller),
  }),
  encodeResponse: (object, warnings) => ({ object: encodeEnvelope(object), warnings: [...warnings] }),
  decodeResponse: (response) => ({ result: decodeObject(response.object, 'object'), warnings: response.warnings }),
};

export const listCodec: MethodCodec<[ResourceTarget, ListOptions], ApiList, pb.ListRequest, pb.ListResponse> = {
  encodeRequest: ([target, options], caller) => ({
    target: encodeTarget(target),
    options: encodeListOptions(options),
    caller: encodeCaller(caller),
  }),
  decodeRequest: (request) => ({
    args: [decodeTarget(request.target), decodeListOptions(request.options)],
    caller: decodeCaller(request.caller),
  }),
  encodeResponse: (list, warnings) => ({ list: encodeEnvelope(list), warnings: [...warnings] }),
  decodeResponse: (response) => ({ result: decodeList(response.list, 'list'), warnings: response.warnings }),
};

export const watchRequestCodec: RequestCodec<[ResourceTarget, ListOptions], pb.WatchRequest> = {
  encodeRequest: listCodec.encodeRequest,
  decodeRequest: listCodec.decodeRequest,
};

/** Create and update share their shape: an object in, the stored object and `created` out. */
type ObjectWriteCodec = MethodCodec<
  [ResourceTarget, WriteBody<ApiObject>, WriteOptions],
  WriteResult,
  pb.CreateRequest | pb.UpdateRequest,
  pb.CreateResponse | pb.UpdateResponse | pb.PatchResponse
>;

const writeResultCodec: ResponseCodec<WriteResult, pb.CreateResponse | pb.UpdateResponse | pb.PatchResponse> = {
  encodeResponse: (result, warnings) => ({
    object: encodeEnvelope(result.object),
    created: result.created,
    warnings: [...warnings],
  }),
  decodeResponse: (response) => ({
    result: { object: decodeObject(response.object, 'object'), created: response.created },
    warnings: response.warnings,
  }),
};

const objectWriteCodec: ObjectWriteCodec = {
  encodeRequest: ([target, object, options], caller) => ({
    target: encodeTarget(target),
    object: encodeEnvelope(bodyValue(object)),
    options: encodeWriteOptions(options),
    caller: encodeCaller(caller),
  }),
  decodeRequest: (request) => ({
    // The object was decoded for this call alone: handed over, the core takes it without a copy
    // (its limits the core checks).
    args: [decodeTarget(request.target), handOver(decodeObject(request.object, 'object')), decodeWriteOptions(request.options)],
    caller: decodeCaller(request.caller),
  }),
  ...writeResultCodec,
};

export const createCodec: MethodCodec<[ResourceTarget, WriteBody<ApiObject>, WriteOptions], WriteResult, pb.CreateRequest, pb.CreateResponse> =
  objectWriteCodec;

export const updateCodec: MethodCodec<[ResourceTarget, WriteBody<ApiObject>, WriteOptions], WriteResult, pb.UpdateRequest, pb.UpdateResponse> =
  objectWriteCodec;

export const patchCodec: MethodCodec<[ResourceTarget, WriteBody<Patch>, WriteOptions], WriteResult, pb.PatchRequest, pb.PatchResponse> = {
  encodeRequest: ([target, body, options], caller) => {
    const patch = bodyValue(body);
    return {
      target: encodeTarget(target),
      patch: { type: PATCH_TYPES.encode(patch.type), body: encodeJson(patch.body) },
      options: encodeWriteOptions(options),
      caller: encodeCaller(caller),
    };
  },
  decodeRequest: (request) => ({
    args: [decodeTarget(request.target), decodePatch(request.patch), decodeWriteOptions(request.options)],
    caller: decodeCaller(request.caller),
  }),
  ...writeResultCodec,
};

export const deleteCodec: MethodCodec<[ResourceTarget, DeleteOptions], DeleteResult, pb.DeleteRequest, pb.DeleteResponse> = {
  encodeRequest: ([target, options], caller) => ({
    target: encodeTarget(target),
    options: encodeDeleteOptions(options),
    caller: encodeCaller(caller),
  }),
  decodeRequest: (request) => ({
    args: [decodeTarget(request.target), decodeDeleteOptions(request.options)],
    caller: decodeCaller(request.caller),
  }),
  encodeResponse: (result, warnings) => ({
    object: encodeEnvelope(result.object),
    httpStatus: result.httpStatus,
    warnings: [...warnings],
  }),
  decodeResponse: (response) => ({
    result: { object: decodeObjectOrStatus(response.object, 'object'), httpStatus: decodeDeleteHttpStatus(response.httpStatus) },
    warnings: response.warnings,
  }),
};

export const deleteCollectionCodec: MethodCodec<
  [ResourceTarget, ListOptions, DeleteOptions],
  ApiList,
  pb.DeleteCollectionRequest,
  pb.DeleteCollectionResponse
> = {
  encodeRequest: ([target, listOptions, deleteOptions], caller) => ({
    target: encodeTarget(target),
    listOptions: encodeListOptions(listOptions),
    deleteOptions: encodeDeleteOptions(deleteOptions),
    caller: encodeCaller(caller),
  }),
  decodeRequest: (request) => ({
    args: [decodeTarget(request.target), decodeListOptions(request.listOptions), decodeDeleteOptions(request.deleteOptions)],
    caller: decodeCaller(request.caller),
  }),
  encodeResponse: (list, warnings) => ({ list: encodeEnvelope(list), warnings: [...warnings] }),
  decodeResponse: (response) => ({ result: decodeList(response.list, 'list'), warnings: response.warnings }),
};

// --- Watch stream messages ---

/** The first message of every watch stream: the core accepted the watch. */
export function encodeWatchStarted(warnings: readonly string[]): pb.WatchResponse {
  return { started: { warnings: [...warnings] } };
}

/**
 * Envelopes of events already sent, keyed by the event object: when the core hands the same
 * event to many watchers (its watch cache does), the object is serialized once. Shared by every server in the process:
 * a pure memo keyed by frozen events.
 */
const eventEnvelopes = new WeakMap<WatchEvent, Unknown>();

export function encodeWatchEvent(event: WatchEvent): pb.WatchResponse {
  let object = eventEnvelopes.get(event);
  if (!object) {
    object = encodeEnvelope(event.object);
    eventEnvelopes.set(event, object);
  }
  return { event: { type: WATCH_EVENT_TYPES.encode(event.type), object } };
}

export type DecodedWatchResponse = { kind: 'started'; warnings: string[] } | { kind: 'event'; event: WatchEvent };

export function decodeWatchResponse(response: pb.WatchResponse): DecodedWatchResponse {
  if (response.started) return { kind: 'started', warnings: response.started.warnings };
  if (!response.event) throw badRequest('watch response: neither started nor event');
  const type = WATCH_EVENT_TYPES.decodeRequired(response.event.type);
  if (type === 'ERROR') return { kind: 'event', event: { type, object: decodeStatus(response.event.object, 'event object') } };
  return { kind: 'event', event: { type, object: decodeObject(response.event.object, 'event object') } };
}

// --- Pieces ---

function encodeTarget(target: ResourceTarget): pb.ResourceTarget {
  return {
    group: target.group,
    version: target.version,
    resource: target.resource,
    subresource: target.subresource,
    namespace: target.namespace,
    name: target.name,
  };
}

function decodeTarget(target: pb.ResourceTarget | undefined): ResourceTarget {
  if (!target) throw badRequest('target: missing');
  if (!target.resource) throw badRequest('target: resource is required');
  return compact({
    group: target.group,
    version: target.version,
    resource: target.resource,
    subresource: target.subresource,
    namespace: target.namespace,
    name: target.name,
  });
}

function encodeCaller(caller: Caller): pb.Caller {
  const extra: Record<string, pb.ExtraValue> = {};
  for (const [key, values] of Object.entries(caller.user.extra ?? {})) extra[key] = { values: [...values] };
  return {
    user: { username: caller.user.username, uid: caller.user.uid, groups: [...caller.user.groups], extra },
    userAgent: caller.userAgent,
    decodeReport: caller.decodeReport && encodeDecodeReport(caller.decodeReport),
  };
}

function encodeDecodeReport(report: DecodeReport): pb.DecodeReport {
  switch (report.kind) {
    case 'json':
      return { json: { duplicates: report.duplicates, firstSeen: report.firstSeen ?? [] } };
    case 'yaml':
      return { yaml: { duplicates: report.duplicates } };
    case 'patch':
      return { patch: { errors: report.errors } };
  }
}

function decodeDecodeReport(report: pb.DecodeReport | undefined): DecodeReport | undefined {
  if (report?.json) {
    const { duplicates, firstSeen } = report.json;
    return firstSeen.length > 0 ? { kind: 'json', duplicates, firstSeen } : { kind: 'json', duplicates };
  }
  if (report?.yaml) return { kind: 'yaml', duplicates: report.yaml.duplicates };
  if (report?.patch) return { kind: 'patch', errors: report.patch.errors };
  return undefined;
}

/** The caller a request names; admission reads it alone, before the rest of the request, from a gateway. */
export function decodeCaller(caller: pb.Caller | undefined): Caller {
  if (!caller?.user) throw badRequest('caller: user is required');
  const { username, uid, groups } = caller.user;
  const entries = Object.entries(caller.user.extra);
  const extra = entries.length > 0 ? Object.fromEntries(entries.map(([key, value]) => [key, value.values])) : undefined;
  return compact({ user: compact({ username, uid, groups, extra }), userAgent: caller.userAgent, decodeReport: decodeDecodeReport(caller.decodeReport) });
}

function encodeListOptions(options: ListOptions): pb.ListOptions {
  return {
    resourceVersion: options.resourceVersion,
    resourceVersionMatch: RESOURCE_VERSION_MATCHES.encode(options.resourceVersionMatch),
    limit: encodeInt(options.limit),
    continue: options.continue,
    labelSelector: options.labelSelector,
    fieldSelector: options.fieldSelector,
    timeoutSeconds: encodeInt(options.timeoutSeconds),
    allowWatchBookmarks: options.allowWatchBookmarks,
    sendInitialEvents: options.sendInitialEvents,
  };
}

function decodeListOptions(options: pb.ListOptions | undefined): ListOptions {
  if (!options) return {};
  return compact({
    resourceVersion: options.resourceVersion,
    resourceVersionMatch: RESOURCE_VERSION_MATCHES.decode(options.resourceVersionMatch),
    limit: decodeInt(options.limit),
    continue: options.continue,
    labelSelector: options.labelSelector,
    fieldSelector: options.fieldSelector,
    timeoutSeconds: decodeInt(options.timeoutSeconds),
    allowWatchBookmarks: options.allowWatchBookmarks,
    sendInitialEvents: options.sendInitialEvents,
  });
}

function encodeWriteOptions(options: WriteOptions): pb.WriteOptions {
  return {
    dryRun: [...(options.dryRun ?? [])],
    fieldManager: options.fieldManager,
    fieldValidation: FIELD_VALIDATIONS.encode(options.fieldValidation),
    force: options.force,
  };
}

function decodeWriteOptions(options: pb.WriteOptions | undefined): WriteOptions {
  if (!options) return {};
  return compact({
    dryRun: nonEmpty(options.dryRun),
    fieldManager: options.fieldManager,
    fieldValidation: FIELD_VALIDATIONS.decode(options.fieldValidation),
    force: options.force,
  });
}

function encodeDeleteOptions(options: DeleteOptions): pb.DeleteOptions {
  const { preconditions } = options;
  return {
    dryRun: [...(options.dryRun ?? [])],
    gracePeriodSeconds: encodeInt(options.gracePeriodSeconds),
    preconditions: preconditions && { uid: preconditions.uid, resourceVersion: preconditions.resourceVersion },
    propagationPolicy: PROPAGATION_POLICIES.encode(options.propagationPolicy),
    orphanDependents: options.orphanDependents,
    ignoreStoreReadErrorWithClusterBreakingPotential: options.ignoreStoreReadErrorWithClusterBreakingPotential,
  };
}

function decodeDeleteOptions(options: pb.DeleteOptions | undefined): DeleteOptions {
  if (!options) return {};
  const { preconditions } = options;
  return compact({
    dryRun: nonEmpty(options.dryRun),
    gracePeriodSeconds: decodeInt(options.gracePeriodSeconds),
    preconditions: preconditions && compact({ uid: preconditions.uid, resourceVersion: preconditions.resourceVersion }),
    propagationPolicy: PROPAGATION_POLICIES.decode(options.propagationPolicy),
    orphanDependents: options.orphanDependents,
    ignoreStoreReadErrorWithClusterBreakingPotential: options.ignoreStoreReadErrorWithClusterBreakingPotential,
  });
}

function decodePatch(patch: pb.Patch | undefined): Patch {
  if (!patch) throw badRequest('patch: missing');
  return { type: PATCH_TYPES.decodeRequired(patch.type), body: decodeJson(patch.body, 'patch body') };
}

function decodeDeleteHttpStatus(code: number): 200 | 202 {
  if (code === 200 || code === 202) return code;
  throw badRequest(`delete response: unexpected http status ${code}`);
}

/** A JSON value as bytes; undefined travels as no bytes at all. */
function encodeJson(value: unknown): Buffer {
  return value === undefined ? Buffer.alloc(0) : Buffer.from(JSON.stringify(value), 'utf8');
}

function decodeJson(bytes: Buffer, what: string): unknown {
  if (bytes.length === 0) return undefined;
  try {
    return JSON.parse(bytes.toString('utf8'));
  } catch (err) {
    throw badRequest(`${what}: invalid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** int64 travels as a decimal string (ts-proto `forceLong=string`). */
function encodeInt(value: number | undefined): string | undefined {
  return value === undefined ? undefined : String(Math.trunc(value));
}

function decodeInt(value: string | undefined): number | undefined {
  return value === undefined ? undefined : Number(value);
}

function nonEmpty<T>(values: T[]): T[] | undefined {
  return values.length > 0 ? values : undefined;
}

/** Drops properties whose value is undefined, so decoded objects hold only what was sent. */
function compact<T extends object>(value: T): T {
  for (const key of Object.keys(value) as (keyof T)[]) {
    if (value[key] === undefined) delete value[key];
  }
  return value;
}
