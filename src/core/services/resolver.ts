/**
 * Reaching a Service: one resolver for the aggregator's proxy, admission webhooks and
 * conversion webhooks, with upstream's rules (apiserver's `ResolveCluster` and
 * `ResolveEndpoint`, kube-aggregator's cluster-IP and endpoint resolvers, and the loopback
 * resolver for the `kubernetes` Service). An ExternalName Service resolves to its external
 * name and the reference's port; any other to its cluster IP and the Service port the
 * reference names, or, with `--enable-aggregator-routing`, to a ready endpoint address. The
 * caller verifies TLS against its `caBundle` for `serverName`, `<name>.<namespace>.svc`, as
 * upstream's webhook and proxy transports do. docs/SERVICES.md says how to reach a server on the
 * host (an ExternalName Service: cluster IPs are not routable without a service proxy).
 */
import type { ApiObject } from '../api';
import { serviceUnavailable, statusError } from '../../status';

/** The `kubernetes` Service in the default namespace: the API servers, as every pod reaches them. */
export const KUBERNETES_SERVICE = 'kubernetes';

/** What a webhook's `clientConfig.service` or an APIService's `spec.service` names. */
export interface ServiceReference {
  namespace: string;
  name: string;
  /** Default 443, as every upstream reference defaults it. */
  port?: number;
}

/** Where a reference leads: connect to `host:port`, verify the certificate for `serverName`. */
export interface ResolvedService {
  host: string;
  port: number;
  /** `<name>.<namespace>.svc`: the name the serving certificate must carry. */
  serverName: string;
  /** `host:port` as a URL authority (an IPv6 address in brackets). */
  authority: string;
}

export interface ServiceResolver {
  /** Rejects with a StatusError (NotFound for a missing Service, ServiceUnavailable otherwise), in upstream's words. */
  resolve(ref: ServiceReference): Promise<ResolvedService>;
}

/** Reads one core/v1 object (`services`, `endpoints`); undefined when it does not exist. */
export type ServiceObjectReader = (resource: 'services' | 'endpoints', namespace: string, name: string) => Promise<ApiObject | undefined>;

export interface ServiceResolverOptions {
  read: ServiceObjectReader;
  /** `--enable-aggregator-routing`: a ready endpoint instead of the cluster IP. */
  endpointRouting?: boolean;
  /**
   * This server's own address, for the `kubernetes` Service in `default` on port 443 (upstream's
   * loopback resolver): the server reaches itself without a service proxy. Asked at each
   * resolve, as a port chosen at listen time is known only once the server listens.
   */
  loopback?: () => { host: string; port: number; namespace: string } | undefined;
  /** Picks an index below `n` (endpoint subsets and addresses are picked at random, as upstream). */
  random?: (n: number) => number;
}

interface ResolvablePort {
  name?: string;
  port?: number;
}
interface ResolvableService extends ApiObject {
  spec?: { type?: string; clusterIP?: string; externalName?: string; ports?: ResolvablePort[] };
}
interface ResolvableEndpoints extends ApiObject {
  subsets?: { addresses?: { ip?: string }[]; ports?: { name?: string; port?: number }[] }[];
}

const DEFAULT_PORT = 443;

function resolved(host: string, port: number, ref: ServiceReference): ResolvedService {
  return { host, port, serverName: `${ref.name}.${ref.namespace}.svc`, authority: host.includes(':') ? `[${host}]:${port}` : `${host}:${port}` };
}

/** upstream's findServicePort: the Service port whose number the reference names. */
function findServicePort(svc: ResolvableService, port: number): ResolvablePort {
  const found = (svc.spec?.ports ?? []).find((p) => p.port === port);
  if (!found) throw serviceUnavailable(`no service port ${port} found for service "${svc.metadata?.name ?? ''}"`);
  return found;
}

/** A Go error that is no API status (upstream's resolvers return `fmt.Errorf`): a 500's message. */
const plainError = (message: string) => statusError('InternalError', message);

export function createServiceResolver(options: ServiceResolverOptions): ServiceResolver {
  const random = options.random ?? ((n: number) => Math.floor(Math.random() * n));
  const service = async (ref: ServiceReference): Promise<ResolvableService> => {
    const svc = await options.read('services', ref.namespace, ref.name);
    // The lister's NotFound names the singular resource.
    if (!svc) throw statusError('NotFound', `service "${ref.name}" not found`);
    return svc as ResolvableService;
  };

  const byClusterIP = async (ref: ServiceReference, port: number): Promise<ResolvedService> => {
    const svc = await service(ref);
    const spec = svc.spec ?? {};
    switch (spec.type) {
      case 'ClusterIP':
      case 'LoadBalancer':
      case 'NodePort': {
        if (spec.type === 'ClusterIP' && spec.clusterIP === 'None') throw plainError('cannot route to service with ClusterIP "None"');
        const svcPort = findServicePort(svc, port);
        return resolved(spec.clusterIP ?? '', svcPort.port ?? port, ref);
      }
      case 'ExternalName':
        return resolved(spec.externalName ?? '', port, ref);
      default:
        throw plainError(`unsupported service type "${spec.type ?? ''}"`);
    }
  };

  const byEndpoint = async (ref: ServiceReference, port: number): Promise<ResolvedService> => {
    const svc = await service(ref);
    const spec = svc.spec ?? {};
    // kube-aggregator's endpoint resolver sends an ExternalName Service to its name still.
    if (spec.type === 'ExternalName') return resolved(spec.externalName ?? '', port, ref);
    if (spec.type !== 'ClusterIP' && spec.type !== 'LoadBalancer' && spec.type !== 'NodePort')
      throw plainError(`unsupported service type "${spec.type ?? ''}"`);
    const svcPort = findServicePort(svc, port);
    const eps = (await options.read('endpoints', ref.namespace, ref.name)) as ResolvableEndpoints | undefined;
    if (!eps) throw statusError('NotFound', `endpoints "${ref.name}" not found`);
    const subsets = eps.subsets ?? [];
    if (subsets.length === 0) throw serviceUnavailable(`no endpoints available for service "${ref.name}"`);
    const start = random(subsets.length);
    for (let i = 0; i < subsets.length; i++) {
      const subset = subsets[(start + i) % subsets.length]!;
      const addresses = subset.addresses ?? [];
      if (addresses.length === 0) continue;
      const epPort = (subset.ports ?? []).find((p) => (p.name ?? '') === (svcPort.name ?? ''));
      if (epPort) return resolved(addresses[random(addresses.length)]!.ip ?? '', epPort.port ?? 0, ref);
    }
    throw serviceUnavailable(`no endpoints available for service "${ref.name}"`);
  };

  return {
    async resolve(ref) {
      const port = ref.port ?? DEFAULT_PORT;
      if (!ref.name || !ref.namespace || !port) throw plainError('cannot resolve an empty service name or namespace or port');
      const loop = options.loopback?.();
      if (loop && ref.namespace === loop.namespace && ref.name === KUBERNETES_SERVICE && port === DEFAULT_PORT) {
        return resolved(loop.host, loop.port, ref);
      }
      return options.endpointRouting ? byEndpoint(ref, port) : byClusterIP(ref, port);
    },
  };
}
