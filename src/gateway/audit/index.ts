/**
 * Step 5: audit, as upstream's WithAudit: after authentication, the policy decides the
 * request's level from the requesting user and the request info; an audited request gets an
 * `Event` (`audit.<domain>/v1`, upstream's schema and field order) at each stage the policy
 * keeps — `RequestReceived`, `ResponseStarted` (watches), `ResponseComplete`, `Panic` — handed
 * to the sink. `Request` adds the request body as `requestObject`, `RequestResponse` the
 * response body as `responseObject` (JSON and YAML bodies; other encodings are left out).
 * Other steps add annotations through `exchange.annotate` (the authorization decision,
 * deprecated versions).
 */
import { gunzipSync } from 'node:zlib';
import YAML from 'yaml';
import type { Codecs } from '../codecs';
import { rfc3339Micro, type Clock } from '../../clock';
import type { UserInfo } from '../../core';
import type { Naming } from '../../naming';
import { StatusError, isStatus, unclassifiedError } from '../../status';
import { type Exchange, type GatewayRequest, type Handler, type RequestInfo, type Step, rejectingThrows } from '../types';
import { isLongRunning } from '../steps/metrics';
import type { ServerMetrics } from '../../metrics';
import { writeText } from '../respond';
import { type AuditDecision, type AuditPolicy, type AuditStage, evaluatePolicy } from './policy';

export { parseAuditPolicy, evaluatePolicy, type AuditPolicy, type AuditLevel, type AuditStage } from './policy';

/**
 * Where events go (the log file, the webhook). A sink answers `false`, or a promise of `false`,
 * for an event it could not record (only a blocking-strict backend does, upstream's only mode
 * that lets a failure reach the request); a promise makes the request wait for it (blocking).
 */
export type AuditSink = (event: AuditEvent) => AuditSinkResult;
export type AuditSinkResult = boolean | void | Promise<boolean>;

export interface AuditEvent {
  kind: 'Event';
  apiVersion: string;
  level: string;
  auditID: string;
  stage: AuditStage;
  requestURI: string;
  verb: string;
  user: UserInfo;
  impersonatedUser?: UserInfo;
  sourceIPs?: string[];
  userAgent?: string;
  objectRef?: Record<string, string>;
  responseStatus?: Record<string, unknown>;
  requestObject?: unknown;
  responseObject?: unknown;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}

export interface AuditOptions {
  policy: AuditPolicy;
  sink: AuditSink;
  naming: Naming;
  clock: Clock;
  /** The codecs request and response bodies are decoded with; default: the gateway's. */
  codecs?: Codecs;
  /** Where the audit counters go (upstream's apiserver_audit_*); none: not counted. */
  metrics?: ServerMetrics;
  /**
   * The sink blocks (the webhook's blocking modes): a response is finished only once its last
   * event is recorded, as a Go handler's buffered answer leaves only when the audit filter returns.
   */
  blocking?: boolean;
}

/** The largest body kept as requestObject/responseObject; bigger ones are left out. */
const MAX_CAPTURED_BYTES = 3 * 1024 * 1024;

function requestUri(req: GatewayRequest): string {
  const query = req.query.toString();
  return query ? `${req.path}?${query}` : req.path;
}

function objectRefOf(info: RequestInfo): Record<string, string> | undefined {
  if (!info.isResourceRequest) return undefined;
  const ref: Record<string, string> = {};
  if (info.resource) ref.resource = info.resource;
  if (info.namespace) ref.namespace = info.namespace;
  if (info.name) ref.name = info.name;
  if (info.apiGroup) ref.apiGroup = info.apiGroup;
  if (info.apiVersion) ref.apiVersion = info.apiVersion;
  if (info.subresource) ref.subresource = info.subresource;
  return ref;
}

/**
 * A body as an object, whatever its encoding, as upstream logs the decoded object: through the
 * gateway's codecs (JSON, YAML, protobuf, CBOR), else as JSON or YAML text (the patch types);
 * undefined when it does not decode.
 */
function decodeBody(bytes: Buffer, contentType: string | undefined, codecs: Codecs, omitManagedFields: boolean): unknown {
  const media = contentType?.split(';')[0]?.trim().toLowerCase() ?? 'application/json';
  let value: unknown;
  try {
    const codec = codecs.get(media);
    if (codec) value = codec.decode(bytes);
    else if (media.endsWith('json')) value = JSON.parse(bytes.toString('utf8'));
    else if (media.endsWith('yaml')) value = YAML.parse(bytes.toString('utf8'));
    else return undefined;
  } catch {
    return undefined;
  }
  if (omitManagedFields && typeof value === 'object' && value !== null) {
    const meta = (value as { metadata?: Record<string, unknown> }).metadata;
    if (meta && 'managedFields' in meta) {
      const { managedFields: _dropped, ...rest } = meta;
      value = { ...(value as object), metadata: rest };
    }
  }
  return value;
}

export function auditStep(options: AuditOptions & { codecs: Codecs }): Step {
  const apiVersion = `${options.naming.group('audit')}/v1`;
  return (next) =>
    rejectingThrows((exchange) => {
      const user = exchange.user!;
      const info = exchange.info!;
      const decision = evaluatePolicy(options.policy, user, info);
      options.metrics?.audit.levels.inc({ level: decision.level });
      if (decision.level === 'None') return next(exchange);
      return audited(next, exchange, user, info, decision, options, apiVersion);
    });
}

async function audited(
  next: Handler,
  exchange: Exchange,
  user: UserInfo,
  info: RequestInfo,
  decision: AuditDecision,
  options: AuditOptions & { codecs: Codecs },
  apiVersion: string,
): Promise<void> {
  const { request } = exchange;
  const received = rfc3339Micro(options.clock.now());
  const objectRef = objectRefOf(info);
  const annotations: Record<string, string> = {};
  exchange.annotate = (key, value) => void (annotations[key] = value);
  const withBodies = decision.level === 'Request' || decision.level === 'RequestResponse';
  let requestBytes: Buffer | undefined;
  const responseChunks: Buffer[] = [];
  let responseBytes = 0;
  let responseType: string | undefined;
  let responseEncoding: string | undefined;
  let started = false;
  const emit = (stage: AuditStage, extra: Partial<AuditEvent> = {}): AuditSinkResult => {
    if (decision.omitStages.has(stage)) return true;
    const impersonated = exchange.user && exchange.user !== user ? exchange.user : undefined;
    const event: AuditEvent = {
      kind: 'Event',
      apiVersion,
      level: decision.level,
      auditID: exchange.id ?? '',
      stage,
      requestURI: requestUri(request),
      verb: info.verb,
      user,
      ...(impersonated ? { impersonatedUser: impersonated } : {}),
      ...(request.remoteAddress ? { sourceIPs: [request.remoteAddress.replace(/^::ffff:/, '')] } : {}),
      ...(request.headers['user-agent'] ? { userAgent: request.headers['user-agent'] } : {}),
      ...(objectRef ? { objectRef } : {}),
      ...extra,
      requestReceivedTimestamp: received,
      stageTimestamp: rfc3339Micro(options.clock.now()),
      ...(Object.keys(annotations).length ? { annotations: { ...annotations } } : {}),
    };
    options.metrics?.audit.events.inc();
    return options.sink(event);
  };
  // A blocking backend holds the request until its first event is recorded; a blocking-strict
  // one that could not record it fails the request, as upstream's WithAudit does (no later
  // stage is audited then).
  let first = emit('RequestReceived');
  if (first instanceof Promise) first = await first;
  if (first === false) {
    options.metrics?.audit.rejected.inc();
    // Upstream answers with Go's http.Error (its responsewriters.InternalError), not a Status.
    const message = `Internal Server Error: ${JSON.stringify(requestUri(request))}: failed to store audit event`;
    const error = unclassifiedError(message.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'), 500);
    writeText(exchange, error.code, `${error.status.message}\n`);
    return;
  }

  const real = exchange.response;
  const watch = isLongRunning(info);
  const capture = decision.level === 'RequestResponse' && !watch;
  const holdEnd = options.blocking === true && !watch;
  let held: { chunk: Uint8Array | string | undefined } | undefined;
  let completedStage = false;
  const onStart = () => {
    if (started) return;
    started = true;
    // Upstream sends ResponseStarted for long-running requests only.
    if (watch) emit('ResponseStarted', { responseStatus: { metadata: {}, code: real.statusCode } });
  };
  function keep(chunk: Uint8Array | string): void {
    const b = typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    responseBytes += b.length;
    if (responseBytes <= MAX_CAPTURED_BYTES) responseChunks.push(b);
  }
  // A Metadata-level request that is not a watch needs no wrapper. The others are swapped in
  // place (one exchange shape for every later step).
  if (capture || watch || holdEnd)
    exchange.response = {
      get headersSent() {
        return real.headersSent;
      },
      get statusCode() {
        return real.statusCode;
      },
      setHeader: (name, value) => {
        const lower = name.toLowerCase();
        if (lower === 'content-type') responseType = String(value);
        if (lower === 'content-encoding') responseEncoding = String(value);
        real.setHeader(name, value);
      },
      writeHead: (status) => real.writeHead(status),
      flushHeaders: () => {
        onStart();
        real.flushHeaders();
      },
      write: (chunk) => {
        onStart();
        if (capture) keep(chunk);
        return real.write(chunk);
      },
      // Captured bodies are kept from `write`: framed chunks would go past it.
      ...(!capture && real.chunkWriter ? { chunkWriter: () => real.chunkWriter!() } : {}),
      drain: () => real.drain(),
      end: (chunk) => {
        if (capture && chunk !== undefined) keep(chunk);
        // Held only while the request is the handler's: an error the outer steps write after
        // the last event goes straight out.
        if (holdEnd && !completedStage) held = { chunk };
        else real.end(chunk);
      },
      abort: () => real.abort(),
      // A held answer has not been written yet: nothing to wait for before the audit step ends it.
      whenFlushed: () => (held ? undefined : real.whenFlushed()),
    };
  if (withBodies) {
    const readBody = request.readBody.bind(request);
    exchange.request = {
      method: request.method,
      path: request.path,
      query: request.query,
      headers: request.headers,
      peerCertificate: request.peerCertificate,
      remoteAddress: request.remoteAddress,
      // A connection the aggregator's proxy may take over (its body is not read then).
      upgrade: request.upgrade,
      get signal() {
        return request.signal;
      },
      readBody: async (limit: number) => {
        const body = await readBody(limit);
        requestBytes = body;
        return body;
      },
    };
  }

  let failure: unknown;
  try {
    await next(exchange);
  } catch (err) {
    failure = err;
    throw err;
  } finally {
    const extra: Partial<AuditEvent> = {};
    const status = failure !== undefined ? StatusError.from(failure).status : undefined;
    const code = status?.code ?? real.statusCode;
    extra.responseStatus = status ? { metadata: {}, status: status.status, message: status.message, reason: status.reason, code } : { metadata: {}, code };
    if (withBodies && requestBytes && requestBytes.length <= MAX_CAPTURED_BYTES) {
      const object = decodeBody(requestBytes, request.headers['content-type'], options.codecs, decision.omitManagedFields);
      if (object !== undefined) extra.requestObject = object;
    }
    if (capture && responseBytes > 0 && responseBytes <= MAX_CAPTURED_BYTES) {
      let bytes: Buffer | undefined = Buffer.concat(responseChunks);
      if (responseEncoding === 'gzip') {
        try {
          bytes = gunzipSync(bytes);
        } catch {
          bytes = undefined;
        }
      }
      const object = bytes && decodeBody(bytes, responseType, options.codecs, decision.omitManagedFields);
      if (object !== undefined) {
        extra.responseObject = object;
        if (isStatus(object) && code >= 400)
          extra.responseStatus = { metadata: {}, status: object.status, message: object.message, reason: object.reason, code };
      }
    }
    const completed = emit(failure !== undefined && !StatusError.is(failure) ? 'Panic' : 'ResponseComplete', extra);
    // A blocking backend: the request ends once its last event is recorded.
    if (completed instanceof Promise) await completed;
    completedStage = true;
    if (held) real.end(held.chunk);
  }
}
