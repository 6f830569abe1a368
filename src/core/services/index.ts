/**
 * Services in the core: reaching one (resolver.ts) and, around their writes, the cluster IPs
 * and node ports they are given (allocation.ts), as upstream's service REST storage does.
 */
export { createServiceResolver, type ResolvedService, type ServiceObjectReader, type ServiceReference, type ServiceResolver } from './resolver';

/** How a core serves Services (the server's flags). */
export interface ServiceOptions {
  /** `--enable-aggregator-routing`: references lead to a ready endpoint rather than the cluster IP. */
  endpointRouting?: boolean;
  /** This server's own address, which the `kubernetes` Service's port 443 leads to (upstream's loopback resolver). */
  loopback?: { host: string; port: number };
}
