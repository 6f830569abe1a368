/**
 * The last step: send a request to the handler that serves its path. Resource requests go to
 * the core through the resource handler; discovery, `/version` and health are answered here.
 * Paths under a served API root that name nothing get upstream's 404 Status (go-restful's
 * service error handler); paths outside every root get Go's plain `404 page not found`
 * (upstream's NotFoundHandler).
 */
import type { Clock } from '../../clock';
import type { Naming } from '../../naming';
import type { CoreApi } from '../../core';
import type { Codecs } from '../codecs';
import type { FeatureGates } from '../../features';
import type { OpenWatches } from '../open-watches';
import type { ResourceIndex } from '../resource-index';
import type { ServerMetrics } from '../../metrics';
import { writeCacheable, writeRawJson, writeText } from '../respond';
import { DISCOVERY_CACHE_CONTROL, type IssuerDiscovery, JWKS_MEDIA_TYPE, JWKS_PATH, OPENID_CONFIGURATION_PATH } from '../../authn';
import { type Exchange, type Handler, type NonResourceRequestInfo, infoOf, rejectingThrows } from '../types';
import { createDiscoveryHandler, discoveryPathOf } from './discovery';
import { HEALTH_ENDPOINTS, type HealthChecks, type HealthEndpoint, serveHealth, serveHealthCheck } from './health';
import { createResourceHandler } from './resource';
import { methodNotAllowed } from './resource-route';
import { type VersionInfo, serveVersion } from './version';
import { createOpenApiHandler, isOpenApiPath } from '../openapi';
import type { RemoteGroups } from '../aggregator';
import type { FlowControl } from '../../flowcontrol';
import { serveFlowControlDump } from '../steps/priority-and-fairness';

export interface RouterOptions {
  core: CoreApi;
  /** The time watch timeouts run on, and tables' ages (default the system clock). */
  clock?: Clock;
  index: ResourceIndex;
  naming: Naming;
  codecs: Codecs;
  health: HealthChecks;
  version: VersionInfo;
  serverAddress: () => string;
  watchTimeoutMs?: () => number;
  features?: FeatureGates;
  /** Served at `/metrics` when present. */
  metrics?: ServerMetrics;
  /** The gateway's open watches, which shutdown ends. */
  openWatches?: OpenWatches;
  /** Service-account issuer discovery's documents for the address clients reach the server at; none when off. */
  issuerDiscovery?: (externalAddress: string) => IssuerDiscovery | undefined;
  /** The groups extension servers serve (the aggregator's), which discovery lists too. */
  remoteGroups?: RemoteGroups;
  /** Priority and fairness, whose `/debug/api_priority_and_fairness/` dumps are served when present. */
  flowControl?: FlowControl;
}

/** Go's http.NotFound. */
export function writeNotFoundPage(exchange: Exchange): void {
  writeText(exchange, 404, '404 page not found\n');
}

/**
 * Upstream's index at `/`: every served root path, sorted (metav1.RootPaths); the issuer
 * discovery paths when they are served.
 */
export function rootPaths(index: ResourceIndex, health: HealthChecks, issuerDiscovery = false): string[] {
  const paths = new Set<string>(['/api', '/apis', '/apis/', '/metrics', '/version']);
  if (issuerDiscovery) paths.add(OPENID_CONFIGURATION_PATH).add(JWKS_PATH);
  for (const group of index.groups()) {
    for (const version of group.versions) paths.add(group.name ? `/apis/${group.name}/${version}` : `/api/${version}`);
    if (group.name) paths.add(`/apis/${group.name}`);
  }
  for (const endpoint of HEALTH_ENDPOINTS) {
    paths.add(`/${endpoint}`);
    for (const check of health[endpoint]) paths.add(`/${endpoint}/${check.name}`);
  }
  return [...paths].sort();
}

/** Is the path under an API root upstream serves with go-restful (`/api`, `/apis/<served group>`)? */
function underServedRoot(path: string, index: ResourceIndex): boolean {
  // The path without its leading and trailing slashes, read segment by segment.
  let start = 0;
  while (path.charCodeAt(start) === 0x2f) start++;
  let end = path.length;
  while (end > start && path.charCodeAt(end - 1) === 0x2f) end--;
  const slash = path.indexOf('/', start);
  const first = slash < 0 || slash >= end ? path.slice(start, end) : path.slice(start, slash);
  if (first === 'api') return true;
  if (first !== 'apis') return false;
  if (slash < 0 || slash >= end) return true;
  const next = path.indexOf('/', slash + 1);
  const group = next < 0 || next >= end ? path.slice(slash + 1, end) : path.slice(slash + 1, next);
  return group !== '' && index.group(group) !== undefined;
}

function isGet(method: string): boolean {
  return method === 'GET' || method === 'HEAD';
}

export function createRouter(options: RouterOptions): Handler {
  const resources = createResourceHandler(options);
  const discovery = createDiscoveryHandler(options);
  const openapi = createOpenApiHandler({
    naming: options.naming,
    index: options.index,
    serverVersion: options.version.gitVersion,
    ...(options.remoteGroups?.openapi ? { remote: options.remoteGroups.openapi } : {}),
  });
  const { index, health } = options;

  // Resource requests (nearly all) go straight to their handler, with no promise of the
  // router's own; everything else is routed by `others`.
  return rejectingThrows((exchange) => {
    const info = infoOf(exchange);
    if (!info.isResourceRequest) return others(exchange, info);
    if (!underServedRoot(info.path, index)) return writeNotFoundPage(exchange);
    return resources(exchange, info);
  });

  async function others(exchange: Exchange, info: NonResourceRequestInfo): Promise<void> {
    const path = info.path;

    const discoveryPath = discoveryPathOf(path);
    if (discoveryPath) {
      if (!underServedRoot(path, index)) return writeNotFoundPage(exchange);
      if (!isGet(exchange.request.method)) throw methodNotAllowed();
      return discovery(exchange, discoveryPath);
    }
    if (path === '/' && isGet(exchange.request.method)) {
      const issuerDiscovery = options.issuerDiscovery?.(options.serverAddress()) !== undefined;
      return writeRawJson(exchange, 200, { paths: rootPaths(index, health, issuerDiscovery) });
    }
    if (path === '/version' || path === '/version/') {
      if (!isGet(exchange.request.method)) throw methodNotAllowed();
      return serveVersion(exchange, options.version);
    }
    if (path === '/metrics' && options.metrics) {
      if (!isGet(exchange.request.method)) throw methodNotAllowed();
      const { contentType, body } = await options.metrics.text();
      exchange.response.setHeader('Content-Type', contentType);
      exchange.response.writeHead(200);
      exchange.response.end(body);
      return;
    }
    // Priority and fairness' dumps, to callers authorized for the path (its step runs before authorization).
    if (options.flowControl && serveFlowControlDump(exchange, options.flowControl)) return;
    if (isOpenApiPath(path)) {
      if (!isGet(exchange.request.method)) throw methodNotAllowed();
      return openapi(exchange);
    }
    if (path === OPENID_CONFIGURATION_PATH || path === JWKS_PATH) {
      const documents = options.issuerDiscovery?.(options.serverAddress());
      if (documents) {
        if (!isGet(exchange.request.method)) throw methodNotAllowed();
        if (path === JWKS_PATH) return writeCacheable(exchange, JWKS_MEDIA_TYPE, documents.keySet, DISCOVERY_CACHE_CONTROL);
        return writeCacheable(exchange, 'application/json', documents.configuration, DISCOVERY_CACHE_CONTROL);
      }
    }
    const [, first, check, ...rest] = path.split('/');
    if ((HEALTH_ENDPOINTS as readonly string[]).includes(first) && rest.length === 0) {
      const endpoint = first as HealthEndpoint;
      if (check === undefined) return serveHealth(exchange, endpoint, health[endpoint]);
      const one = health[endpoint].find((c) => c.name === check);
      if (one) return serveHealthCheck(exchange, one);
    }
    return writeNotFoundPage(exchange);
  }
}
