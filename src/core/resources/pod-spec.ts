/**
 * The pod spec shared by Pods and pod templates (ReplicaSet `spec.template`): its TypeScript
 * shape (the fields Keelson looks at; everything else passes through) and upstream's v1
 * defaults (`SetDefaults_PodSpec`, `SetDefaults_Container`, probe and port defaults, plus the
 * v1 conversions that normalise deprecated fields).
 */
import type { ObjectMeta } from '../api';

export type ResourceList = Record<string, string | number>;

export interface ResourceRequirements {
  limits?: ResourceList;
  requests?: ResourceList;
  [field: string]: unknown;
}

export interface ContainerPort {
  name?: string;
  containerPort?: number;
  hostPort?: number;
  hostIP?: string;
  protocol?: string;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { apiVersion?: string; fieldPath?: string }; [source: string]: unknown };
}

export interface Probe {
  httpGet?: { path?: string; port?: number | string; scheme?: string; [field: string]: unknown };
  timeoutSeconds?: number;
  periodSeconds?: number;
  successThreshold?: number;
  failureThreshold?: number;
  [field: string]: unknown;
}

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  ports?: ContainerPort[];
  env?: EnvVar[];
  resources?: ResourceRequirements;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  imagePullPolicy?: string;
  terminationMessagePath?: string;
  terminationMessagePolicy?: string;
  [field: string]: unknown;
}

export interface Volume {
  name: string;
  [source: string]: unknown;
}

export interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: Volume[];
  restartPolicy?: string;
  terminationGracePeriodSeconds?: number;
  activeDeadlineSeconds?: number;
  dnsPolicy?: string;
  dnsConfig?: Record<string, unknown>;
  nodeSelector?: Record<string, string>;
  serviceAccountName?: string;
  /** Deprecated alias of serviceAccountName, kept in step with it. */
  serviceAccount?: string;
  nodeName?: string;
  hostNetwork?: boolean;
  hostname?: string;
  subdomain?: string;
  schedulerName?: string;
  securityContext?: Record<string, unknown>;
  enableServiceLinks?: boolean;
  [field: string]: unknown;
}

export interface PodTemplateSpec {
  metadata?: ObjectMeta;
  spec?: PodSpec;
}

export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';
export const DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS = 30;
export const TERMINATION_MESSAGE_PATH_DEFAULT = '/dev/termination-log';

/**
 * upstream's ParseImageName only to learn the tag: an image without tag and digest means
 * `latest`, which pulls Always; any other tag pulls IfNotPresent.
 */
export function imageTag(image: string): string {
  if (image.includes('@')) return image.slice(0, image.indexOf('@')).split('/').pop()!.split(':')[1] ?? '';
  const last = image.split('/').pop() ?? '';
  const colon = last.indexOf(':');
  return colon >= 0 ? last.slice(colon + 1) : 'latest';
}

function defaultProbe(probe: Probe | undefined): void {
  if (!probe) return;
  probe.timeoutSeconds ||= 1;
  probe.periodSeconds ||= 10;
  probe.successThreshold ||= 1;
  probe.failureThreshold ||= 3;
  if (probe.httpGet) {
    probe.httpGet.path ||= '/';
    probe.httpGet.scheme ||= 'HTTP';
  }
}

/** upstream SetDefaults_Container and the declarative defaults beneath it. */
export function defaultContainer(c: Container): void {
  if (!c.imagePullPolicy) c.imagePullPolicy = imageTag(c.image ?? '') === 'latest' ? 'Always' : 'IfNotPresent';
  c.terminationMessagePath ||= TERMINATION_MESSAGE_PATH_DEFAULT;
  c.terminationMessagePolicy ||= 'File';
  // `resources` is no omitempty struct upstream, so it always serialises, at least as {}.
  c.resources ??= {};
  for (const port of c.ports ?? []) port.protocol ||= 'TCP';
  for (const env of c.env ?? []) {
    if (env.valueFrom?.fieldRef) env.valueFrom.fieldRef.apiVersion ||= 'v1';
  }
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
}

/** upstream SetDefaults_PodSpec (which also applies to pod templates), volumes and containers. */
export function defaultPodSpec(spec: PodSpec): void {
  spec.dnsPolicy ||= 'ClusterFirst';
  spec.restartPolicy ||= 'Always';
  spec.securityContext ??= {};
  spec.terminationGracePeriodSeconds ??= DEFAULT_TERMINATION_GRACE_PERIOD_SECONDS;
  spec.schedulerName ||= DEFAULT_SCHEDULER_NAME;
  // v1 conversion: serviceAccount is the deprecated spelling of serviceAccountName.
  if (!spec.serviceAccountName && spec.serviceAccount) spec.serviceAccountName = spec.serviceAccount;
  if (spec.serviceAccountName) spec.serviceAccount = spec.serviceAccountName;
  for (const v of spec.volumes ?? []) {
    // A volume without a source is an emptyDir (SetDefaults_Volume).
    if (Object.keys(v).every((k) => k === 'name')) v.emptyDir = {};
  }
  for (const c of spec.containers ?? []) defaultContainer(c);
  for (const c of spec.initContainers ?? []) defaultContainer(c);
}

function defaultRequestsFromLimits(c: Container): void {
  const limits = c.resources?.limits;
  if (!limits) return;
  const requests = (c.resources!.requests ??= {});
  for (const [k, v] of Object.entries(limits)) if (!(k in requests)) requests[k] = v;
}

/** upstream SetDefaults_Pod: only for Pods, not templates. */
export function defaultPodOnlyFields(spec: PodSpec): void {
  for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) defaultRequestsFromLimits(c);
  spec.enableServiceLinks ??= true;
  if (spec.hostNetwork) {
    for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
      for (const p of c.ports ?? []) if (!p.hostPort) p.hostPort = p.containerPort;
    }
  }
}
