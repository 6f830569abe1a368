/**
 * core/v1 Service (upstream's service strategy and `SetDefaults_Service`): defaults, the
 * `/status` subresource, short name `svc`, category `all`, and upstream's printer columns.
 * Validation is upstream's `ValidateService`/`ValidateServiceUpdate` (service-validation.ts).
 * Cluster IPs and node ports are allocated by the core around the write (core/services/),
 * as upstream's service REST storage allocates them around the generic store's.
 */
import type { ApiObject, ObjectMeta } from '../api';
import { deepCopy } from '../../util/json-values';
import { defineTyped, STANDARD_VERBS } from './common';
import type { DefineResource } from './definition';
import { column, OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, OBJECT_META_NAME_DESCRIPTION, since, type TableDefinition } from '../table';
import { validateService, validateServiceStatusUpdate, validateServiceUpdate } from './service-validation';

export type ServiceType = 'ClusterIP' | 'NodePort' | 'LoadBalancer' | 'ExternalName';

export interface ServicePort {
  name?: string;
  protocol?: string;
  appProtocol?: string;
  port: number;
  /** A number or the name of a container port. */
  targetPort?: number | string;
  nodePort?: number;
}

export interface ServiceSpec {
  ports?: ServicePort[];
  selector?: Record<string, string>;
  clusterIP?: string;
  clusterIPs?: string[];
  type?: ServiceType | string;
  externalIPs?: string[];
  sessionAffinity?: string;
  loadBalancerIP?: string;
  loadBalancerSourceRanges?: string[];
  externalName?: string;
  externalTrafficPolicy?: string;
  healthCheckNodePort?: number;
  publishNotReadyAddresses?: boolean;
  sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } };
  ipFamilies?: string[];
  ipFamilyPolicy?: string;
  allocateLoadBalancerNodePorts?: boolean;
  loadBalancerClass?: string;
  internalTrafficPolicy?: string;
  trafficDistribution?: string;
}

export interface LoadBalancerIngress {
  ip?: string;
  hostname?: string;
  ipMode?: string;
  ports?: { port: number; protocol: string; error?: string }[];
}

export interface ServiceStatus {
  loadBalancer?: { ingress?: LoadBalancerIngress[] };
  conditions?: { type: string; status: string; reason?: string; message?: string; lastTransitionTime?: string; observedGeneration?: number }[];
}

export interface Service extends ApiObject {
  metadata?: ObjectMeta;
  spec?: ServiceSpec;
  status?: ServiceStatus;
}

/** `v1.DefaultClientIPServiceAffinitySeconds`: three hours. */
export const DEFAULT_CLIENT_IP_AFFINITY_SECONDS = 10800;

/** `ClusterIP: None`: a headless Service, which gets no virtual IP. */
export const CLUSTER_IP_NONE = 'None';

/** upstream's ExternallyAccessible: node ports, a load balancer, or external IPs on a cluster IP. */
export function externallyAccessible(spec: ServiceSpec): boolean {
  return spec.type === 'LoadBalancer' || spec.type === 'NodePort' || (spec.type === 'ClusterIP' && (spec.externalIPs ?? []).length > 0);
}

/** A Service that gets cluster IPs: every type but ExternalName, unless headless. */
export function needsClusterIP(spec: ServiceSpec): boolean {
  return spec.type !== 'ExternalName' && spec.clusterIP !== CLUSTER_IP_NONE;
}

/** A Service whose ports get node ports: NodePort, and LoadBalancer unless it opted out. */
export function needsNodePorts(spec: ServiceSpec): boolean {
  if (spec.type === 'NodePort') return true;
  return spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts !== false;
}

/** A LoadBalancer Service with `externalTrafficPolicy: Local` gets a health-check node port. */
export function needsHealthCheckNodePort(spec: ServiceSpec): boolean {
  return spec.type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local';
}

/** upstream SetDefaults_Service (IP families are set where the cluster IPs are allocated). */
export function defaultService(svc: Service): void {
  const spec = (svc.spec ??= {});
  if (!spec.sessionAffinity) spec.sessionAffinity = 'None';
  if (spec.sessionAffinity === 'None') delete spec.sessionAffinityConfig;
  if (spec.sessionAffinity === 'ClientIP' && spec.sessionAffinityConfig?.clientIP?.timeoutSeconds === undefined) {
    spec.sessionAffinityConfig = { clientIP: { timeoutSeconds: DEFAULT_CLIENT_IP_AFFINITY_SECONDS } };
  }
  if (!spec.type) spec.type = 'ClusterIP';
  for (const port of spec.ports ?? []) {
    if (!port.protocol) port.protocol = 'TCP';
    if (port.targetPort === undefined || port.targetPort === 0 || port.targetPort === '') port.targetPort = port.port;
  }
  if (externallyAccessible(spec) && !spec.externalTrafficPolicy) spec.externalTrafficPolicy = 'Cluster';
  if (spec.internalTrafficPolicy === undefined && (spec.type === 'NodePort' || spec.type === 'LoadBalancer' || spec.type === 'ClusterIP')) {
    spec.internalTrafficPolicy = 'Cluster';
  }
  if (spec.type === 'LoadBalancer') {
    spec.allocateLoadBalancerNodePorts ??= true;
    // LoadBalancerIPMode (beta, on): an ingress IP without a mode is a virtual IP.
    for (const ingress of svc.status?.loadBalancer?.ingress ?? []) if (ingress.ip && ingress.ipMode === undefined) ingress.ipMode = 'VIP';
  }
  // A Go struct, always written: `status: {loadBalancer: {}}`.
  const status = (svc.status ??= {});
  status.loadBalancer ??= {};
}

/**
 * upstream's dropTypeDependentFields: fields that only a type needs go when an update changes
 * the type away from it, unless the update itself changed them.
 */
function dropTypeDependentFields(svc: Service, old: Service): void {
  const spec = svc.spec ?? {};
  const was = old.spec ?? {};
  if (spec.type === was.type) return;
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  if (spec.type === 'ExternalName') {
    if (same(spec.clusterIP, was.clusterIP) && same(spec.clusterIPs, was.clusterIPs)) {
      delete spec.clusterIP;
      delete spec.clusterIPs;
    }
    if (same(spec.ipFamilies, was.ipFamilies)) delete spec.ipFamilies;
    if (same(spec.ipFamilyPolicy, was.ipFamilyPolicy)) delete spec.ipFamilyPolicy;
  }
  if (!needsNodePorts(spec) && sameNodePorts(spec, was)) for (const port of spec.ports ?? []) delete port.nodePort;
  if (!needsHealthCheckNodePort(spec) && spec.healthCheckNodePort === was.healthCheckNodePort) delete spec.healthCheckNodePort;
  if (spec.type !== 'LoadBalancer') {
    if (spec.allocateLoadBalancerNodePorts === was.allocateLoadBalancerNodePorts) delete spec.allocateLoadBalancerNodePorts;
    if (spec.loadBalancerClass === was.loadBalancerClass) delete spec.loadBalancerClass;
  }
  if (!externallyAccessible(spec) && spec.externalTrafficPolicy === was.externalTrafficPolicy) delete spec.externalTrafficPolicy;
  if (spec.type === 'ExternalName' && spec.internalTrafficPolicy === was.internalTrafficPolicy) delete spec.internalTrafficPolicy;
}

/** upstream's sameNodePorts: the update kept every node port the old ports had (by port number). */
function sameNodePorts(spec: ServiceSpec, was: ServiceSpec): boolean {
  const before = new Map((was.ports ?? []).map((p) => [p.port, p.nodePort ?? 0]));
  return (spec.ports ?? []).every((p) => (p.nodePort ?? 0) === (before.get(p.port) ?? 0));
}

/** `10.0.0.1`, or `<none>` for a headless or ExternalName Service (upstream's printService). */
function clusterIPCell(spec: ServiceSpec): string {
  return spec.clusterIPs?.[0] ?? '<none>';
}

/** upstream's getServiceExternalIP; the server prints wide, so load-balancer addresses are never clipped. */
function externalIPCell(svc: Service): string {
  const spec = svc.spec ?? {};
  const external = spec.externalIPs ?? [];
  switch (spec.type) {
    case 'ClusterIP':
    case 'NodePort':
      return external.length > 0 ? external.join(',') : '<none>';
    case 'LoadBalancer': {
      const lb = [...new Set((svc.status?.loadBalancer?.ingress ?? []).map((i) => i.ip || i.hostname || '').filter((a) => a !== ''))].sort();
      const all = [...lb, ...external];
      return all.length > 0 ? all.join(',') : '<pending>';
    }
    case 'ExternalName':
      return spec.externalName ?? '';
    default:
      return '<unknown>';
  }
}

/** upstream's makePortString: `80/TCP`, `80:31234/TCP` with a node port. */
export function portsCell(ports: readonly ServicePort[] | undefined): string {
  const cell = (ports ?? []).map((p) => (p.nodePort ? `${p.port}:${p.nodePort}/${p.protocol ?? ''}` : `${p.port}/${p.protocol ?? ''}`)).join(',');
  return cell || '<none>';
}

/** labels.FormatLabels: sorted `k=v` pairs, `<none>` when empty. */
function selectorCell(selector: Record<string, string> | undefined): string {
  const keys = Object.keys(selector ?? {}).sort();
  return keys.length > 0 ? keys.map((k) => `${k}=${selector![k]}`).join(',') : '<none>';
}

const SERVICE_TABLE: TableDefinition<Service> = {
  columns: [
    column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
    column(
      'Type',
      'string',
      'type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. "ClusterIP" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is "None", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. "NodePort" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. "LoadBalancer" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. "ExternalName" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://{keyDomain}/docs/concepts/services-networking/service/#publishing-services-service-types',
    ),
    column(
      'Cluster-IP',
      'string',
      'clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are "None", empty string (""), or a valid IP address. Setting this to "None" makes a "headless service" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://{keyDomain}/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies',
    ),
    column(
      'External-IP',
      'string',
      'externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.',
    ),
    column(
      'Port(s)',
      'string',
      'The list of ports that are exposed by this service. More info: https://{keyDomain}/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies',
    ),
    column('Age', 'string', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
    column(
      'Selector',
      'string',
      'Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://{keyDomain}/docs/concepts/services-networking/service/',
      { priority: 1 },
    ),
  ],
  row(svc, { now }) {
    const spec = svc.spec ?? {};
    return {
      cells: [
        svc.metadata?.name ?? '',
        spec.type ?? '',
        clusterIPCell(spec),
        externalIPCell(svc),
        portsCell(spec.ports),
        since(svc.metadata?.creationTimestamp, now),
        selectorCell(spec.selector),
      ],
    };
  },
};

export const defineServices: DefineResource = () =>
  defineTyped<Service>({
    group: '',
    version: 'v1',
    kind: 'Service',
    resource: 'services',
    singular: 'service',
    namespaced: true,
    shortNames: ['svc'],
    categories: ['all'],
    verbs: STANDARD_VERBS,
    // upstream's ValidateService checks the name as a DNS-1035 label.
    nameRule: 'dns1035Label',
    // upstream's service strategy: PUT of an absent Service creates it.
    allowCreateOnUpdate: true,
    allowUnconditionalUpdate: true,

    defaults: defaultService,
    prepareForCreate(svc) {
      svc.status = { loadBalancer: {} };
    },
    prepareForUpdate(svc, old) {
      svc.status = deepCopy(old.status) ?? { loadBalancer: {} };
      dropTypeDependentFields(svc, old);
    },
    validate: (svc) => validateService(svc),
    validateOnlyOnCreate: true,
    validateUpdate: validateServiceUpdate,
    status: {
      prepareForUpdate(svc, old) {
        svc.spec = deepCopy(old.spec);
      },
      validateUpdate: validateServiceStatusUpdate,
    },
    table: SERVICE_TABLE,
  });
