/**
 * Discovery, served by the gateway from the definitions (non-resource paths never reach the
 * core; docs/API.md, "Other endpoints"). On `/api` and `/apis` a client that asks for
 * `as=APIGroupDiscoveryList;g=apidiscovery...;v=v2` (or v2beta1) gets the aggregated document,
 * as upstream's WrappedHandler decides; everyone else gets the unaggregated documents.
 */
import type { Naming } from '../../naming';
import { pathNotFound } from '../../status';
import { type Codecs, type EndpointRestrictions, negotiateMediaTypeOptions, negotiateOutput, wantsPretty } from '../codecs';
import { aggregatedContentType, aggregatedDiscovery, apiGroup, apiGroupList, apiResourceList, apiVersions, isAggregatedDiscovery } from '../discovery';
import type { ResourceIndex } from '../resource-index';
import { writeObject } from '../respond';
import type { Exchange } from '../types';
import type { RemoteGroups } from '../aggregator';
import { deepFreeze } from '../../util/frozen';

export interface DiscoveryOptions {
  index: ResourceIndex;
  naming: Naming;
  codecs: Codecs;
  /** `host:port` advertised in APIVersions.serverAddressByClientCIDRs. */
  serverAddress: () => string;
  /** Groups extension servers serve (the aggregator's): `/apis` lists them after this server's own. */
  remoteGroups?: RemoteGroups;
}

/** The paths this handler owns, after trimming a trailing slash. */
export type DiscoveryPath =
  | { kind: 'versions' }
  | { kind: 'groups' }
  | { kind: 'group'; group: string }
  | { kind: 'resources'; group: string; version: string };

/** Classify `/api`, `/api/{v}`, `/apis`, `/apis/{g}`, `/apis/{g}/{v}`; undefined for anything else. */
export function discoveryPathOf(path: string): DiscoveryPath | undefined {
  const parts = path.replace(/^\/+|\/+$/g, '').split('/');
  if (parts[0] === 'api') {
    if (parts.length === 1) return { kind: 'versions' };
    if (parts.length === 2) return { kind: 'resources', group: '', version: parts[1] };
  } else if (parts[0] === 'apis') {
    if (parts.length === 1) return { kind: 'groups' };
    if (parts.length === 2) return { kind: 'group', group: parts[1] };
    if (parts.length === 3) return { kind: 'resources', group: parts[1], version: parts[2] };
  }
  return undefined;
}

export function createDiscoveryHandler(options: DiscoveryOptions): (exchange: Exchange, path: DiscoveryPath) => void {
  const { index, naming, codecs } = options;
  const aggregatedRestrictions: EndpointRestrictions = {
    allowsConversion: (convert, codec) =>
      isAggregatedDiscovery(convert, naming) && (codec.canEncode?.({ apiVersion: `${convert.group}/${convert.version}`, kind: convert.kind }) ?? true),
    allowsStreamSchema: () => false,
  };

  // Each document is built once per version of the index (custom resources change it).
  const memo = new Map<string, unknown>();
  const remote = options.remoteGroups;
  const generation = () => (remote ? `${index.generation}/${remote.generation()}` : index.generation);
  let builtFor = generation();
  const once = <T>(key: string, build: () => T): T => {
    if (builtFor !== generation()) {
      memo.clear();
      builtFor = generation();
    }
    if (!memo.has(key)) memo.set(key, build());
    return memo.get(key) as T;
  };

  return (exchange, path) => {
    const req = exchange.request;
    if (path.kind === 'versions' || path.kind === 'groups') {
      const chosen = negotiateMediaTypeOptions(req.headers.accept, codecs, aggregatedRestrictions);
      if (chosen && isAggregatedDiscovery(chosen.convert, naming)) {
        const version = chosen.convert.version;
        const root = path.kind === 'versions' ? 'api' : 'apis';
        const doc = once(`aggregated/${root}/${version}`, () => {
          const own = aggregatedDiscovery(index, naming, root, version);
          return remote && root === 'apis' ? deepFreeze({ ...own, items: [...own.items, ...remote.aggregated()] }) : own;
        });
        exchange.response.setHeader('Vary', 'Accept');
        const output = { ...chosen, pretty: chosen.pretty || wantsPretty(req) };
        writeObject(exchange, 200, doc, output, aggregatedContentType(chosen.codec.mediaType, naming, version));
        return;
      }
    }
    const output = negotiateOutput(req, codecs);
    switch (path.kind) {
      case 'versions':
        writeObject(exchange, 200, apiVersions(index, options.serverAddress()), output);
        return;
      case 'groups':
        writeObject(
          exchange,
          200,
          once('groups', () => {
            const own = apiGroupList(index);
            return remote ? { ...own, groups: [...own.groups, ...remote.legacy()] } : own;
          }),
          output,
        );
        return;
      case 'group': {
        const group = index.group(path.group);
        if (!group || path.group === '') throw pathNotFound();
        writeObject(exchange, 200, apiGroup(group), output);
        return;
      }
      case 'resources':
        if (!index.hasGroupVersion(path.group, path.version)) throw pathNotFound();
        writeObject(
          exchange,
          200,
          once(`resources/${path.group}/${path.version}`, () => apiResourceList(index, path.group, path.version)),
          output,
        );
        return;
    }
  };
}
