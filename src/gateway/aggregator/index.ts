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
import type { ProxyClientCertificate, ServiceResolver } from './transport';

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
}

export interface Aggregator {
  readonly step: Step;
  readonly discovery: RemoteGroups;
  /** Resolves when the APIServices are listed and the local ones synced, and every check under way ended (tests). */
  settled(): Promise<void>;
  stop(): void;
}

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
  const remoteDiscovery = new RemoteDiscovery();
  const local = new LocalAPIServices({ api, naming, clock, ctx, index, registrations, log: options.log });
  const stopIndex = options.onIndexChange(() => local.schedule());
  const proxyClient = options.proxyClient ?? (() => undefined);
  const availability = new AvailabilityController({
    api,
    naming,
    clock,
    ctx,
    registrations,
    resolver: options.resolver,
    proxyClient,
    log: options.log,
    onChecked: (apiService, document) => remoteDiscovery.update(apiService, document),
  });
  registrations.onChange(() => remoteDiscovery.forget(new Set(registrations.remoteGroups().flatMap((g) => g.versions.map((a) => a.metadata?.name ?? '')))));

  const loopHeader = { name: 'X-Keelson-Aggregator', value: randomUUID() };
  const serveGroup = (exchange: Exchange, group: string): boolean => {
    if (index.group(group)) return false;
    const remote = registrations.remoteGroup(group);
    if (!remote) return false;
    writeObject(exchange, 200, remoteAPIGroup(remote), negotiateOutput(exchange.request, options.codecs));
    return true;
  };
  const step = aggregatorStep({
    remote: (group, version) => (index.hasGroupVersion(group, version) ? undefined : registrations.remote(group, version)),
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
    },
    async settled() {
      await registrations.synced;
      await local.settled();
      await availability.settled();
    },
    stop() {
      stopIndex();
      local.stop();
      availability.stop();
      registrations.stop();
    },
  };
}
