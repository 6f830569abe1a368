/**
 * Starts the lease endpoint reconciler (controllers/endpoint-reconciler.ts) for this server: the
 * address it lists is `--advertise-address`, else `--bind-address`, else (that being loopback or
 * unspecified, which Endpoints refuse) the host's first non-internal address, as upstream's
 * ChooseHostInterface picks the default interface's.
 */
import os from 'node:os';
import type { CoreApi, UserInfo } from '../core';
import type { Clock } from '../clock';
import type { Naming } from '../naming';
import type { Store } from '../store';
import { LeaseEndpointReconciler } from '../controllers';
import { isLinkLocalUnicast, isLoopback, isUnspecified, parseAddr } from '../util/go-netip';

export interface KubernetesEndpointsDeps {
  core: CoreApi;
  store: Store | undefined;
  naming: Naming;
  clock: Clock;
  user: UserInfo;
  log: (message: string) => void;
  /** The secure port the server listens on. */
  port: number;
}

/** An address a client elsewhere can reach: not loopback, unspecified or link-local. */
function routable(address: string | undefined): address is string {
  try {
    const ip = parseAddr(address ?? '');
    return !isLoopback(ip) && !isUnspecified(ip) && !isLinkLocalUnicast(ip);
  } catch {
    return false;
  }
}

/** `--advertise-address`, or the bind address, or the host's first non-internal IPv4 then IPv6 address. */
export function advertisedAddress(config: { advertiseAddress?: string; bindAddress: string }): string | undefined {
  if (config.advertiseAddress) return config.advertiseAddress;
  if (routable(config.bindAddress)) return config.bindAddress;
  const addresses = Object.values(os.networkInterfaces()).flatMap((list) => list ?? []);
  const pick = (family: string) => addresses.find((a) => !a.internal && a.family === family && routable(a.address))?.address;
  return pick('IPv4') ?? pick('IPv6');
}

/** The running reconciler, or undefined where there is no store (a gateway in front of a remote core) or no address. */
export function startKubernetesEndpoints(
  config: { advertiseAddress?: string; bindAddress: string },
  deps: KubernetesEndpointsDeps,
): LeaseEndpointReconciler | undefined {
  if (!deps.store) return undefined;
  const address = advertisedAddress(config);
  if (!address) {
    deps.log('the kubernetes Service gets no endpoints: no --advertise-address, and neither the bind address nor any interface is routable');
    return undefined;
  }
  const reconciler = new LeaseEndpointReconciler({ ...deps, store: deps.store, address });
  reconciler.start();
  return reconciler;
}
