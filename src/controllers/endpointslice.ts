/**
 * The endpointslice controller, as upstream's (kube-controller-manager's `endpointslice`): for
 * every Service with a selector, EndpointSlices of its pods, named `<service>-<random>`,
 * labelled `<key domain>/service-name` and `endpointslice.<key domain>/managed-by:
 * endpointslice-controller.<group domain>` (with the Service's own labels), owned by the Service.
 * Each endpoint carries the pod's addresses of the slice's family, its conditions (`ready`
 * unless terminating, `serving` as the pod's readiness, `terminating`), node, zone and target;
 * terminating pods stay. One slice holds the endpoints that share a set of ports, at most 100
 * (upstream's `--max-endpoints-per-slice` default); a Service with none keeps one empty slice
 * (upstream's placeholder). The reconciler keeps slices whose endpoints are unchanged, updates
 * the ones that lost or changed endpoints (filling them up first), then creates new ones, and
 * deletes those left empty. Slices of a deleted Service go with it (garbage collector).
 */
import {
  type ApiObject,
  type Endpoint,
  type EndpointSlice,
  type EndpointSlicePort,
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

/** upstream's `--max-endpoints-per-slice` default. */
export const MAX_ENDPOINTS_PER_SLICE = 100;

type NodeLike = ApiObject;

export interface EndpointSliceControllerOptions extends ApiControllerOptions {
  /** `--max-endpoints-per-slice` (default 100). */
  maxEndpointsPerSlice?: number;
}

/** A slice's identity for the reconciler: its address type and its ports. */
const portsKey = (ports: readonly EndpointSlicePort[] | null | undefined) =>
  JSON.stringify(
    (ports ?? [])
      .map((p) => [p.name ?? '', p.protocol ?? '', p.port ?? null, p.appProtocol ?? null])
      .sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1)),
  );
/** An endpoint's identity: the pod it stands for. */
const endpointKey = (ep: Endpoint) => ep.targetRef?.uid || ep.addresses.join(',');

export class EndpointSliceController {
  private readonly services: InformerView;
  private readonly pods: InformerView;
  private readonly nodes: InformerView;
  private readonly slices: InformerView;
  private readonly queue: WorkQueue<string>;
  private readonly ctx: RequestContext;
  private readonly triggerTimes = new TriggerTimeTracker();
  private readonly maxPerSlice: number;
  private readonly group: string;
  private readonly managedBy: { key: string; value: string };
  private readonly serviceNameLabel: string;

  constructor(private readonly options: EndpointSliceControllerOptions) {
    const naming = options.naming;
    this.group = naming.groups.discovery;
    this.maxPerSlice = options.maxEndpointsPerSlice ?? MAX_ENDPOINTS_PER_SLICE;
    this.managedBy = { key: naming.key('managed-by', 'endpointslice'), value: naming.group('endpointslice-controller') };
    this.serviceNameLabel = naming.key('service-name');
    this.ctx = { user: options.user, userAgent: 'keelson-controller-manager/endpointslice-controller' };
    const watch: RequestContext = { ...this.ctx, user: options.watchAs ?? options.user };
    this.queue = new WorkQueue<string>(
      (k) => k,
      (k) => this.sync(k),
      { name: 'endpoint_slice', metrics: options.queueMetrics, clock: options.clock },
    );
    this.services = followResource(options, servicesTarget, watch, (c) => (c ? this.queue.add(keyOf(c.object)) : this.all()));
    this.pods = followResource(options, podsTarget, watch, (c) => (c ? this.onPod(c) : this.all()));
    // A node's zone labels the endpoints of its pods.
    this.nodes = followResource(options, { group: '', version: 'v1', resource: 'nodes' }, watch, () => undefined);
    this.slices = followResource(options, this.target(), watch, (c) => (c ? this.onSlice(c) : undefined));
  }

  start(): void {
    this.queue.startWhen(
      Promise.all([this.services.synced, this.pods.synced, this.nodes.synced, this.slices.synced]),
      (err) => this.options.log?.(`endpointslice-controller: informers failed to start: ${err.message}`),
      () => this.all(),
    );
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  stop(): void {
    this.queue.stop();
    this.services.stop();
    this.pods.stop();
    this.nodes.stop();
    this.slices.stop();
  }

  private all(): void {
    for (const s of this.services.objects.values()) this.queue.add(keyOf(s));
  }

  private onPod(change: InformerChange): void {
    const namespace = change.object.metadata?.namespace ?? '';
    for (const k of servicesOfPod(this.services.inNamespace(namespace), change.object, change.previous)) this.queue.add(k);
  }

  /** A slice this controller manages, changed or removed by anyone, brings its Service back. */
  private onSlice(change: InformerChange): void {
    const labels = change.object.metadata?.labels ?? {};
    const service = labels[this.serviceNameLabel];
    if (labels[this.managedBy.key] !== this.managedBy.value || !service) return;
    this.queue.add(`${change.object.metadata?.namespace ?? ''}/${service}`);
  }

  private target(namespace?: string, name?: string): ResourceTarget {
    return { group: this.group, version: 'v1', resource: 'endpointslices', ...(namespace ? { namespace } : {}), ...(name ? { name } : {}) };
  }

  /** The slices this controller keeps for one Service. */
  private slicesOf(namespace: string, service: string): EndpointSlice[] {
    return ([...this.slices.inNamespace(namespace)] as EndpointSlice[]).filter((s) => {
      const labels = s.metadata?.labels ?? {};
      return labels[this.managedBy.key] === this.managedBy.value && labels[this.serviceNameLabel] === service && !s.metadata?.deletionTimestamp;
    });
  }

  private async sync(key: string): Promise<void> {
    const [namespace, name] = key.split('/') as [string, string];
    const service = this.services.objects.get(key) as ServiceLike | undefined;
    if (!service || service.metadata?.deletionTimestamp) {
      // The garbage collector removes the slices through their owner reference.
      this.triggerTimes.forget(key);
      return;
    }
    if (!hasSelector(service)) return;
    const pods = selectedPods(service, this.pods.inNamespace(namespace));
    const triggerTime = this.triggerTimes.compute(key, service, pods);
    const addressType = serviceFamily(service) ?? 'IPv4';
    // The endpoints wanted, grouped by the ports they serve.
    const wanted = new Map<string, { ports: EndpointSlicePort[]; endpoints: Map<string, Endpoint> }>();
    for (const pod of pods) {
      if (!shouldPodBeInEndpoints(pod, true)) continue;
      const endpoint = this.endpointOf(pod, service, addressType);
      if (!endpoint) continue;
      const ports = this.portsOf(pod, service);
      const k = portsKey(ports);
      let group = wanted.get(k);
      if (!group) wanted.set(k, (group = { ports, endpoints: new Map() }));
      group.endpoints.set(endpointKey(endpoint), endpoint);
    }
    const existing = this.slicesOf(namespace, name).filter((s) => s.addressType === addressType);
    const stale = this.slicesOf(namespace, name).filter((s) => s.addressType !== addressType);
    const writes: Array<{ slice: EndpointSlice; create: boolean }> = [];
    const deletes: EndpointSlice[] = [...stale];
    for (const [k, group] of wanted) {
      const mine = existing.filter((s) => portsKey(s.ports) === k);
      this.reconcilePorts(service, addressType, group, mine, writes, deletes);
    }
    for (const s of existing) if (!wanted.has(portsKey(s.ports))) deletes.push(s);
    // A Service without endpoints keeps one empty slice (upstream's placeholder).
    const remaining = existing.length - deletes.filter((d) => d.addressType === addressType).length + writes.filter((w) => w.create).length;
    if (remaining === 0) {
      const placeholder = existing.find((s) => !s.endpoints?.length && !s.ports?.length);
      if (placeholder) deletes.splice(deletes.indexOf(placeholder), 1);
      else writes.push({ slice: this.newSlice(service, addressType, [], []), create: true });
    }
    for (const w of writes) this.decorate(w.slice, service, triggerTime);
    for (const w of writes) {
      if (w.create) await this.options.core.create(this.target(namespace), w.slice, {}, this.ctx);
      else await this.options.core.update(this.target(namespace, w.slice.metadata?.name), w.slice, {}, this.ctx);
    }
    for (const s of deletes) {
      try {
        await this.options.core.delete(this.target(namespace, s.metadata?.name), { preconditions: { uid: s.metadata?.uid } }, this.ctx);
      } catch (err) {
        if (!StatusError.is(err, 'NotFound') && !StatusError.is(err, 'Conflict')) throw err;
      }
    }
    // Labels of kept slices follow the Service's.
    for (const s of existing) {
      if (deletes.includes(s) || writes.some((w) => w.slice.metadata?.name === s.metadata?.name)) continue;
      const labels = this.labelsFor(service);
      if (jsonEqual(s.metadata?.labels ?? {}, labels)) continue;
      await this.options.core.update(this.target(namespace, s.metadata?.name), { ...s, metadata: { ...s.metadata, labels } }, {}, this.ctx);
    }
  }

  /**
   * One set of ports: slices keep their endpoints still wanted (updated where they changed),
   * the rest is placed in the slices that are written anyway, then in new ones.
   */
  private reconcilePorts(
    service: ServiceLike,
    addressType: string,
    group: { ports: EndpointSlicePort[]; endpoints: Map<string, Endpoint> },
    mine: readonly EndpointSlice[],
    writes: Array<{ slice: EndpointSlice; create: boolean }>,
    deletes: EndpointSlice[],
  ): void {
    const unplaced = new Map(group.endpoints);
    const updated: EndpointSlice[] = [];
    const unchanged: EndpointSlice[] = [];
    for (const slice of mine) {
      const kept: Endpoint[] = [];
      let changed = false;
      for (const ep of slice.endpoints ?? []) {
        const want = unplaced.get(endpointKey(ep));
        if (!want) {
          changed = true;
          continue;
        }
        unplaced.delete(endpointKey(ep));
        if (!jsonEqual(want, ep)) changed = true;
        kept.push(want);
      }
      if (kept.length === 0) deletes.push(slice);
      else if (changed) updated.push({ ...slice, endpoints: kept });
      else unchanged.push(slice);
    }
    const rest = [...unplaced.values()];
    // Fill the slices written anyway, fullest first, before making new ones.
    for (const slice of updated.sort((a, b) => (b.endpoints?.length ?? 0) - (a.endpoints?.length ?? 0))) {
      const room = this.maxPerSlice - (slice.endpoints?.length ?? 0);
      if (room > 0 && rest.length) slice.endpoints = [...(slice.endpoints ?? []), ...rest.splice(0, room)];
      writes.push({ slice, create: false });
    }
    // What fits in one unchanged slice goes into the fullest such (upstream's getSliceToFill).
    const fill = unchanged
      .filter((s) => rest.length > 0 && (s.endpoints?.length ?? 0) + rest.length <= this.maxPerSlice)
      .sort((a, b) => (b.endpoints?.length ?? 0) - (a.endpoints?.length ?? 0))[0];
    if (fill) writes.push({ slice: { ...fill, endpoints: [...(fill.endpoints ?? []), ...rest.splice(0)] }, create: false });
    while (rest.length) writes.push({ slice: this.newSlice(service, addressType, group.ports, rest.splice(0, this.maxPerSlice)), create: true });
  }

  private newSlice(service: ServiceLike, addressType: string, ports: EndpointSlicePort[], endpoints: Endpoint[]): EndpointSlice {
    const name = service.metadata?.name ?? '';
    // upstream's getEndpointSlicePrefix: `slice-` when `<service>-` is no valid prefix.
    const prefix = `${name}-`.length <= 253 - 5 ? `${name}-` : 'slice-';
    return {
      apiVersion: `${this.group}/v1`,
      kind: 'EndpointSlice',
      metadata: {
        generateName: prefix,
        namespace: service.metadata?.namespace,
        ownerReferences: [{ apiVersion: 'v1', kind: 'Service', name, uid: service.metadata?.uid ?? '', controller: true, blockOwnerDeletion: true }],
      },
      addressType,
      endpoints,
      ports,
    };
  }

  /** The labels and trigger-time annotation every slice written for the Service carries. */
  private decorate(slice: EndpointSlice, service: ServiceLike, triggerTime: string | undefined): void {
    const annotations = { ...(slice.metadata?.annotations ?? {}) };
    const k = lastChangeTriggerTimeAnnotation(this.options.naming);
    if (triggerTime) annotations[k] = triggerTime;
    else delete annotations[k];
    slice.metadata = { ...slice.metadata, labels: this.labelsFor(service), annotations };
    if (!Object.keys(annotations).length) delete slice.metadata.annotations;
  }

  /** upstream's setEndpointSliceLabels: the Service's labels, the two of this controller, and the headless mark. */
  private labelsFor(service: ServiceLike): Record<string, string> {
    const labels: Record<string, string> = { ...(service.metadata?.labels ?? {}) };
    labels[this.serviceNameLabel] = service.metadata?.name ?? '';
    labels[this.managedBy.key] = this.managedBy.value;
    const headless = headlessLabel(this.options.naming);
    if (isServiceIPSet(service)) delete labels[headless];
    else labels[headless] = '';
    return labels;
  }

  /** upstream's getEndpointPorts: each Service port the pod has, by name and protocol. */
  private portsOf(pod: PodLike, service: ServiceLike): EndpointSlicePort[] {
    const out: EndpointSlicePort[] = [];
    for (const sp of service.spec?.ports ?? []) {
      const port = findPort(pod, sp);
      if (port === undefined) continue;
      out.push({ name: sp.name ?? '', protocol: sp.protocol ?? 'TCP', port, ...(sp.appProtocol !== undefined ? { appProtocol: sp.appProtocol } : {}) });
    }
    return out;
  }

  /** upstream's podToEndpoint: the pod's addresses of the type, its conditions, node, zone, hostname and reference. */
  private endpointOf(pod: PodLike, service: ServiceLike, addressType: string): Endpoint | undefined {
    const addresses = podIPsOf(pod, addressType);
    if (!addresses.length) return undefined;
    const serving = isPodReady(pod);
    const terminating = !!pod.metadata?.deletionTimestamp;
    const ready = !!service.spec?.publishNotReadyAddresses || (serving && !terminating);
    const nodeName = pod.spec?.nodeName;
    const node = nodeName ? (this.nodes.objects.get(`/${nodeName}`) as NodeLike | undefined) : undefined;
    const zone = node?.metadata?.labels?.[this.options.naming.key('zone', 'topology')];
    return {
      addresses,
      conditions: { ready, serving, terminating },
      ...(shouldSetHostname(pod, service) ? { hostname: pod.spec!.hostname } : {}),
      targetRef: podReference(pod),
      ...(nodeName ? { nodeName } : {}),
      ...(zone ? { zone } : {}),
    };
  }
}
