/**
 * The resource handler: one CoreApi call per request. The response format is negotiated and
 * the body's format checked before the core is called (so a 406 or 415 costs nothing), query
 * parameters are decoded and validated into the core's option types, and results map to
 * upstream's status codes: create 201, update/patch 200 or 201 when they created, delete 200
 * or 202 as the core says (docs/API.md, "Endpoints").
 *
 * Encodings (docs/API.md, "Content negotiation"): an `Accept` clause may ask for a Table or the
 * PartialObjectMetadata forms, which every response of the endpoint honours (upstream's
 * transformResponseObject); the feature gates decide whether CBOR is served (bodies, watches,
 * `application/apply-patch+cbor`) and whether large responses are gzipped.
 */
import { type Clock, systemClock } from '../../clock';
import {
  type CoreApi,
  type DecodeReport,
  type GetOptions,
  type Patch,
  type RequestContext,
  type WatchEvent,
  handOver,
  type ResourceDefinition,
} from '../../core';
import type { ServerMetrics } from '../../metrics';
import type { FeatureGates } from '../../features';
import type { Naming } from '../../naming';
import { StatusError, badRequest, notAcceptable, unsupportedMediaType } from '../../status';
import { MAX_REQUEST_BODY_BYTES, PATCH_MEDIA_TYPES, bodyCodec, decodeObject, decodePatch, patchTypeOf, readOptionalBody } from '../body';
import {
  APPLY_PATCH_CBOR_MEDIA_TYPE,
  CBOR_MEDIA_TYPE,
  type Codecs,
  createCodecs,
  type EndpointRestrictions,
  type MediaTypeOptions,
  convertObject,
  encodingFeatures,
  featuresOf,
  gatewayCodecs,
  mediaTypesOf,
  metaCodecsOf,
  negotiateMediaTypeOptions,
  negotiateOutput,
  resourceEndpointRestrictions,
} from '../codecs';
import { parseDeleteOptions, parseListOptions, parseWriteOptions, queryString } from '../options';
import { checkDecodedLimits, withinLimits } from '../../codecs/limits';
import type { OpenWatches } from '../open-watches';
import type { ResourceIndex } from '../resource-index';
import { orderedStatus, writeError, writeObject, writeRawJson } from '../respond';
import { type Exchange, type ResourceRequestInfo, userOf } from '../types';
import { type ResourceRoute, resolveResourceRoute } from './resource-route';
import { FramedEvents, defaultWatchTimeoutMs, serveWatch } from './watch';
import { signalDeprecation } from './deprecation';

export interface ResourceHandlerOptions {
  core: CoreApi;
  codecs: Codecs;
  naming: Naming;
  index: ResourceIndex;
  /** Milliseconds a watch without timeoutSeconds lasts; defaults to upstream's random 30–60 minutes. */
  watchTimeoutMs?: () => number;
  /**
   * The server's feature gates (`--feature-gates`): codecs built without explicit gates follow
   * them. Default: the codecs' own gates, else the 1.32 defaults.
   */
  features?: FeatureGates;
  /** The time AGE columns count from. */
  clock?: Clock;
  /** Counts the watch events sent. */
  metrics?: ServerMetrics;
  /** The gateway's open watches, which shutdown ends. */
  openWatches?: OpenWatches;
}

/** What the door says of a body it hands over: body.ts checked it against the decode limits. */
const DECODED = { withinLimits: true } as const;

/** A Handler for resource requests: nothing when answered within the call, else its promise; fails by rejecting. */
export type ResourceHandler = (exchange: Exchange, info: ResourceRequestInfo) => Promise<void> | void;

/**
 * The endpoint's restrictions: Tables wherever upstream installs a TableConvertor (the
 * resource and its `/status`), the metadata forms everywhere.
 */
function restrictionsFor(route: ResourceRoute, naming: Naming): EndpointRestrictions {
  const sub = route.target.subresource;
  return resourceEndpointRestrictions({ metaGroup: naming.groups.meta, table: sub === undefined || sub === 'status' });
}

/**
 * The patch of a PATCH request: the JSON-based types and YAML apply through body.ts, and with
 * the CBOR gate `application/apply-patch+cbor` (the decoded object is the applied
 * configuration). The JSON, merge and strategic types have no CBOR form: 415, as any unknown
 * type, listing what is accepted.
 */
async function readPatch(exchange: Exchange, codecs: Codecs): Promise<{ patch: Patch; report?: DecodeReport }> {
  const req = exchange.request;
  const contentType = req.headers['content-type'] ?? '';
  const mediaType = contentType.split(';')[0]!.trim();
  const cbor = featuresOf(codecs).cbor ? codecs.get(CBOR_MEDIA_TYPE) : undefined;
  if (cbor && mediaType === APPLY_PATCH_CBOR_MEDIA_TYPE) {
    const body = await req.readBody(MAX_REQUEST_BODY_BYTES);
    try {
      const value = cbor.decode(body);
      withinLimits(() => checkDecodedLimits(value));
      return { patch: { type: 'apply', body: value } };
    } catch (err) {
      throw badRequest(`error decoding CBOR: ${(err as Error).message}`);
    }
  }
  if (cbor && !PATCH_MEDIA_TYPES.has(mediaType)) throw unsupportedMediaType([...PATCH_MEDIA_TYPES.keys(), APPLY_PATCH_CBOR_MEDIA_TYPE]);
  const type = patchTypeOf(contentType);
  return decodePatch(type, await req.readBody(MAX_REQUEST_BODY_BYTES));
}

/**
 * The core's view of one request. The abort signal is built only when something reads it
 * (most requests end before anything listens for an abort); a class keeps the getter on the
 * prototype, where an object literal with a getter would be built the slow way every request.
 */
class DoorContext implements RequestContext {
  userAgent?: string;
  decodeReport?: DecodeReport;

  constructor(
    readonly user: RequestContext['user'],
    readonly warnings: string[],
    readonly annotate: RequestContext['annotate'],
    private readonly request: { readonly signal: AbortSignal },
  ) {}

  get signal(): AbortSignal {
    return this.request.signal;
  }
}

export function createResourceHandler(options: ResourceHandlerOptions): ResourceHandler {
  const { core, naming, index } = options;
  const watchTimeout = options.watchTimeoutMs ?? (() => defaultWatchTimeoutMs());
  const clock = options.clock ?? systemClock;
  const metrics = options.metrics;
  // One per gateway (this handler is its router's): its watchers share the events they frame.
  const framedEvents = new FramedEvents();
  const watchEvents = metrics
    ? (def: ResourceDefinition) => {
        const labels = { group: def.group, version: def.version, kind: def.kind };
        const events = metrics.watchEvents.labels(labels);
        const sizes = metrics.watchEventSizes.labels(labels);
        return (_event: WatchEvent, bytes: number) => {
          events.inc();
          sizes.observe(bytes);
        };
      }
    : undefined;
  // Codecs built without explicit gates follow the server's gates (CBOR, compression).
  const gates = options.features;
  const ownCodecs = options.codecs.features === undefined && gates !== undefined;
  const codecs = ownCodecs ? gatewayCodecs(naming, encodingFeatures(gates)) : options.codecs;
  const metaCodecs = metaCodecsOf(codecs);
  const allCodecs = codecs;
  const unstructuredCodecs = createCodecs(
    [...codecs.values()].filter((c) => c.mediaType !== naming.mediaTypes.protobuf),
    codecs.features,
  );

  /**
   * A get the core answers within the call (from the watch cache) is answered within it too;
   * everything else goes on in `act`. Not async, so its throws are the caller's to turn into
   * rejections (`rejectingThrows` below).
   */
  const serve = (exchange: Exchange, info: ResourceRequestInfo): Promise<void> | void => {
    const req = exchange.request;
    const route = resolveResourceRoute(info, req.method, index);
    const { target } = route;
    if (route.definition.deprecation) signalDeprecation(exchange, route.definition, info, naming, options.metrics);
    const ctx: RequestContext = new DoorContext(userOf(exchange), exchange.warnings, exchange.annotate, req);
    if (req.headers['user-agent']) ctx.userAgent = req.headers['user-agent'];
    const restrictions = restrictionsFor(route, naming);
    // Custom resources are served as upstream's CRD handler serves them: no protobuf envelope.
    const codecs = route.definition.custom ? unstructuredCodecs : allCodecs;
    const output = negotiateOutput(req, codecs, restrictions);

    /**
     * Upstream transformResponseObject: convert as asked, then write with the meta codecs,
     * negotiated again; nothing acceptable there is a raw-JSON 406.
     */
    /**
     * `json`: the object's JSON answer, where the write already made it (WriteResult.json).
     * Not async: called only from `serve`, whose promise takes whatever this throws.
     */
    const respond = (status: number, value: unknown, json?: () => Buffer): void | Promise<void> => {
      if (!output.convert) return writeObject(exchange, status, value, output, undefined, json);
      const converted = convertObject(value, output.convert, { definition: route.definition, naming, now: clock.now(), query: req.query });
      const again = negotiateMediaTypeOptions(req.headers.accept, metaCodecs, restrictions);
      if (!again) {
        writeRawJson(exchange, 406, orderedStatus(notAcceptable(mediaTypesOf(metaCodecs)).status));
        return;
      }
      const written: MediaTypeOptions = { ...again, pretty: output.pretty || again.pretty };
      if (output.contentEncoding) written.contentEncoding = output.contentEncoding;
      return writeObject(exchange, status, converted, written);
    };

    if (route.action === 'get') {
      const getOptions: GetOptions = {};
      const rv = queryString(req.query, 'resourceVersion');
      if (rv) getOptions.resourceVersion = rv;
      const found = core.getNow ? core.getNow(target, getOptions, ctx) : core.get(target, getOptions, ctx);
      if (found instanceof Promise) return found.then((obj) => respond(200, obj));
      return respond(200, found);
    }
    return act();

    async function act(): Promise<void> {
      switch (route.action) {
        case 'list':
        case 'watch': {
          const parsed = parseListOptions(req.query, naming);
          if (route.action === 'list' && !parsed.watch) return respond(200, await core.list(target, parsed.options, ctx));
          const listOptions = { ...parsed.options };
          if (route.watchName !== undefined) {
            const byName = `metadata.name=${route.watchName}`;
            listOptions.fieldSelector = listOptions.fieldSelector ? `${listOptions.fieldSelector},${byName}` : byName;
          }
          await serveWatch(exchange, {
            core,
            codecs,
            target,
            options: listOptions,
            ctx,
            defaultTimeoutMs: watchTimeout(),
            clock,
            restrictions,
            framedEvents,
            conversion: { definition: route.definition, naming, metaCodecs },
            ...(watchEvents ? { onSent: watchEvents(route.definition) } : {}),
            ...(options.openWatches ? { openWatches: options.openWatches } : {}),
          });
          return;
        }
        case 'create':
        case 'update': {
          const codec = bodyCodec(req, codecs);
          const body = await req.readBody(MAX_REQUEST_BODY_BYTES);
          const writeOptions = parseWriteOptions(req.query, naming, route.action === 'create' ? 'CreateOptions' : 'UpdateOptions');
          const { object, report } = decodeObject(codec, body);
          if (report) ctx.decodeReport = report;
          // Decoded for this request alone and checked against the limits (body.ts): handed over,
          // the core changes it without a copy, and the answer may be the watch cache's object.
          const owned = handOver(object, DECODED);
          if (route.action === 'create') {
            const result = await core.create(target, owned, writeOptions, ctx);
            return respond(201, result.object, result.json);
          }
          const result = await core.update(target, owned, writeOptions, ctx);
          return respond(result.created ? 201 : 200, result.object);
        }
        case 'patch': {
          const { patch, report } = await readPatch(exchange, codecs);
          if (report) ctx.decodeReport = report;
          const writeOptions = parseWriteOptions(req.query, naming, 'PatchOptions', patch.type);
          // Handed over as a create's or update's body: the object it makes may be the cache's.
          const result = await core.patch(target, handOver(patch, DECODED), writeOptions, ctx);
          return respond(result.created ? 201 : 200, result.object);
        }
        case 'delete': {
          const deleteOptions = parseDeleteOptions(await readOptionalBody(req, codecs), req.query, naming);
          const result = await core.delete(target, deleteOptions, ctx);
          return respond(result.httpStatus, result.object);
        }
        case 'deletecollection': {
          const parsed = parseListOptions(req.query, naming);
          const deleteOptions = parseDeleteOptions(await readOptionalBody(req, codecs), req.query, naming);
          return respond(200, await core.deleteCollection(target, parsed.options, deleteOptions, ctx));
        }
      }
    }
  };

  const handler: ResourceHandler = (exchange, info) => {
    try {
      return serve(exchange, info);
    } catch (err) {
      return Promise.reject(err);
    }
  };
  if (!ownCodecs) return handler;
  // Errors must be written with the same (gated) codecs the response would have used.
  return (exchange, info) =>
    handler(exchange, info)?.catch((err: unknown) => {
      if (!StatusError.is(err)) throw err;
      writeError(exchange, err, codecs);
    });
}
