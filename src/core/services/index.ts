/**
 * Services in the core: reaching one (resolver.ts) and, around their writes, the cluster IPs
 * and node ports they are given (allocation.ts), as upstream's service REST storage does.
 */
export {
  createServiceResolver,
  KUBERNETES_SERVICE,
  type ResolvedService,
  type ServiceObjectReader,
  type ServiceReference,
  type ServiceResolver,
} from './resolver';

export { DEFAULT_NODE_PORT_RANGE, DEFAULT_SERVICE_CIDR, ServiceAllocation, parseNodePortRange, ServiceCIDR } from './allocation';
import { DEFAULT_SERVICE_CIDR, ServiceCIDR } from './allocation';
import { KUBERNETES_SERVICE } from './resolver';

/**
 * The names a generated serving certificate holds for the `kubernetes` Service, as upstream's
 * self-signed one does: its in-cluster DNS names and the first address of the Service range, so
 * a webhook or APIService reference to `default/kubernetes` verifies.
 */
export function kubernetesServiceNames(clusterIPRange: string | undefined): string[] {
  const cidr = new ServiceCIDR(clusterIPRange || DEFAULT_SERVICE_CIDR);
  return [`${KUBERNETES_SERVICE}.default.svc`, `${KUBERNETES_SERVICE}.default`, KUBERNETES_SERVICE, cidr.ipAt(0)];
}

/** How a core serves Services (the server's flags). */
export interface ServiceOptions {
  /** `--service-cluster-ip-range` (default 10.0.0.0/24); its first address is the `kubernetes` Service's. */
  clusterIPRange?: string;
  /** `--service-node-port-range` (default 30000-32767). */
  nodePortRange?: string;
  /** `--enable-aggregator-routing`: references lead to a ready endpoint rather than the cluster IP. */
  endpointRouting?: boolean;
  /**
   * This server's own address: the `kubernetes` Service's port 443 leads to it (upstream's
   * loopback resolver), whose target port is this port. A server whose port is chosen at listen
   * time gives it to `Core.ready` instead; without either the core keeps no `kubernetes` Service.
   */
  loopback?: ServingAddress;
}

/** Where this server listens: the `kubernetes` Service leads there. */
export interface ServingAddress {
  host: string;
  port: number;
}
