/**
 * The `kubernetes` Service's endpoints, as upstream's lease endpoint reconciler
 * (`--endpoint-reconciler-type=lease`, kube-apiserver's default): every API server on the store
 * keeps a lease key of its advertised address (`/registry/masterleases/<ip>`) renewed every 10 s,
 * and writes `default/kubernetes` Endpoints and EndpointSlice listing the address of every
 * server whose lease is live, on the secure port, so several servers on one store all appear
 * and a stopped one drops out once its lease has gone 15 s unrenewed.
 *
 * Upstream gives the key an etcd lease with a 15 s TTL. The store has no TTLs (both backends
 * offer the same narrow interface), so expiry is measured as client-go's leader election
 * measures it: on the observer's own clock, from when it first saw the key's current revision.
 * Each renewal is a write (a new revision), so a live server's key never stays still for the
 * TTL; a key that does is deleted, guarded by that revision, by whichever server sees it first.
 * A server stopping cleanly removes its own key and rewrites the endpoints without itself.
 */
import type { ApiObject, CoreApi, Endpoints, EndpointSlice, RequestContext, ResourceTarget, UserInfo } from '../core';
import { KUBERNETES_SERVICE } from '../core';
import type { Clock } from '../clock';
import type { Naming } from '../naming';
import { StatusError } from '../status';
import { StoreError, type Store } from '../store';
import { jsonEqual } from '../util/json-values';

/** Upstream's master lease TTL and the period it is renewed at (`--endpoint-reconciler-type=lease`). */
export const MASTER_LEASE_TTL_MS = 15_000;
export const MASTER_LEASE_RENEW_MS = 10_000;
/** Where the leases live in the store (upstream's `/registry/masterleases/`). */
export const MASTER_LEASES_PREFIX = '/registry/masterleases/';

export interface EndpointReconcilerOptions {
  core: CoreApi;
  store: Store;
  naming: Naming;
  clock: Clock;
  /** Who writes the endpoints (the server itself). */
  user: UserInfo;
  /** `--advertise-address`: the address the server lists for itself. */
  address: string;
  /** The secure port listed beside it. */
  port: number;
  ttlMs?: number;
  renewMs?: number;
  log?: (message: string) => void;
}

export class LeaseEndpointReconciler {
  private readonly ctx: RequestContext;
  private readonly ttlMs: number;
  /** Each lease key seen, at which revision, since when on this server's clock. */
  private readonly seen = new Map<string, { revision: number; since: number }>();
  private cancel?: () => void;
  /** One pass at a time; a tick that finds one running waits for the next. */
  private running?: Promise<void>;
  private stopped = false;

  constructor(private readonly options: EndpointReconcilerOptions) {
    this.ctx = { user: options.user, userAgent: 'keelson-apiserver/endpoint-reconciler' };
    this.ttlMs = options.ttlMs ?? MASTER_LEASE_TTL_MS;
  }

  get key(): string {
    return `${MASTER_LEASES_PREFIX}${this.options.address}`;
  }

  start(): void {
    this.tick();
    this.cancel = this.options.clock.setInterval(() => this.tick(), this.options.renewMs ?? MASTER_LEASE_RENEW_MS);
  }

  /** Renews the lease and writes the endpoints now; resolves when done (tests step the clock and wait). */
  tick(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    this.running ??= this.reconcile()
      .catch((err: unknown) => this.options.log?.(`endpoint reconciler: ${(err as Error).message}`))
      .finally(() => {
        this.running = undefined;
      });
    return this.running;
  }

  /** Stops renewing; removes this server's lease and its address from the endpoints (upstream's RemoveEndpoints). */
  async stop(): Promise<void> {
    this.stopped = true;
    this.cancel?.();
    await this.running;
    try {
      await this.options.store.delete(this.key).catch((err: unknown) => {
        if (!StoreError.is(err, 'not-found')) throw err;
      });
      await this.writeEndpoints(await this.liveAddresses());
    } catch (err) {
      this.options.log?.(`endpoint reconciler, removing ${this.options.address}: ${(err as Error).message}`);
    }
  }

  private async reconcile(): Promise<void> {
    await this.renew();
    await this.writeEndpoints(await this.liveAddresses());
  }

  /** Writes this server's lease key again: a new revision tells the others it is alive. */
  private async renew(): Promise<void> {
    const { store } = this.options;
    const value = new TextEncoder().encode(JSON.stringify({ ip: this.options.address, port: this.options.port }));
    const current = await store.get(this.key);
    try {
      if (current.kv) await store.update(this.key, value, current.kv.modRevision);
      else await store.create(this.key, value);
    } catch (err) {
      // Another write came in between (a restart of this server elsewhere): the next renewal wins.
      if (!StoreError.is(err, 'conflict') && !StoreError.is(err, 'exists')) throw err;
    }
  }

  /** The addresses whose lease moved within the TTL (this server's always); stale keys deleted. */
  private async liveAddresses(): Promise<string[]> {
    const now = this.options.clock.now();
    const { kvs } = await this.options.store.list(MASTER_LEASES_PREFIX);
    const live: string[] = this.stopped ? [] : [this.options.address];
    const present = new Set<string>();
    for (const kv of kvs) {
      present.add(kv.key);
      if (kv.key === this.key) continue;
      const seen = this.seen.get(kv.key);
      if (!seen || seen.revision !== kv.modRevision) this.seen.set(kv.key, { revision: kv.modRevision, since: now });
      else if (now - seen.since >= this.ttlMs) {
        await this.options.store.delete(kv.key, kv.modRevision).catch((err: unknown) => {
          if (!StoreError.is(err, 'not-found') && !StoreError.is(err, 'conflict')) throw err;
        });
        this.seen.delete(kv.key);
        continue;
      }
      live.push(kv.key.slice(MASTER_LEASES_PREFIX.length));
    }
    for (const key of this.seen.keys()) if (!present.has(key)) this.seen.delete(key);
    return [...new Set(live)].sort();
  }

  private target(resource: 'endpoints' | 'endpointslices' | 'services', name?: string): ResourceTarget {
    const group = resource === 'endpointslices' ? this.options.naming.groups.discovery : '';
    return { group, version: 'v1', resource, namespace: this.options.naming.namespaces.default, ...(name ? { name } : {}) };
  }

  private async getOrUndefined(target: ResourceTarget): Promise<ApiObject | undefined> {
    try {
      return await this.options.core.get(target, {}, this.ctx);
    } catch (err) {
      if (StatusError.is(err, 'NotFound')) return undefined;
      throw err;
    }
  }

  /** `default/kubernetes` Endpoints and EndpointSlice naming these addresses, once the Service exists. */
  private async writeEndpoints(addresses: readonly string[]): Promise<void> {
    // The Service comes first (upstream's bootstrap controller makes it before it reconciles).
    if (!(await this.getOrUndefined(this.target('services', KUBERNETES_SERVICE)))) return;
    const { naming, port } = this.options;
    const ports = [{ name: 'https', port, protocol: 'TCP' }];
    const subsets = addresses.length ? [{ addresses: addresses.map((ip) => ({ ip })), ports }] : [];
    const endpoints: Endpoints = {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: KUBERNETES_SERVICE, labels: { [naming.key('skip-mirror', 'endpointslice')]: 'true' } },
      ...(subsets.length ? { subsets } : {}),
    };
    await this.put(this.target('endpoints', KUBERNETES_SERVICE), endpoints, (current) => jsonEqual((current as Endpoints).subsets ?? [], subsets));
    const addressType = addresses.length && addresses.every((a) => a.includes(':')) ? 'IPv6' : 'IPv4';
    const slice: EndpointSlice = {
      apiVersion: `${naming.groups.discovery}/v1`,
      kind: 'EndpointSlice',
      metadata: { name: KUBERNETES_SERVICE, labels: { [naming.key('service-name')]: KUBERNETES_SERVICE } },
      addressType,
      endpoints: addresses.map((ip) => ({ addresses: [ip], conditions: { ready: true } })),
      ports: addresses.length ? ports : [],
    };
    await this.put(
      this.target('endpointslices', KUBERNETES_SERVICE),
      slice,
      (current) =>
        (current as EndpointSlice).addressType === addressType &&
        jsonEqual((current as EndpointSlice).endpoints ?? [], slice.endpoints) &&
        jsonEqual((current as EndpointSlice).ports ?? [], slice.ports),
    );
  }

  /** Creates the object, or updates it from its current version unless `same` says it already holds what is wanted. */
  private async put(target: ResourceTarget, wanted: ApiObject, same: (current: ApiObject) => boolean): Promise<void> {
    const current = await this.getOrUndefined(target);
    if (current && same(current)) return;
    const { name: _name, ...at } = target;
    if (!current) {
      try {
        await this.options.core.create(at, wanted, {}, this.ctx);
      } catch (err) {
        // Another server made it meanwhile: the next pass compares with theirs.
        if (!StatusError.is(err, 'AlreadyExists')) throw err;
      }
      return;
    }
    const metadata = { ...current.metadata, labels: { ...current.metadata?.labels, ...wanted.metadata?.labels } };
    try {
      await this.options.core.update(target, { ...wanted, metadata }, {}, this.ctx);
    } catch (err) {
      if (!StatusError.is(err, 'Conflict')) throw err;
    }
  }
}
