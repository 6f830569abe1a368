/**
 * The HTTP gateway: HTTPS, the step pipeline, discovery and the resource handlers, in front of
 * a `CoreApi` (docs/ARCHITECTURE.md, "The path of one create"). `createGateway` gives the
 * socket-free handler (tests call it with plain objects); `startGateway` serves it over HTTPS
 * through Express.
 */
import { type Clock, systemClock } from '../clock';
import type { CoreApi, ResourceCatalog, ResourceDefinition } from '../core';
import type { Naming } from '../naming';
import type { FeatureGates } from '../features';
import type { Authenticator } from '../authn';
import { ResponseEnds, createExpressApp, createNodeListener, upgradeListener } from './express-adapter';
import type { HealthChecks } from './handlers/health';
import type { VersionInfo } from './handlers/version';
import { type RunningServer, type TlsMaterial, listenHttps } from './https-server';
import { type RequestLimits, createPipeline } from './pipeline';
import type { ServerMetrics } from '../metrics';
import type { FlowControl } from '../flowcontrol';
import type { AuditOptions } from './audit';
import type { RequestLogEntry } from './steps/request-log';
import { OpenWatches } from './open-watches';
import { ResourceIndex } from './resource-index';
import type { Authorizer } from './steps/authorization';
import type { Codecs } from './codecs';
import { type GatewayRequest, type GatewayResponse, afterNext, createExchange } from './types';
import { WriteTurns } from './write-turns';
import type { IssuerDiscovery } from '../authn';
import { type Aggregator, type AggregatorOptions, createAggregator } from './aggregator';
import { encodingFeatures, gatewayCodecs } from './codecs';

export type { HealthCheck, HealthChecks } from './handlers/health';
export { keelsonVersion, type VersionInfo } from './handlers/version';
export type { TlsMaterial, RunningServer } from './https-server';
export type { Authorizer, Decision, AuthorizationAttributes } from './steps/authorization';
export type { GatewayRequest, GatewayResponse, PeerCertificate } from './types';
export type { RequestLimits } from './pipeline';
export type { RequestLogEntry } from './steps/request-log';
export { parseAuditPolicy, type AuditEvent, type AuditSink, type AuditPolicy } from './audit';
export { OpenWatches } from './open-watches';

export interface GatewayOptions {
  core: CoreApi;
  /** The time request and watch timeouts run on, and tables' ages (default the system clock). */
  clock?: Clock;
  resources: readonly ResourceDefinition[];
  /** The served types as they change (custom resources); routes, discovery and OpenAPI follow it. Absent: `resources`, fixed. */
  catalog?: ResourceCatalog;
  naming: Naming;
  health: HealthChecks;
  version: VersionInfo;
  /** `host:port` advertised by `/api`. */
  serverAddress: () => string;
  codecs?: Codecs;
  authorizers?: readonly Authorizer[];
  watchTimeoutMs?: () => number;
  /** The server's feature gates (`--feature-gates`), for the codecs they switch (CBOR, compression). */
  features?: FeatureGates;
  /** The authenticator chain (src/authn); default: client certificates and anonymous requests. */
  authenticator?: Authenticator;
  /** Why a request was refused as unauthenticated, for the server log (never the client). */
  onUnauthenticated?: (reason: string) => void;
  /** Errors that were not StatusErrors (bugs), for the log. */
  /** Errors that became a 5xx, with the request's id (its `Audit-Id` header), for the log. */
  onUnexpectedError?: (err: unknown, request?: { id: string; method: string; path: string }) => void;
  /** Request metrics, and `/metrics`. */
  metrics?: ServerMetrics;
  /** In-flight limits and the request timeout; none when absent. */
  limits?: RequestLimits;
  /** API Priority and Fairness (src/flowcontrol); the in-flight counters of `limits` when absent. */
  flowControl?: FlowControl;
  /** Audit events per the policy; none when absent. */
  audit?: AuditOptions;
  /** One entry per answered request. */
  onRequestLogged?: (entry: RequestLogEntry) => void;
  /** Service-account issuer discovery (`/.well-known/openid-configuration`, `/openid/v1/jwks`); off when absent. */
  issuerDiscovery?: (externalAddress: string) => IssuerDiscovery | undefined;
  /** The watches this gateway serves, which `drain` ends; default a new set (a test passes its own to look in). */
  openWatches?: OpenWatches;
  /** Serve the aggregation layer (APIServices, docs/AGGREGATION.md); absent: no aggregator. */
  aggregator?: AggregatorOptions;
}

export interface Gateway {
  /** Serve one request: nothing when it was answered within the call, else the promise of its end; fails by rejecting, never a throw. */
  handle(request: GatewayRequest, response: GatewayResponse): Promise<void> | void;
  /**
   * Graceful shutdown's middle part: end every open watch cleanly (the clients see the stream
   * end and re-watch elsewhere) and wait, at most `timeoutMs`, for the other requests in flight
   * to answer. New requests are still served meanwhile; stop accepting them first.
   */
  drain(timeoutMs: number): Promise<void>;
  /** The aggregation layer, when served (`GatewayOptions.aggregator`). */
  readonly aggregator?: Aggregator;
}

export function createGateway(options: GatewayOptions): Gateway {
  const openWatches = options.openWatches ?? new OpenWatches();
  let inFlight = 0;
  let idle: (() => void) | undefined;
  const catalog = options.catalog;
  const index = new ResourceIndex(catalog?.resources ?? options.resources);
  catalog?.subscribe(() => index.replace(catalog.resources));
  const aggregator =
    options.aggregator &&
    createAggregator({
      ...options.aggregator,
      api: options.core,
      naming: options.naming,
      clock: options.clock ?? systemClock,
      index,
      codecs: options.codecs ?? gatewayCodecs(options.naming, options.features && encodingFeatures(options.features)),
      onIndexChange: (listener) => catalog?.subscribe(listener) ?? (() => undefined),
    });
  const pipeline = createPipeline({ ...options, index, openWatches, aggregator });
  const writeTurns = new WriteTurns();
  return {
    aggregator,
    handle(request, response) {
      inFlight++;
      return afterNext(pipeline, createExchange(request, response, writeTurns), (err) => {
        if (--inFlight === 0) idle?.();
        if (err !== undefined) throw err;
      });
    },
    async drain(timeoutMs) {
      aggregator?.stop();
      openWatches.closeAll();
      if (inFlight === 0) return;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        timer.unref?.();
        idle = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    },
  };
}

export interface StartGatewayOptions extends Omit<GatewayOptions, 'serverAddress'> {
  /** Defaults to `<host>:<listening port>`. */
  serverAddress?: () => string;
  tls: TlsMaterial;
  host: string;
  port: number;
  /**
   * `express` (default): requests pass through an Express 5 app whose one middleware is the
   * gateway. `node`: the HTTPS listener calls the gateway directly, without Express' per-request
   * work (measured at roughly 100 µs of CPU per request on this machine class).
   */
  adapter?: 'express' | 'node';
}

/** Serve the gateway over HTTPS; resolves once listening. */
export async function startGateway(options: StartGatewayOptions): Promise<RunningServer> {
  let port = options.port;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  const serverAddress = options.serverAddress ?? (() => `${host}:${port}`);
  const gateway = createGateway({ ...options, serverAddress });
  // This server's responses ended in one turn go out together, and its close waits for them.
  const ends = new ResponseEnds();
  const listener =
    options.adapter === 'node'
      ? createNodeListener(gateway.handle, ends, options.onUnexpectedError)
      : createExpressApp(gateway.handle, ends, options.onUnexpectedError);
  const server = await listenHttps({
    tls: options.tls,
    host: options.host,
    port: options.port,
    listener,
    // Upgrade requests take the same path; the aggregator's proxy switches them (docs/AGGREGATION.md).
    upgrade: upgradeListener(listener),
    drain: (ms) => gateway.drain(ms),
    whenEndsWritten: () => ends.whenWritten(),
  });
  port = server.port;
  return server;
}
