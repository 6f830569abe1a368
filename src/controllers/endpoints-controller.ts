/**
 * The endpoints controller, as upstream's (kube-controller-manager's `endpoint`): for every
 * Service with a selector, an Endpoints object of the same name listing the selected pods' IPs
 * (ready pods under `addresses`, the others under `notReadyAddresses`, every one with its node
 * and a reference to the pod) on the ports each Service port reaches (`targetPort` by number or
 * by a container port's name); a headless Service without ports lists bare addresses. Subsets are
 * packed as upstream's RepackSubsets does (one subset per set of addresses sharing the same
 * ports), at most 1000 addresses (`endpoints.<key domain>/over-capacity: truncated` beyond), the
 * Service's labels copied, the last-change trigger time annotated. The Endpoints of a deleted
 * Service are deleted; those of a Service without a selector are left to whoever writes them.
 * An ordinary API client of the core.
 */
import {
  type EndpointAddress,
  type EndpointPort,
  type Endpoints,
  type EndpointSubset,
  followResource,
  type InformerChange,
  type InformerView,
  isPodReady,
  type RequestContext,
  type ResourceTarget,
} from '../core';
import { StatusError } from '../status';
import { jsonEqual } from '../util/json-values';
import type { ApiControllerOptions } from './options';
import {
  findPort,
  hasSelector,
  headlessLabel,
  isServiceIPSet,
  keyOf,
  lastChangeTriggerTimeAnnotation,
  podIPsOf,
  type PodLike,
  podReference,
  podsTarget,
  selectedPods,
  serviceFamily,
  servicesOfPod,
  servicesTarget,
  type ServiceLike,
  shouldPodBeInEndpoints,
  shouldSetHostname,
  TriggerTimeTracker,
} from './service-endpoints';
import { WorkQueue } from './work-queue';

/** upstream's maxCapacity: addresses an Endpoints object holds before it is truncated. */
export const MAX_ENDPOINTS_CAPACITY = 1000;

const endpointsTarget = { group: '', version: 'v1', resource: 'endpoints' } as const;

/** An address with its readiness, on one port (undefined: the headless sentinel without ports). */
interface PortedAddress {
  address: EndpointAddress;
  ready: boolean;
  port: EndpointPort | undefined;
}

const portKey = (p: EndpointPort | undefined) => (p ? JSON.stringify([p.name ?? '', p.port, p.protocol ?? '', p.appProtocol ?? null]) : '');
const addressKey = (a: EndpointAddress) => `${a.ip}/${a.targetRef?.uid ?? ''}`;

/** upstream's LessEndpointAddress: by IP text, then by the target's uid (none first). */
function compareAddresses(a: EndpointAddress, b: EndpointAddress): number {
  if (a.ip !== b.ip) return a.ip < b.ip ? -1 : 1;
  const ua = a.targetRef?.uid;
  const ub = b.targetRef?.uid;
  if (ua === ub) return 0;
  if (ua === undefined) return -1;
  if (ub === undefined) return 1;
  return ua < ub ? -1 : 1;
}

/**
 * upstream's RepackSubsets: each port's addresses (ready wins over not ready for the same
 * address), then one subset per identical set of addresses with all the ports they share.
 * Addresses are sorted as upstream's; ports and subsets by their text, where upstream sorts by a
 * hash of their Go value (an order no client relies on).
 */
export function repackSubsets(entries: readonly PortedAddress[]): EndpointSubset[] {
  const byPort = new Map<string, { port: EndpointPort | undefined; addresses: Map<string, { address: EndpointAddress; ready: boolean }> }>();
  for (const e of entries) {
    const k = portKey(e.port);
    let slot = byPort.get(k);
    if (!slot) byPort.set(k, (slot = { port: e.port, addresses: new Map() }));
    const ak = addressKey(e.address);
    const seen = slot.addresses.get(ak);
    if (!seen || (e.ready && !seen.ready)) slot.addresses.set(ak, { address: e.address, ready: e.ready || !!seen?.ready });
  }
  const bySet = new Map<string, { addresses: Array<{ address: EndpointAddress; ready: boolean }>; ports: EndpointPort[] }>();
  for (const { port, addresses } of byPort.values()) {
    const list = [...addresses.values()].sort((a, b) => compareAddresses(a.address, b.address));
    const k = JSON.stringify(list.map((a) => [addressKey(a.address), a.ready]));
    let subset = bySet.get(k);
    if (!subset) bySet.set(k, (subset = { addresses: list, ports: [] }));
    if (port) subset.ports.push(port);
  }
  const subsets = [...bySet.values()].map(({ addresses, ports }) => {
    const ready = addresses.filter((a) => a.ready).map((a) => a.address);
    const notReady = addresses.filter((a) => !a.ready).map((a) => a.address);
    const sortedPorts = ports.sort((a, b) => (portKey(a) < portKey(b) ? -1 : portKey(a) > portKey(b) ? 1 : 0));
    return {
      ...(ready.length ? { addresses: ready } : {}),
      ...(notReady.length ? { notReadyAddresses: notReady } : {}),
      ...(sortedPorts.length ? { ports: sortedPorts } : {}),
    };
  });
  const text = (s: EndpointSubset) => JSON.stringify(s);
  return subsets.sort((a, b) => (text(a) < text(b) ? -1 : text(a) > text(b) ? 1 : 0));
}

/**
 * upstream's truncateEndpoints: keep MAX_ENDPOINTS_CAPACITY addresses, ready ones first, each
 * subset keeping its share of what is kept.
 */
function truncate(subsets: EndpointSubset[], total: number): EndpointSubset[] {
  const ready = subsets.reduce((n, s) => n + (s.addresses?.length ?? 0), 0);
  const readyRoom = Math.min(ready, MAX_ENDPOINTS_CAPACITY);
  const notReadyRoom = MAX_ENDPOINTS_CAPACITY - readyRoom;
  const notReady = total - ready;
  let readyLeft = readyRoom;
  let notReadyLeft = notReadyRoom;
  return subsets.map((s, i) => {
    const last = i === subsets.length - 1;
    const r = s.addresses?.length ?? 0;
    const n = s.notReadyAddresses?.length ?? 0;
    const keepReady = Math.min(r, last ? readyLeft : Math.floor((r * readyRoom) / Math.max(ready, 1)));
    const keepNotReady = Math.min(n, last ? notReadyLeft : Math.floor((n * notReadyRoom) / Math.max(notReady, 1)));
    readyLeft -= keepReady;
    notReadyLeft -= keepNotReady;
    return {
      ...(keepReady ? { addresses: s.addresses!.slice(0, keepReady) } : {}),
      ...(keepNotReady ? { notReadyAddresses: s.notReadyAddresses!.slice(0, keepNotReady) } : {}),
      ...(s.ports ? { ports: s.ports } : {}),
    };
  });
}

export type EndpointsControllerOptions = ApiControllerOptions;

export class EndpointsController {
  private readonly services: InformerView;
  private readonly pods: InformerView;
  private readonly endpoints: InformerView;
  private readonly queue: WorkQueue<string>;
  private readonly ctx: RequestContext;
  private readonly triggerTimes = new TriggerTimeTracker();

  constructor(private readonly options: EndpointsControllerOptions) {
    this.ctx = { user: options.user, userAgent: 'keelson-controller-manager/endpoint-controller' };
    const watch: RequestContext = { ...this.ctx, user: options.watchAs ?? options.user };
    this.queue = new WorkQueue<string>(
      (k) => k,
      (k) => this.sync(k),
      { name: 'endpoint', metrics: options.queueMetrics, clock: options.clock },
    );
    this.services = followResource(options, servicesTarget, watch, (c) => (c ? this.queue.add(keyOf(c.object)) : this.all()));
    this.pods = followResource(options, podsTarget, watch, (c) => (c ? this.onPod(c) : this.all()));
    // An Endpoints object changed or removed by someone else is put back.
    this.endpoints = followResource(options, endpointsTarget, watch, (c) => (c ? this.onEndpoints(c) : undefined));
  }

  start(): void {
    this.queue.startWhen(
      Promise.all([this.services.synced, this.pods.synced, this.endpoints.synced]),
      (err) => this.options.log?.(`endpoint-controller: informers failed to start: ${err.message}`),
      () => {
        this.all();
        // upstream's checkLeftoverEndpoints: Endpoints left by a Service deleted while no controller ran.
        for (const ep of this.endpoints.objects.values()) if (!this.services.objects.has(keyOf(ep))) this.queue.add(keyOf(ep));
      },
    );
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  stop(): void {
    this.queue.stop();
    this.services.stop();
    this.pods.stop();
    this.endpoints.stop();
  }

  private all(): void {
    for (const s of this.services.objects.values()) this.queue.add(keyOf(s));
  }

  private onPod(change: InformerChange): void {
    const namespace = change.object.metadata?.namespace ?? '';
    for (const k of servicesOfPod(this.services.inNamespace(namespace), change.object, change.previous)) this.queue.add(k);
  }

  private onEndpoints(change: InformerChange): void {
    const service = this.services.objects.get(keyOf(change.object)) as ServiceLike | undefined;
    if (service && hasSelector(service)) this.queue.add(keyOf(change.object));
  }

  private target(namespace: string, name?: string): ResourceTarget {
    return { ...endpointsTarget, namespace, ...(name ? { name } : {}) };
  }

  private async sync(key: string): Promise<void> {
    const [namespace, name] = key.split('/') as [string, string];
    const service = this.services.objects.get(key) as ServiceLike | undefined;
    if (!service) {
      this.triggerTimes.forget(key);
      if (!this.endpoints.objects.has(key)) return;
      try {
        await this.options.core.delete(this.target(namespace, name), {}, this.ctx);
      } catch (err) {
        if (!StatusError.is(err, 'NotFound')) throw err;
      }
      return;
    }
    if (!hasSelector(service)) return;
    const pods = selectedPods(service, this.pods.inNamespace(namespace));
    const triggerTime = this.triggerTimes.compute(key, service, pods);
    const { subsets, total } = this.subsetsFor(service, pods);
    const current = this.endpoints.objects.get(key) as Endpoints | undefined;
    const over = total > MAX_ENDPOINTS_CAPACITY;
    const kept = over ? truncate(subsets, total) : subsets;
    const labels = this.labelsFor(service);
    const naming = this.options.naming;
    const overCapacity = naming.key('over-capacity', 'endpoints');
    if (
      current &&
      jsonEqual(current.subsets ?? [], kept) &&
      jsonEqual(current.metadata?.labels ?? {}, labels) &&
      (current.metadata?.annotations?.[overCapacity] === 'truncated') === over
    )
      return;
    const annotations = { ...(current?.metadata?.annotations ?? {}) };
    const triggerKey = lastChangeTriggerTimeAnnotation(naming);
    if (triggerTime) annotations[triggerKey] = triggerTime;
    else delete annotations[triggerKey];
    if (over) annotations[overCapacity] = 'truncated';
    else delete annotations[overCapacity];
    const { annotations: _old, ...meta } = current?.metadata ?? { name, namespace };
    const metadata = { ...meta, labels, ...(Object.keys(annotations).length ? { annotations } : {}) };
    const body: Endpoints = { apiVersion: 'v1', kind: 'Endpoints', metadata, ...(kept.length ? { subsets: kept } : {}) };
    try {
      if (current) await this.options.core.update(this.target(namespace, name), body, {}, this.ctx);
      else await this.options.core.create(this.target(namespace), body, {}, this.ctx);
    } catch (err) {
      // The namespace is going away: nothing to keep (upstream's HasStatusCause NamespaceTerminating).
      if (StatusError.is(err, 'Forbidden') && /being terminated/.test((err as Error).message)) return;
      // Someone else wrote it meanwhile: the informer brings their version and the retry starts from it.
      throw err;
    }
  }

  /** The Service's subsets from its pods, and how many addresses they hold before truncation. */
  private subsetsFor(service: ServiceLike, pods: readonly PodLike[]): { subsets: EndpointSubset[]; total: number } {
    const entries: PortedAddress[] = [];
    const publishNotReady = !!service.spec?.publishNotReadyAddresses;
    const family = serviceFamily(service);
    const ports = service.spec?.ports ?? [];
    for (const pod of pods) {
      if (!shouldPodBeInEndpoints(pod, publishNotReady)) continue;
      const ip = podIPsOf(pod, family)[0];
      if (!ip) continue;
      const address: EndpointAddress = {
        ip,
        ...(shouldSetHostname(pod, service) ? { hostname: pod.spec!.hostname } : {}),
        nodeName: pod.spec?.nodeName ?? '',
        targetRef: podReference(pod),
      };
      const ready = publishNotReady || isPodReady(pod);
      if (ports.length === 0) {
        // A headless Service without ports lists its pods' bare addresses.
        if (!isServiceIPSet(service)) entries.push({ address, ready, port: undefined });
        continue;
      }
      for (const sp of ports) {
        const port = findPort(pod, sp);
        if (port === undefined) continue;
        entries.push({
          address,
          ready,
          port: {
            ...(sp.name ? { name: sp.name } : {}),
            port,
            protocol: sp.protocol ?? 'TCP',
            ...(sp.appProtocol !== undefined ? { appProtocol: sp.appProtocol } : {}),
          },
        });
      }
    }
    const subsets = repackSubsets(entries);
    const total = subsets.reduce((n, s) => n + (s.addresses?.length ?? 0) + (s.notReadyAddresses?.length ?? 0), 0);
    return { subsets, total };
  }

  /** The Service's labels, with `service.<key domain>/headless` on a headless Service's. */
  private labelsFor(service: ServiceLike): Record<string, string> {
    const labels: Record<string, string> = { ...(service.metadata?.labels ?? {}) };
    const headless = headlessLabel(this.options.naming);
    if (isServiceIPSet(service)) delete labels[headless];
    else labels[headless] = '';
    return labels;
  }
}
