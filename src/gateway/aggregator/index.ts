/**
 * The aggregation layer (upstream's kube-aggregator, in front of this server's own routing;
 * docs/AGGREGATION.md): the APIServices followed through `CoreApi`, local ones kept for every
 * served group version, remote ones proxied, probed for availability and merged into discovery.
 */
import { randomUUID } from 'node:crypto';
import type { Clock } from '../../clock';
import type { CoreApi, RequestContext } from '../../core';
import type { Naming } from '../../naming';
import type { ResourceIndex } from '../resource-index';
import { writeObject } from '../respond';
import { negotiateOutput, type Codecs } from '../codecs';
import type { Exchange, Step } from '../types';
import type { APIGroup } from '../discovery/legacy';
import type { APIGroupDiscovery } from '../discovery/aggregated';
import { AvailabilityController } from './availability';
import { LocalAPIServices } from './local-apiservices';
import { aggregatorStep } from './proxy';
import { APIServiceRegistrations } from './registrations';
import { RemoteDiscovery, remoteAPIGroup } from './remote-discovery';
import { RemoteOpenApiParts } from './remote-openapi';
import { fetchFromAPIService, type ProxyClientCertificate, type ServiceResolver } from './transport';
import { aggregatedContentType } from '../discovery/aggregated';
import type { RemoteOpenApi } from '../openapi';
import type { APIService } from '../../core';

export type { ProxyClientCertificate, ResolvedService, ServiceResolver } from './transport';
export { builtinPriorities, desiredLocalAPIServices, CUSTOM_GROUP_PRIORITY } from './local-apiservices';
export { AVAILABILITY_RESYNC_MS } from './availability';

/** What the server gives the aggregator. */
export interface AggregatorOptions {
  /** Where a Service reference leads (the service resolver). */
  resolver: ServiceResolver;
  /** The proxy client certificate, read on each use so a rotated file is picked up. */
  proxyClient?: () => ProxyClientCertificate | undefined;
  /** How long an extension server has to start answering before the request is 503 (default 30 s). */
  responseTimeoutMs?: number;
  log?: (message: string) => void;
}

/** The extra groups discovery lists, as the aggregator knows them. */
export interface RemoteGroups {
  /** Grows when what the others return changes. */
  generation(): number;
  legacy(): APIGroup[];
  aggregated(): APIGroupDiscovery[];
  /** The extension servers' OpenAPI, merged into this server's documents. */
  openapi?: RemoteOpenApi;
}

export interface Aggregator {
  readonly step: Step;
  readonly discovery: RemoteGroups;
  /** Resolves when the APIServices are listed and the local ones synced, and every check under way ended (tests). */
  settled(): Promise<void>;
  stop(): void;
}

/** Who the discovery manager and the OpenAPI downloader are to extension servers (upstream's users, no groups). */
const DISCOVERY_USER = { username: 'system:kube-aggregator' };
const OPENAPI_USER = { username: 'system:aggregator' };
/** upstream's discovery manager gives an extension server 5 s; its OpenAPI downloader a minute. */
const DISCOVERY_TIMEOUT_MS = 5_000;
const OPENAPI_TIMEOUT_MS = 60_000;

/** The identity the aggregator's own writes and reads use inside this server. */
const AGGREGATOR_CONTEXT: RequestContext = { user: { username: 'system:apiserver', groups: ['system:masters'] } };

export function createAggregator(
  options: AggregatorOptions & {
    api: CoreApi;
    naming: Naming;
    clock: Clock;
    index: ResourceIndex;
    codecs: Codecs;
    onIndexChange: (listener: () => void) => () => void;
  },
): Aggregator {
  const { api, naming, clock, index } = options;
  const ctx = AGGREGATOR_CONTEXT;
  const registrations = new APIServiceRegistrations(api, naming, clock, ctx);
  const proxyClient = options.proxyClient ?? (() => undefined);
  const fetcher = (user: { username: string }, timeoutMs: number) => (apiService: APIService, path: string, accept: string) =>
    fetchFromAPIService({ apiService, resolver: options.resolver, proxyClient, clock, path, accept, user, timeoutMs });
  // Aggregated discovery as upstream's manager asks for it: v2, then v2beta1, each as JSON.
  const aggregatedAccept = ['v2', 'v2beta1'].map((v) => aggregatedContentType('application/json', naming, v as 'v2' | 'v2beta1')).join(',');
  const remoteDiscovery = new RemoteDiscovery(fetcher(DISCOVERY_USER, DISCOVERY_TIMEOUT_MS), aggregatedAccept, options.log);
  const remoteOpenApi = new RemoteOpenApiParts(fetcher(OPENAPI_USER, OPENAPI_TIMEOUT_MS), clock, () => registrations.remoteGroups(), options.log);
  const local = new LocalAPIServices({ api, naming, clock, ctx, index, registrations, log: options.log });
  const stopIndex = options.onIndexChange(() => local.schedule());
  const availability = new AvailabilityController({
    api,
    naming,
    clock,
    ctx,
    registrations,
    resolver: options.resolver,
    proxyClient,
    log: options.log,
    onChecked: (apiService, available) => {
      remoteDiscovery.refresh(apiService, available);
      remoteOpenApi.refresh(apiService, available);
    },
  });
  registrations.onChange(() => {
    const remote = new Set(registrations.remoteGroups().flatMap((g) => g.versions.map((a) => a.metadata?.name ?? '')));
    remoteDiscovery.forget(remote);
    remoteOpenApi.forget(remote);
  });

  const loopHeader = { name: 'X-Keelson-Aggregator', value: randomUUID() };
  const serveGroup = (exchange: Exchange, group: string): boolean => {
    if (index.group(group)) return false;
    const remote = registrations.remoteGroup(group);
    if (!remote) return false;
    writeObject(exchange, 200, remoteAPIGroup(remote), negotiateOutput(exchange.request, options.codecs));
    return true;
  };
  const step = aggregatorStep({
    // A remote APIService is proxied even for a group version this server serves itself, as
    // upstream's proxy handler proxies whatever APIService names a Service.
    remote: (group, version) => registrations.remote(group, version),
    serveGroup,
    proxy: { resolver: options.resolver, proxyClient, clock, responseTimeoutMs: options.responseTimeoutMs, loopHeader },
  });
  return {
    step,
    discovery: {
      generation: () => registrations.generation * 1_000_003 + remoteDiscovery.generation,
      legacy: () =>
        registrations
          .remoteGroups()
          .filter((g) => !index.group(g.name))
          .map((g) => {
            const { kind: _kind, apiVersion: _apiVersion, ...group } = remoteAPIGroup(g);
            return group;
          }),
      aggregated: () => remoteDiscovery.groups(registrations.remoteGroups().filter((g) => !index.group(g.name))),
      openapi: remoteOpenApi,
    },
    async settled() {
      await registrations.synced;
      await local.settled();
      await availability.settled();
      await remoteDiscovery.settled();
      await remoteOpenApi.settled();
    },
    stop() {
      stopIndex();
      local.stop();
      availability.stop();
      registrations.stop();
    },
  };
}
