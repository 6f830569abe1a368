/**
 * upstream's ValidateService, ValidateServiceUpdate and ValidateServiceStatusUpdate, with their
 * paths and messages (bad values that upstream prints with Go's `%#v` are rendered the same).
 * Metadata is checked by the registry; the name rule (a DNS-1035 label) is the definition's.
 */
import { fieldErrors, FieldPath, GoLiteral, type FieldError } from '../validation/field-errors';
import { goString, goStringSlice } from '../validation/go-format';
import { validateLabels } from '../validation/metadata';
import { isDns1123Label, isDns1123Subdomain, isQualifiedName } from '../validation/names';
import { portNameErrors, portNumberErrors } from './pod-spec-validation';
import { parseIPSloppy, validateNonSpecialIP } from './ip-validation';
import type { Service, ServicePort, ServiceSpec } from './services';
import { CLUSTER_IP_NONE, externallyAccessible, needsHealthCheckNodePort } from './services';

const SPEC = FieldPath.root('spec');
const CLUSTER_IPS = SPEC.child('clusterIPs');
const IP_FAMILIES = SPEC.child('ipFamilies');

const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];
const PORT_PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const SESSION_AFFINITIES = ['ClientIP', 'None'];
const IP_FAMILIES_SUPPORTED = ['IPv4', 'IPv6'];
const IP_FAMILY_POLICIES = ['PreferDualStack', 'RequireDualStack', 'SingleStack'];
const TRAFFIC_POLICIES = ['Cluster', 'Local'];
const LOAD_BALANCER_IP_MODES = ['Proxy', 'VIP'];
/** upstream's MaxClientIPServiceAffinitySeconds: one day. */
const MAX_CLIENT_IP_AFFINITY_SECONDS = 86400;
/** The kubelet's port, which a LoadBalancer may not expose (upstream's ports.KubeletPort). */
const KUBELET_PORT = 10250;

/** upstream's isHeadlessService: the first cluster IP is `None`. */
export function isHeadless(spec: ServiceSpec): boolean {
  return (spec.clusterIPs ?? []).length === 1 && spec.clusterIPs![0] === CLUSTER_IP_NONE;
}

/** apimachinery's IsValidIP as a field error. */
function ipFieldErrors(path: FieldPath, ip: string): FieldError[] {
  return parseIPSloppy(ip) ? [] : [fieldErrors.invalid(path, ip, 'must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)')];
}

function isIPv6(ip: string): boolean {
  const addr = parseIPSloppy(ip);
  return !!addr && addr.bytes.length === 16 && !(addr.bytes.slice(0, 10).every((b) => b === 0) && addr.bytes[10] === 0xff && addr.bytes[11] === 0xff);
}

/** `core.ServicePort{...}` as Go's `%#v` prints the key of a duplicate (protocol and port only). */
function goPortKey(protocol: string, port: number): GoLiteral {
  return new GoLiteral(
    `core.ServicePort{Name:"", Protocol:${goString(protocol)}, AppProtocol:(*string)(nil), Port:${port}, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}`,
  );
}

const goFamilies = (families: readonly string[] | undefined) =>
  new GoLiteral(families ? `[]core.IPFamily{${families.map(goString).join(', ')}}` : '[]core.IPFamily(nil)');
const goIPs = (ips: readonly string[] | undefined) => new GoLiteral(goStringSlice(ips ?? null));

/** upstream's validateServicePort. */
function validateServicePort(sp: ServicePort, requireName: boolean, names: Set<string>, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (requireName && !sp.name) errs.push(fieldErrors.required(path.child('name')));
  else if (sp.name) {
    errs.push(...isDns1123Label(sp.name).map((m) => fieldErrors.invalid(path.child('name'), sp.name, m)));
    if (names.has(sp.name)) errs.push(fieldErrors.duplicate(path.child('name'), sp.name));
    else names.add(sp.name);
  }
  for (const m of portNumberErrors(sp.port ?? 0)) errs.push(fieldErrors.invalid(path.child('port'), sp.port ?? 0, m));
  if (!sp.protocol) errs.push(fieldErrors.required(path.child('protocol')));
  else if (!PORT_PROTOCOLS.includes(sp.protocol)) errs.push(fieldErrors.notSupported(path.child('protocol'), sp.protocol, PORT_PROTOCOLS));
  const target = sp.targetPort ?? 0;
  if (typeof target === 'number') for (const m of portNumberErrors(target)) errs.push(fieldErrors.invalid(path.child('targetPort'), target, m));
  else for (const m of portNameErrors(target)) errs.push(fieldErrors.invalid(path.child('targetPort'), target, m));
  if (sp.appProtocol !== undefined) errs.push(...isQualifiedName(sp.appProtocol).map((m) => fieldErrors.invalid(path.child('appProtocol'), sp.appProtocol, m)));
  return errs;
}

/** upstream's validateClientIPAffinityConfig. */
function validateClientIPAffinity(spec: ServiceSpec, path: FieldPath): FieldError[] {
  const detail = 'when session affinity type is ClientIP';
  const config = spec.sessionAffinityConfig;
  if (!config) return [fieldErrors.required(path, detail)];
  if (!config.clientIP) return [fieldErrors.required(path.child('clientIP'), detail)];
  const timeout = config.clientIP.timeoutSeconds;
  const at = path.child('clientIP', 'timeoutSeconds');
  if (timeout === undefined) return [fieldErrors.required(at, detail)];
  if (timeout <= 0 || timeout > MAX_CLIENT_IP_AFFINITY_SECONDS) {
    return [fieldErrors.invalid(at, timeout, `must be greater than 0 and less than ${MAX_CLIENT_IP_AFFINITY_SECONDS}`)];
  }
  return [];
}

/** upstream's ValidateServiceClusterIPsRelatedFields (single checks; the allocator checks them against the cluster). */
export function validateClusterIPsRelatedFields(spec: ServiceSpec): FieldError[] {
  if (spec.type === 'ExternalName') return [];
  const errs: FieldError[] = [];
  const ips = spec.clusterIPs ?? [];
  if (spec.clusterIP) {
    if (ips.length === 0) errs.push(fieldErrors.required(CLUSTER_IPS));
    else if (ips[0] !== spec.clusterIP) errs.push(fieldErrors.invalid(CLUSTER_IPS, goIPs(ips), 'first value must match `clusterIP`'));
  } else if (ips.length > 0) {
    errs.push(fieldErrors.invalid(CLUSTER_IPS, goIPs(ips), 'must be empty when `clusterIP` is not specified'));
  }
  const seen = new Set<string>();
  (spec.ipFamilies ?? []).forEach((family, i) => {
    if (!IP_FAMILIES_SUPPORTED.includes(family)) errs.push(fieldErrors.notSupported(IP_FAMILIES.index(i), family, IP_FAMILIES_SUPPORTED));
    if (seen.has(family)) errs.push(fieldErrors.duplicate(IP_FAMILIES.index(i), family));
    seen.add(family);
  });
  if (spec.ipFamilyPolicy !== undefined && !IP_FAMILY_POLICIES.includes(spec.ipFamilyPolicy)) {
    errs.push(fieldErrors.notSupported(SPEC.child('ipFamilyPolicy'), spec.ipFamilyPolicy, IP_FAMILY_POLICIES));
  }
  let invalidIPs = false;
  ips.forEach((ip, i) => {
    if (i === 0 && ip === CLUSTER_IP_NONE) {
      if (ips.length > 1) {
        invalidIPs = true;
        errs.push(fieldErrors.invalid(CLUSTER_IPS, goIPs(ips), "'None' must be the first and only value"));
      }
      return;
    }
    const bad = ipFieldErrors(CLUSTER_IPS.index(i), ip);
    invalidIPs ||= bad.length > 0;
    errs.push(...bad);
  });
  if (ips.length > 2) errs.push(fieldErrors.invalid(CLUSTER_IPS, goIPs(ips), 'may only hold up to 2 values'));
  if (invalidIPs) return errs;
  if (ips.length > 1 && isIPv6(ips[0]!) === isIPv6(ips[1]!)) {
    errs.push(fieldErrors.invalid(CLUSTER_IPS, goIPs(ips), 'may specify no more than one IP for each IP family'));
  }
  const families = spec.ipFamilies ?? [];
  if (!isHeadless(spec) && families.length > 0) {
    ips.slice(0, families.length).forEach((ip, i) => {
      if (families[i] === 'IPv4' && isIPv6(ip))
        errs.push(fieldErrors.invalid(CLUSTER_IPS.index(i), ip, `expected an IPv4 value as indicated by \`ipFamilies[${i}]\``));
      if (families[i] === 'IPv6' && !isIPv6(ip))
        errs.push(fieldErrors.invalid(CLUSTER_IPS.index(i), ip, `expected an IPv6 value as indicated by \`ipFamilies[${i}]\``));
    });
  }
  return errs;
}

/** upstream's validateLoadBalancerClassField (`old` on an update). */
function validateLoadBalancerClass(spec: ServiceSpec, old: ServiceSpec | undefined): FieldError[] {
  const path = SPEC.child('loadBalancerClass');
  const errs: FieldError[] = [];
  if (old && old.type === 'LoadBalancer' && spec.type === 'LoadBalancer' && old.loadBalancerClass !== spec.loadBalancerClass) {
    errs.push(fieldErrors.invalid(path, spec.loadBalancerClass ?? null, 'may not change once set'));
  }
  if (spec.type !== 'LoadBalancer') {
    if (spec.loadBalancerClass !== undefined) errs.push(fieldErrors.forbidden(path, "may only be used when `type` is 'LoadBalancer'"));
  } else if (spec.loadBalancerClass !== undefined) {
    errs.push(...isQualifiedName(spec.loadBalancerClass).map((m) => fieldErrors.invalid(path, spec.loadBalancerClass, m)));
  }
  return errs;
}

/** upstream's validateServiceExternalTrafficPolicy. */
function validateExternalTrafficPolicy(spec: ServiceSpec): FieldError[] {
  const errs: FieldError[] = [];
  const policy = spec.externalTrafficPolicy ?? '';
  if (!externallyAccessible(spec)) {
    if (policy) errs.push(fieldErrors.invalid(SPEC.child('externalTrafficPolicy'), policy, 'may only be set for externally-accessible services'));
  } else if (!policy) errs.push(fieldErrors.required(SPEC.child('externalTrafficPolicy')));
  else if (!TRAFFIC_POLICIES.includes(policy)) errs.push(fieldErrors.notSupported(SPEC.child('externalTrafficPolicy'), policy, TRAFFIC_POLICIES));
  const hc = spec.healthCheckNodePort ?? 0;
  const hcPath = SPEC.child('healthCheckNodePort');
  if (!needsHealthCheckNodePort(spec)) {
    if (hc !== 0) errs.push(fieldErrors.invalid(hcPath, hc, "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"));
  } else if (hc === 0) errs.push(fieldErrors.required(hcPath));
  else for (const m of portNumberErrors(hc)) errs.push(fieldErrors.invalid(hcPath, hc, m));
  return errs;
}

/** upstream's ValidateService, less the metadata (the registry's). */
export function validateService(svc: Service, old?: Service): FieldError[] {
  const spec = svc.spec ?? {};
  const errs: FieldError[] = [];
  const headless = isHeadless(spec);
  const ports = spec.ports ?? [];
  const portsPath = SPEC.child('ports');
  if (ports.length === 0 && !headless && spec.type !== 'ExternalName') errs.push(fieldErrors.required(portsPath));
  switch (spec.type) {
    case 'LoadBalancer':
      if (headless) errs.push(fieldErrors.invalid(CLUSTER_IPS.index(0), spec.clusterIPs![0], "may not be set to 'None' for LoadBalancer services"));
      ports.forEach((p, i) => {
        if (p.port === KUBELET_PORT) {
          errs.push(fieldErrors.invalid(portsPath.index(i), p.port, `may not expose port ${KUBELET_PORT} externally since it is used by kubelet`));
        }
      });
      break;
    case 'NodePort':
      if (headless) errs.push(fieldErrors.invalid(CLUSTER_IPS.index(0), spec.clusterIPs![0], "may not be set to 'None' for NodePort services"));
      break;
    case 'ExternalName': {
      if ((spec.clusterIPs ?? []).length > 0) errs.push(fieldErrors.forbidden(CLUSTER_IPS, 'may not be set for ExternalName services'));
      if ((spec.ipFamilies ?? []).length > 0) errs.push(fieldErrors.forbidden(IP_FAMILIES, 'may not be set for ExternalName services'));
      if (spec.ipFamilyPolicy !== undefined) errs.push(fieldErrors.forbidden(SPEC.child('ipFamilyPolicy'), 'may not be set for ExternalName services'));
      // A CNAME may end with a dot, as a fully qualified name.
      const cname = (spec.externalName ?? '').replace(/\.$/, '');
      if (cname) errs.push(...isDns1123Subdomain(cname).map((m) => fieldErrors.invalid(SPEC.child('externalName'), cname, m)));
      else errs.push(fieldErrors.required(SPEC.child('externalName')));
      break;
    }
  }
  const names = new Set<string>();
  ports.forEach((p, i) => errs.push(...validateServicePort(p, ports.length > 1, names, portsPath.index(i))));
  if (spec.selector) errs.push(...validateLabels(spec.selector, SPEC.child('selector')));
  const affinity = spec.sessionAffinity ?? '';
  if (!affinity) errs.push(fieldErrors.required(SPEC.child('sessionAffinity')));
  else if (!SESSION_AFFINITIES.includes(affinity)) errs.push(fieldErrors.notSupported(SPEC.child('sessionAffinity'), affinity, SESSION_AFFINITIES));
  if (affinity === 'ClientIP') errs.push(...validateClientIPAffinity(spec, SPEC.child('sessionAffinityConfig')));
  else if (affinity === 'None' && spec.sessionAffinityConfig) {
    errs.push(fieldErrors.forbidden(SPEC.child('sessionAffinityConfig'), 'must not be set when session affinity is None'));
  }
  errs.push(...validateClusterIPsRelatedFields(spec));
  (spec.externalIPs ?? []).forEach((ip, i) => {
    const path = SPEC.child('externalIPs').index(i);
    const bad = ipFieldErrors(path, ip);
    errs.push(...(bad.length > 0 ? bad : validateNonSpecialIP(ip, path)));
  });
  if (!spec.type) errs.push(fieldErrors.required(SPEC.child('type')));
  else if (!SERVICE_TYPES.includes(spec.type)) errs.push(fieldErrors.notSupported(SPEC.child('type'), spec.type, SERVICE_TYPES));
  if (spec.type === 'ClusterIP') {
    ports.forEach((p, i) => {
      if (p.nodePort) errs.push(fieldErrors.forbidden(portsPath.index(i).child('nodePort'), "may not be used when `type` is 'ClusterIP'"));
    });
  }
  const nodePorts = new Set<string>();
  ports.forEach((p, i) => {
    if (!p.nodePort) return;
    const key = `${p.protocol ?? ''}/${p.nodePort}`;
    if (nodePorts.has(key)) errs.push(fieldErrors.duplicate(portsPath.index(i).child('nodePort'), p.nodePort));
    nodePorts.add(key);
  });
  const seenPorts = new Set<string>();
  ports.forEach((p, i) => {
    const key = `${p.protocol ?? ''}/${p.port}`;
    if (seenPorts.has(key)) errs.push(fieldErrors.duplicate(portsPath.index(i), goPortKey(p.protocol ?? '', p.port)));
    seenPorts.add(key);
  });
  const ranges = spec.loadBalancerSourceRanges ?? [];
  if (ranges.length > 0) {
    // upstream names this path with a capital L.
    const path = SPEC.child('LoadBalancerSourceRanges');
    if (spec.type !== 'LoadBalancer') errs.push(fieldErrors.forbidden(path, "may only be used when `type` is 'LoadBalancer'"));
    ranges.forEach((value, i) => {
      const cidr = value.trim();
      if (!validCIDR(cidr)) {
        errs.push(fieldErrors.invalid(path.index(i), cidr, 'must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)'));
      }
    });
  }
  if (spec.allocateLoadBalancerNodePorts !== undefined && spec.type !== 'LoadBalancer') {
    errs.push(fieldErrors.forbidden(SPEC.child('allocateLoadBalancerNodePorts'), "may only be used when `type` is 'LoadBalancer'"));
  }
  if (spec.type === 'LoadBalancer' && spec.allocateLoadBalancerNodePorts === undefined) {
    // upstream's path lacks the `spec.` prefix here.
    errs.push(fieldErrors.required('allocateLoadBalancerNodePorts'));
  }
  errs.push(...validateLoadBalancerClass(spec, old?.spec));
  errs.push(...validateExternalTrafficPolicy(spec));
  if (spec.internalTrafficPolicy === undefined) {
    if (spec.type === 'NodePort' || spec.type === 'LoadBalancer' || spec.type === 'ClusterIP') {
      errs.push(fieldErrors.required(SPEC.child('internalTrafficPolicy'), 'must be specified'));
    }
  } else if (!TRAFFIC_POLICIES.includes(spec.internalTrafficPolicy)) {
    errs.push(fieldErrors.notSupported(SPEC.child('internalTrafficPolicy'), spec.internalTrafficPolicy, TRAFFIC_POLICIES));
  }
  if (spec.trafficDistribution !== undefined && spec.trafficDistribution !== 'PreferClose') {
    errs.push(fieldErrors.notSupported(SPEC.child('trafficDistribution'), spec.trafficDistribution, ['PreferClose']));
  }
  return errs;
}

/** apimachinery's IsValidCIDR (netutils.ParseCIDRSloppy). */
function validCIDR(text: string): boolean {
  const slash = text.indexOf('/');
  if (slash < 0) return false;
  const addr = parseIPSloppy(text.slice(0, slash));
  const bits = text.slice(slash + 1);
  if (!addr || !/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (text.includes(':') ? 128 : 32);
}

/**
 * upstream's validateUpgradeDowngradeClusterIPs and validateUpgradeDowngradeIPFamilies: a
 * secondary entry may be added or (with `SingleStack`) removed, the primary never changes,
 * unless the Service is or was an ExternalName.
 */
function validateUpgradeDowngrade(spec: ServiceSpec, old: ServiceSpec, field: 'clusterIPs' | 'ipFamilies'): FieldError[] {
  if (spec.type === 'ExternalName' || old.type === 'ExternalName') return [];
  if (isHeadless(old) && isHeadless(spec)) return [];
  const now = spec[field] ?? [];
  const was = old[field] ?? [];
  const path = SPEC.child(field);
  const render = field === 'clusterIPs' ? goIPs(spec[field]) : goFamilies(spec[field]);
  const noun = field === 'clusterIPs' ? 'clusterIP' : 'ipFamily';
  const errs: FieldError[] = [];
  if (was.length === now.length) {
    was.forEach((value, i) => {
      // upstream points every changed IP family at index 0.
      if (value !== now[i]) errs.push(fieldErrors.invalid(path.index(field === 'clusterIPs' ? i : 0), render, 'may not change once set'));
    });
  } else if (was.length > now.length) {
    if (now.length === 0) errs.push(fieldErrors.invalid(path.index(0), render, `primary ${noun} can not be unset`));
    if (was.length > 0 && now.length > 0 && now[0] !== was[0]) errs.push(fieldErrors.invalid(path.index(0), render, 'may not change once set'));
    if (now.length === 1 && spec.ipFamilyPolicy !== 'SingleStack') {
      errs.push(fieldErrors.invalid(path.index(0), render, `\`ipFamilyPolicy\` must be set to 'SingleStack' when releasing the secondary ${noun}`));
    }
  } else if (was.length > 0 && now[0] !== was[0]) {
    errs.push(fieldErrors.invalid(path.index(0), render, 'may not change once set'));
  }
  return errs;
}

/** upstream's ValidateServiceUpdate, less the metadata (the registry's). */
export function validateServiceUpdate(svc: Service, old: Service): FieldError[] {
  const spec = svc.spec ?? {};
  const was = old.spec ?? {};
  return [
    ...validateUpgradeDowngrade(spec, was, 'clusterIPs'),
    ...validateUpgradeDowngrade(spec, was, 'ipFamilies'),
    ...validateLoadBalancerClass(spec, was),
    ...validateService(svc),
  ];
}

/** upstream's ValidateServiceStatusUpdate: the load balancer's ingress points. */
export function validateServiceStatusUpdate(svc: Service): FieldError[] {
  const path = FieldPath.root('status').child('loadBalancer', 'ingress');
  const ingress = svc.status?.loadBalancer?.ingress ?? [];
  // AllowServiceLBStatusOnNonLB (alpha, off): only a LoadBalancer has ingress points.
  if (svc.spec?.type !== 'LoadBalancer' && ingress.length > 0) return [fieldErrors.forbidden(path, "may only be used when `spec.type` is 'LoadBalancer'")];
  const errs: FieldError[] = [];
  ingress.forEach((ing, i) => {
    const at = path.index(i);
    if (ing.ip) errs.push(...ipFieldErrors(at.child('ip'), ing.ip));
    // LoadBalancerIPMode (beta, on).
    if (ing.ipMode === undefined) {
      if (ing.ip) errs.push(fieldErrors.required(at.child('ipMode'), 'must be specified when `ip` is set'));
    } else if (!ing.ip) errs.push(fieldErrors.forbidden(at.child('ipMode'), 'may not be specified when `ip` is not set'));
    else if (!LOAD_BALANCER_IP_MODES.includes(ing.ipMode)) errs.push(fieldErrors.notSupported(at.child('ipMode'), ing.ipMode, LOAD_BALANCER_IP_MODES));
    if (ing.hostname) {
      errs.push(...isDns1123Subdomain(ing.hostname).map((m) => fieldErrors.invalid(at.child('hostname'), ing.hostname, m)));
      if (parseIPSloppy(ing.hostname)) errs.push(fieldErrors.invalid(at.child('hostname'), ing.hostname, 'must be a DNS name, not an IP address'));
    }
  });
  return errs;
}
