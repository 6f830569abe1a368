import { Metadata, status as grpcStatus, type ServiceError } from '@grpc/grpc-js';
import * as pb from '../../src/gen/keelson/core/v1/core';
import type { ApiList, ApiObject, DeleteOptions, ListOptions, Patch, ResourceTarget, WatchEvent, WriteOptions } from '../../src/core/api';
import { handOver } from '../../src/core/api';
import {
  createCodec,
  decodeWatchResponse,
  deleteCodec,
  deleteCollectionCodec,
  encodeWatchEvent,
  encodeWatchStarted,
  getCodec,
  listCodec,
  patchCodec,
  updateCodec,
  watchRequestCodec,
  type Caller,
  type MethodCodec,
  type RequestCodec,
} from '../../src/grpc/codec';
import { decodeObject, encodeEnvelope, JSON_CONTENT_TYPE } from '../../src/grpc/envelope';
import { fromGrpcError, grpcCodeOf, MAX_TRAILER_BYTES, STATUS_TRAILER_KEY, toGrpcStatus } from '../../src/grpc/errors';
import { conflict, invalid, notFound, StatusError, successStatus } from '../../src/status';

/** Serializes a message to protobuf bytes and parses it back, as the transport does. */
interface WireFns<T> {
  encode(message: T): { finish(): Uint8Array };
  decode(bytes: Uint8Array): T;
}
function viaWire<T>(fns: WireFns<T>, message: T): T {
  return fns.decode(fns.encode(message).finish());
}

function roundTripRequest<Args extends unknown[], Req>(
  codec: RequestCodec<Args, Req>,
  wire: WireFns<Req>,
  args: Args,
  caller: Caller,
): { args: Args; caller: Caller } {
  return codec.decodeRequest(viaWire(wire, codec.encodeRequest(args, caller)));
}

function roundTripResponse<Args extends unknown[], Result, Req, Res>(
  codec: MethodCodec<Args, Result, Req, Res>,
  wire: WireFns<Res>,
  result: Result,
  warnings: string[],
): { result: Result; warnings: string[] } {
  return codec.decodeResponse(viaWire(wire, codec.encodeResponse(result, warnings)));
}

const fullCaller: Caller = {
  user: {
    username: 'alice',
    uid: 'u-1',
    groups: ['system:authenticated', 'devs'],
    extra: { scopes: ['a', 'b'], 'example.com/empty': [] },
  },
  userAgent: 'kubectl/v1.32.4 (linux/amd64)',
};
const minimalCaller: Caller = { user: { username: 'system:anonymous', groups: [] } };

const namespaced: ResourceTarget = { group: '', version: 'v1', resource: 'configmaps', namespace: 'default', name: 'cm' };
const clusterScoped: ResourceTarget = { group: '', version: 'v1', resource: 'namespaces' };
const withSubresource: ResourceTarget = {
  group: 'apps',
  version: 'v1',
  resource: 'replicasets',
  subresource: 'status',
  namespace: 'default',
  name: 'rs',
};
/** Present-but-empty strings are not the same as absent ones. */
const emptyStrings: ResourceTarget = { group: '', version: 'v1', resource: 'configmaps', namespace: '', name: '' };

const configMap: ApiObject = {
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name: 'cm', namespace: 'default', resourceVersion: '12', labels: { a: 'b' } },
  data: { key: 'välue ✓' },
};

const configMapList: ApiList = {
  apiVersion: 'v1',
  kind: 'ConfigMapList',
  metadata: { resourceVersion: '12', continue: 'token', remainingItemCount: 3 },
  items: [configMap],
};

const fullListOptions: ListOptions = {
  resourceVersion: '10',
  resourceVersionMatch: 'NotOlderThan',
  limit: 500,
  continue: 'abc',
  labelSelector: 'app=web',
  fieldSelector: 'metadata.name=cm',
  timeoutSeconds: 300,
  allowWatchBookmarks: true,
  sendInitialEvents: true,
};
/** Zero values whose presence means something: they must not turn into "absent". */
const zeroListOptions: ListOptions = {
  resourceVersion: '0',
  resourceVersionMatch: 'Exact',
  limit: 0,
  continue: '',
  labelSelector: '',
  fieldSelector: '',
  timeoutSeconds: 0,
  allowWatchBookmarks: false,
  sendInitialEvents: false,
};

const fullWriteOptions: WriteOptions = { dryRun: ['All'], fieldManager: 'kubectl', fieldValidation: 'Strict', force: true };
const zeroWriteOptions: WriteOptions = { fieldManager: '', fieldValidation: 'Ignore', force: false };

const fullDeleteOptions: DeleteOptions = {
  dryRun: ['All'],
  gracePeriodSeconds: 30,
  preconditions: { uid: 'u-9', resourceVersion: '7' },
  propagationPolicy: 'Foreground',
  orphanDependents: true,
  ignoreStoreReadErrorWithClusterBreakingPotential: true,
};
const zeroDeleteOptions: DeleteOptions = {
  gracePeriodSeconds: 0,
  preconditions: {},
  orphanDependents: false,
  ignoreStoreReadErrorWithClusterBreakingPotential: false,
};

describe('request codecs keep every field through the wire', () => {
  const callers = [fullCaller, minimalCaller];
  const targets = [namespaced, clusterScoped, withSubresource, emptyStrings];

  it.each(callers.flatMap((caller) => targets.map((target) => [caller, target] as const)))('get with caller %o and target %o', (caller, target) => {
    for (const options of [{}, { resourceVersion: '0' }, { resourceVersion: '' }, { resourceVersion: '42' }]) {
      const back = roundTripRequest(getCodec, pb.GetRequest, [target, options], caller);
      expect(back).toStrictEqual({ args: [target, options], caller });
    }
  });

  it.each([
    ['full', fullListOptions],
    ['zero values', zeroListOptions],
    ['absent', {}],
  ] as const)('list and watch with %s options', (_name, options) => {
    expect(roundTripRequest(listCodec, pb.ListRequest, [clusterScoped, options], fullCaller)).toStrictEqual({
      args: [clusterScoped, options],
      caller: fullCaller,
    });
    expect(roundTripRequest(watchRequestCodec, pb.WatchRequest, [namespaced, options], minimalCaller)).toStrictEqual({
      args: [namespaced, options],
      caller: minimalCaller,
    });
  });

  it.each([
    ['full', fullWriteOptions],
    ['zero values', zeroWriteOptions],
    ['absent', {}],
  ] as const)('create and update with %s options', (_name, options) => {
    const args: [ResourceTarget, ApiObject, WriteOptions] = [namespaced, configMap, options];
    // The server's side hands the object it decoded for this call alone over to the core.
    const decoded = { args: [namespaced, handOver(configMap), options], caller: fullCaller };
    expect(roundTripRequest(createCodec, pb.CreateRequest, args, fullCaller)).toStrictEqual(decoded);
    expect(roundTripRequest(updateCodec, pb.UpdateRequest, args, fullCaller)).toStrictEqual(decoded);
    // A body a gateway handed over to the client goes on the wire as the object it holds.
    expect(roundTripRequest(createCodec, pb.CreateRequest, [namespaced, handOver(configMap, { withinLimits: true }), options], fullCaller)).toStrictEqual(
      decoded,
    );
  });

  it.each<Patch>([
    { type: 'json', body: [{ op: 'replace', path: '/data/key', value: 'v' }] },
    { type: 'merge', body: { data: { key: null } } },
    { type: 'strategic', body: { metadata: { labels: { a: 'c' } } } },
    { type: 'apply', body: configMap },
    { type: 'merge', body: undefined },
    { type: 'merge', body: null },
  ])('patch %o', (patch) => {
    const args: [ResourceTarget, Patch, WriteOptions] = [namespaced, patch, fullWriteOptions];
    expect(roundTripRequest(patchCodec, pb.PatchRequest, args, fullCaller)).toStrictEqual({ args, caller: fullCaller });
  });

  it.each([
    ['full', fullDeleteOptions],
    ['zero values', zeroDeleteOptions],
    ['absent', {}],
    ['orphan policy only', { propagationPolicy: 'Orphan' } as DeleteOptions],
    ['background policy only', { propagationPolicy: 'Background' } as DeleteOptions],
  ] as const)('delete and deleteCollection with %s options', (_name, options) => {
    expect(roundTripRequest(deleteCodec, pb.DeleteRequest, [namespaced, options], fullCaller)).toStrictEqual({
      args: [namespaced, options],
      caller: fullCaller,
    });
    const collectionArgs: [ResourceTarget, ListOptions, DeleteOptions] = [
      { group: '', version: 'v1', resource: 'configmaps', namespace: 'default' },
      fullListOptions,
      options,
    ];
    expect(roundTripRequest(deleteCollectionCodec, pb.DeleteCollectionRequest, collectionArgs, minimalCaller)).toStrictEqual({
      args: collectionArgs,
      caller: minimalCaller,
    });
  });

  it('decodes an empty user extra and an empty dryRun as absent', () => {
    const caller: Caller = { user: { username: 'bob', groups: ['g'], extra: {} } };
    const back = roundTripRequest(createCodec, pb.CreateRequest, [namespaced, configMap, { dryRun: [] }], caller);
    expect(back.caller).toStrictEqual({ user: { username: 'bob', groups: ['g'] } });
    expect(back.args[2]).toStrictEqual({});
  });

  it('refuses requests without target, caller or patch type', () => {
    expect(() => getCodec.decodeRequest({ options: {}, caller: pb.Caller.fromPartial({ user: { username: 'a' } }) })).toThrow(
      expect.objectContaining({ reason: 'BadRequest' }),
    );
    expect(() => getCodec.decodeRequest({ target: pb.ResourceTarget.fromPartial({ resource: 'pods' }) })).toThrow(
      expect.objectContaining({ reason: 'BadRequest' }),
    );
    const patchRequest = patchCodec.encodeRequest([namespaced, { type: 'merge', body: {} }, {}], fullCaller);
    patchRequest.patch = { type: pb.PatchType.PATCH_TYPE_UNSPECIFIED, body: Buffer.from('{}') };
    expect(() => patchCodec.decodeRequest(patchRequest)).toThrow(expect.objectContaining({ reason: 'BadRequest' }));
  });

  it('refuses enum values outside the closed sets', () => {
    const request = listCodec.encodeRequest([namespaced, {}], fullCaller);
    request.options = pb.ListOptions.fromPartial({ resourceVersionMatch: 7 as pb.ResourceVersionMatch });
    const back = pb.ListRequest.decode(pb.ListRequest.encode(request).finish());
    expect(() => listCodec.decodeRequest(back)).toThrow(expect.objectContaining({ reason: 'BadRequest' }));
    expect(() => listCodec.encodeRequest([namespaced, { resourceVersionMatch: 'Latest' as never }], fullCaller)).toThrow(StatusError);
  });
});

describe('response codecs keep results and warnings through the wire', () => {
  it('get', () => {
    expect(roundTripResponse(getCodec, pb.GetResponse, configMap, ['w1', 'w2'])).toStrictEqual({
      result: configMap,
      warnings: ['w1', 'w2'],
    });
  });

  it('list and deleteCollection', () => {
    expect(roundTripResponse(listCodec, pb.ListResponse, configMapList, [])).toStrictEqual({ result: configMapList, warnings: [] });
    expect(roundTripResponse(deleteCollectionCodec, pb.DeleteCollectionResponse, configMapList, ['w'])).toStrictEqual({
      result: configMapList,
      warnings: ['w'],
    });
  });

  it.each([true, false])('create, update and patch with created=%s', (created) => {
    const result = { object: configMap, created };
    expect(roundTripResponse(createCodec, pb.CreateResponse, result, ['w'])).toStrictEqual({ result, warnings: ['w'] });
    expect(roundTripResponse(updateCodec, pb.UpdateResponse, result, [])).toStrictEqual({ result, warnings: [] });
    expect(roundTripResponse(patchCodec, pb.PatchResponse, result, [])).toStrictEqual({ result, warnings: [] });
  });

  it('delete returning the object (200) or a Success Status (202)', () => {
    const withObject = { object: configMap, httpStatus: 200 as const };
    expect(roundTripResponse(deleteCodec, pb.DeleteResponse, withObject, [])).toStrictEqual({ result: withObject, warnings: [] });
    const withStatus = { object: successStatus({ name: 'cm', kind: 'configmaps' }), httpStatus: 202 as const };
    expect(roundTripResponse(deleteCodec, pb.DeleteResponse, withStatus, ['w'])).toStrictEqual({
      result: withStatus,
      warnings: ['w'],
    });
  });

  it('refuses a delete response with an HTTP status other than 200 or 202', () => {
    const response = deleteCodec.encodeResponse({ object: configMap, httpStatus: 200 }, []);
    response.httpStatus = 204;
    expect(() => deleteCodec.decodeResponse(response)).toThrow(StatusError);
  });
});

describe('watch stream messages', () => {
  const events: WatchEvent[] = [
    { type: 'ADDED', object: configMap },
    { type: 'MODIFIED', object: { ...configMap, data: { key: 'v2' } } },
    { type: 'DELETED', object: configMap },
    { type: 'BOOKMARK', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { resourceVersion: '99' } } },
    { type: 'ERROR', object: { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: 'too old', reason: 'Expired', code: 410 } },
  ];

  it.each(events)('event %o', (event) => {
    expect(decodeWatchResponse(viaWire(pb.WatchResponse, encodeWatchEvent(event)))).toStrictEqual({ kind: 'event', event });
  });

  it('started, with and without warnings', () => {
    expect(decodeWatchResponse(viaWire(pb.WatchResponse, encodeWatchStarted(['w'])))).toStrictEqual({
      kind: 'started',
      warnings: ['w'],
    });
    expect(decodeWatchResponse(viaWire(pb.WatchResponse, encodeWatchStarted([])))).toStrictEqual({ kind: 'started', warnings: [] });
  });

  it('serializes an event shared by many watchers once', () => {
    const event: WatchEvent = { type: 'ADDED', object: configMap };
    expect(encodeWatchEvent(event).event?.object).toBe(encodeWatchEvent(event).event?.object);
  });
});

describe('envelope', () => {
  it('is shaped as runtime.Unknown: typeMeta, raw JSON, content type', () => {
    const envelope = encodeEnvelope(configMap);
    expect(envelope.typeMeta).toEqual({ apiVersion: 'v1', kind: 'ConfigMap' });
    expect(envelope.contentType).toBe(JSON_CONTENT_TYPE);
    expect(envelope.contentEncoding).toBeUndefined();
    expect(JSON.parse(envelope.raw.toString('utf8'))).toEqual(configMap);
  });

  it('refuses raw it cannot read yet (protobuf raw, compressed raw) instead of misreading it', () => {
    const protobufRaw = { ...encodeEnvelope(configMap), contentType: undefined };
    expect(() => decodeObject(protobufRaw, 'object')).toThrow(expect.objectContaining({ reason: 'UnsupportedMediaType', code: 415 }));
    const gzipped = { ...encodeEnvelope(configMap), contentEncoding: 'gzip' };
    expect(() => decodeObject(gzipped, 'object')).toThrow(expect.objectContaining({ reason: 'BadRequest' }));
  });
});

describe('status trailer', () => {
  /** What the client sees: a ServiceError carrying the server's trailing metadata. */
  function asServiceError(status: { code: number; details: string; metadata: Metadata }): ServiceError {
    return Object.assign(new Error(`${status.code} ${status.details}`), status);
  }

  it.each([
    ['NotFound', notFound({ group: '', resource: 'configmaps' }, 'x')],
    ['Conflict', conflict({ group: 'apps', resource: 'replicasets' }, 'rs', 'the object has been modified')],
    [
      'Invalid with causes',
      invalid({ group: '', kind: 'ConfigMap' }, 'cm', [
        { field: 'metadata.name', causeReason: 'FieldValueRequired', causeMessage: 'Required value', message: 'metadata.name: Required value' },
      ]),
    ],
    [
      'TooManyRequests with retryAfterSeconds',
      new StatusError({
        kind: 'Status',
        apiVersion: 'v1',
        metadata: {},
        status: 'Failure',
        message: 'slow down',
        reason: 'TooManyRequests',
        details: { retryAfterSeconds: 7, causes: [{ message: 'x' }] },
        code: 429,
      }),
    ],
  ] as const)('carries %s whole, with warnings', (_name, error) => {
    const status = toGrpcStatus(error, ['careful']);
    expect(status.code).toBe(grpcCodeOf(error.status));
    expect(status.details).toBe(error.status.message);
    expect(status.metadata.get(STATUS_TRAILER_KEY)).toHaveLength(1);
    const back = fromGrpcError(asServiceError(status));
    expect(back.error).toBeInstanceOf(StatusError);
    expect(back.error.status).toStrictEqual(error.status);
    expect(back.warnings).toEqual(['careful']);
  });

  it('keeps the trailer and the gRPC message within their budgets, whatever the Status holds', () => {
    const huge = 'y'.repeat(200_000);
    const error = new StatusError({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: huge,
      reason: 'BadRequest',
      details: { name: huge, causes: [{ message: huge }, { message: huge }] },
      code: 400,
    });
    const status = toGrpcStatus(error, [huge, huge]);
    const [trailer] = status.metadata.get(STATUS_TRAILER_KEY);
    expect(Buffer.isBuffer(trailer) && trailer.length).toBeLessThanOrEqual(MAX_TRAILER_BYTES);
    expect(status.details.length).toBeLessThanOrEqual(1024);
    const back = fromGrpcError(asServiceError(status)).error;
    expect(back.status).toMatchObject({ code: 400, reason: 'BadRequest', status: 'Failure' });
    expect(back.message.startsWith('yyy')).toBe(true);
  });

  it('maps reasons to gRPC codes through REASON_CODES', () => {
    expect(toGrpcStatus(notFound({ group: '', resource: 'pods' }, 'p'), []).code).toBe(grpcStatus.NOT_FOUND);
    expect(toGrpcStatus(conflict({ group: '', resource: 'pods' }, 'p', 'x'), []).code).toBe(grpcStatus.ABORTED);
  });

  it('turns anything else thrown into a 500 InternalError', () => {
    const status = toGrpcStatus(new TypeError('boom'), []);
    expect(status.code).toBe(grpcStatus.INTERNAL);
    const back = fromGrpcError(asServiceError(status)).error;
    expect(back.status).toMatchObject({ code: 500, reason: 'InternalError', message: 'Internal error occurred: boom' });
  });

  it.each([
    [grpcStatus.UNAVAILABLE, 503, 'ServiceUnavailable'],
    [grpcStatus.DEADLINE_EXCEEDED, 504, 'Timeout'],
    [grpcStatus.NOT_FOUND, 404, 'NotFound'],
    [grpcStatus.UNIMPLEMENTED, 405, 'MethodNotAllowed'],
    [grpcStatus.INVALID_ARGUMENT, 400, 'BadRequest'],
    [grpcStatus.CANCELLED, 500, 'InternalError'],
    [grpcStatus.UNKNOWN, 500, 'InternalError'],
  ])('without a trailer, maps gRPC code %i to %i %s', (code, http, reason) => {
    const back = fromGrpcError(asServiceError({ code, details: 'transport says no', metadata: new Metadata() }));
    expect(back.error.status).toStrictEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'transport says no',
      reason,
      code: http,
    });
    expect(back.warnings).toEqual([]);
  });

  it('falls back to the gRPC code when the trailer is unreadable', () => {
    const metadata = new Metadata();
    metadata.set(STATUS_TRAILER_KEY, Buffer.from([0xff, 0xff, 0xff]));
    const back = fromGrpcError(asServiceError({ code: grpcStatus.NOT_FOUND, details: 'gone', metadata }));
    expect(back.error.status).toMatchObject({ code: 404, reason: 'NotFound', message: 'gone' });
  });
});
