/**
 * What the endpoints and endpointslice controllers share, as upstream's share
 * `pkg/controller/util/endpoint` and `endpointslice/util`: which pods a Service selects and
 * which of them belong in its endpoints, the port a Service port reaches on a pod, the pod's
 * address of the Service's IP family, its hostname, and the last-change trigger time.
 */
import { type ApiObject, labelSelectorMatches, podReadyCondition } from '../core';
import type { Naming } from '../naming';

export interface ServicePortLike {
  name?: string;
  protocol?: string;
  appProtocol?: string;
  port: number;
  targetPort?: number | string;
}

/** The part of a Service the controllers read. */
export type ServiceLike = ApiObject & {
  spec?: {
    selector?: Record<string, string> | null;
    ports?: ServicePortLike[];
    type?: string;
    clusterIP?: string;
    ipFamilies?: string[];
    publishNotReadyAddresses?: boolean;
  };
};

interface ContainerLike {
  restartPolicy?: string;
  ports?: Array<{ name?: string; containerPort: number; protocol?: string }>;
}

/** The part of a Pod the controllers read. */
export type PodLike = ApiObject & {
  spec?: { nodeName?: string; hostname?: string; subdomain?: string; restartPolicy?: string; containers?: ContainerLike[]; initContainers?: ContainerLike[] };
  status?: { phase?: string; podIP?: string; podIPs?: Array<{ ip: string }> };
};

export const servicesTarget = { group: '', version: 'v1', resource: 'services' } as const;
export const podsTarget = { group: '', version: 'v1', resource: 'pods' } as const;

export const keyOf = (o: ApiObject) => `${o.metadata?.namespace ?? ''}/${o.metadata?.name ?? ''}`;

/** The label on a headless Service's endpoints (`service.kubernetes.io/headless`). */
export const headlessLabel = (naming: Naming) => naming.key('headless', 'service');
/** The annotation with the time of the change the endpoints follow (`endpoints.kubernetes.io/last-change-trigger-time`). */
export const lastChangeTriggerTimeAnnotation = (naming: Naming) => naming.key('last-change-trigger-time', 'endpoints');

/**
 * A Service whose endpoints a controller keeps: not ExternalName, with a selector (an empty one
 * is not stored, `omitempty`, so it reads as none, as upstream's nil selector does).
 */
export function hasSelector(service: ServiceLike): boolean {
  return service.spec?.type !== 'ExternalName' && Object.keys(service.spec?.selector ?? {}).length > 0;
}

/** upstream's IsServiceIPSet: neither empty nor `None`. */
export function isServiceIPSet(service: ServiceLike): boolean {
  const ip = service.spec?.clusterIP ?? '';
  return ip !== '' && ip !== 'None';
}

/** The pods of the Service's namespace its selector picks. */
export function selectedPods(service: ServiceLike, podsInNamespace: Iterable<ApiObject>): PodLike[] {
  const selector = { matchLabels: service.spec?.selector ?? {} };
  return ([...podsInNamespace] as PodLike[]).filter((p) => labelSelectorMatches(selector, p.metadata?.labels));
}

/**
 * upstream's ShouldPodBeInEndpoints: a pod with an IP, not being deleted unless terminating
 * pods are included, and not terminated for good (by its restart policy).
 */
export function shouldPodBeInEndpoints(pod: PodLike, includeTerminating: boolean): boolean {
  if (!pod.status?.podIP && !pod.status?.podIPs?.length) return false;
  if (!includeTerminating && pod.metadata?.deletionTimestamp) return false;
  const phase = pod.status?.phase;
  if (pod.spec?.restartPolicy === 'Never') return phase !== 'Failed' && phase !== 'Succeeded';
  if (pod.spec?.restartPolicy === 'OnFailure') return phase !== 'Succeeded';
  return true;
}

/**
 * upstream's FindPort: a numeric `targetPort` as it is (the port itself when unset); a named one
 * is the container port of that name and protocol, among the containers and the sidecars
 * (restartable init containers). Undefined when no container has it.
 */
export function findPort(pod: PodLike, port: ServicePortLike): number | undefined {
  const target = port.targetPort ?? port.port;
  if (typeof target === 'number') return target;
  const protocol = port.protocol ?? 'TCP';
  const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? []).filter((c) => c.restartPolicy === 'Always')];
  for (const c of containers) for (const p of c.ports ?? []) if (p.name === target && (p.protocol ?? 'TCP') === protocol) return p.containerPort;
  return undefined;
}

const familyOf = (ip: string) => (ip.includes(':') ? 'IPv6' : 'IPv4');

/**
 * The IP family a Service's endpoints carry: its first `ipFamilies` entry, else its cluster
 * IP's; undefined for a headless Service without families (each pod's primary IP then).
 */
export function serviceFamily(service: ServiceLike): string | undefined {
  const first = service.spec?.ipFamilies?.[0];
  if (first) return first;
  return isServiceIPSet(service) ? familyOf(service.spec!.clusterIP!) : undefined;
}

/** The pod's IPs of one family (all of them, primary first). */
export function podIPsOf(pod: PodLike, family: string | undefined): string[] {
  const ips = pod.status?.podIPs?.length ? pod.status.podIPs.map((p) => p.ip) : pod.status?.podIP ? [pod.status.podIP] : [];
  if (family === undefined) return ips.slice(0, 1);
  return ips.filter((ip) => familyOf(ip) === family);
}

/** upstream's ShouldSetHostname: the pod names a hostname and this Service as its subdomain. */
export function shouldSetHostname(pod: PodLike, service: ServiceLike): boolean {
  return !!pod.spec?.hostname && pod.spec.subdomain === service.metadata?.name && pod.metadata?.namespace === service.metadata?.namespace;
}

/** A pod as the target of an endpoint. */
export function podReference(pod: PodLike): { kind: 'Pod'; namespace: string; name: string; uid: string } {
  return { kind: 'Pod', namespace: pod.metadata?.namespace ?? '', name: pod.metadata?.name ?? '', uid: pod.metadata?.uid ?? '' };
}

/** Go's time.Format(RFC3339Nano) of a metav1.Time's text: fractional zeros trimmed. */
function rfc3339Nano(ms: number): string {
  return new Date(ms).toISOString().replace(/\.?0*Z$/, 'Z');
}

/**
 * upstream's TriggerTimeTracker: per Service, the times of what its endpoints follow (each
 * pod's Ready transition, the Service's creation) as last synced; a sync reports the earliest of
 * those that moved since (the Service's creation for a Service seen the first time), or nothing.
 */
export class TriggerTimeTracker {
  private readonly states = new Map<string, { pods: Map<string, number>; service: number }>();

  compute(key: string, service: ServiceLike, pods: readonly PodLike[]): string | undefined {
    const state = this.states.get(key);
    let earliest: number | undefined;
    const podTimes = new Map<string, number>();
    for (const pod of pods) {
      const at = Date.parse(podReadyCondition(pod)?.lastTransitionTime ?? '');
      if (Number.isNaN(at)) continue;
      const name = pod.metadata?.name ?? '';
      podTimes.set(name, at);
      if (at > (state?.pods.get(name) ?? Number.NEGATIVE_INFINITY)) earliest = Math.min(earliest ?? at, at);
    }
    const created = Date.parse(service.metadata?.creationTimestamp ?? '');
    const serviceAt = Number.isNaN(created) ? 0 : created;
    if (state && serviceAt > state.service) earliest = Math.min(earliest ?? serviceAt, serviceAt);
    this.states.set(key, { pods: podTimes, service: serviceAt });
    if (!state) return serviceAt ? rfc3339Nano(serviceAt) : undefined;
    return earliest === undefined ? undefined : rfc3339Nano(earliest);
  }

  forget(key: string): void {
    this.states.delete(key);
  }
}

/** The pod's labels and the previous version's may each pick a Service: the keys of every Service of the namespace either picks. */
export function servicesOfPod(services: Iterable<ApiObject>, pod: ApiObject, previous: ApiObject | undefined): string[] {
  const keys: string[] = [];
  for (const s of services as Iterable<ServiceLike>) {
    if (!hasSelector(s)) continue;
    const selector = { matchLabels: s.spec?.selector ?? {} };
    if (labelSelectorMatches(selector, pod.metadata?.labels) || (previous && labelSelectorMatches(selector, previous.metadata?.labels))) keys.push(keyOf(s));
  }
  return keys;
}
