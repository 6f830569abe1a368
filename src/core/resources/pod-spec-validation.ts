/**
 * A minimal but real subset of upstream's `ValidatePodSpec` / `ValidatePodTemplateSpec`:
 * containers, names, images, ports, env names, pull and
 * termination-message policies, restart and DNS policies, and the name-like spec fields.
 * Volume sources, resources, probes, affinity and security contexts are not checked yet.
 */
import { fieldErrors, FieldPath, type FieldError } from '../validation/field-errors';
import { validateAnnotations, validateLabels } from '../validation/metadata';
import { inclusiveRangeError, isDns1123Label, isDns1123Subdomain, maxLenError, validateName } from '../validation/names';
import type { Container, ContainerPort, EnvVar, PodSpec, PodTemplateSpec } from './pod-spec';

const RESTART_POLICIES = ['Always', 'OnFailure', 'Never'];
const DNS_POLICIES = ['ClusterFirst', 'ClusterFirstWithHostNet', 'Default', 'None'];
const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'];
const PORT_PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const MAX_INT32 = 2147483647;

export function validateDns1123Label(value: string, path: FieldPath): FieldError[] {
  return isDns1123Label(value).map((msg) => fieldErrors.invalid(path, value, msg));
}

export function validateDns1123Subdomain(value: string, path: FieldPath): FieldError[] {
  return isDns1123Subdomain(value).map((msg) => fieldErrors.invalid(path, value, msg));
}

/** upstream IsValidPortName (IANA service names). */
export function portNameErrors(name: string): string[] {
  const errs: string[] = [];
  if (name.length > 15) errs.push(maxLenError(15));
  if (!/^[-a-z0-9]+$/.test(name)) errs.push('must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)');
  if (!/[a-z]/.test(name)) errs.push('must contain at least one letter (a-z)');
  if (name.includes('--')) errs.push('must not contain consecutive hyphens');
  if (name.startsWith('-') || name.endsWith('-')) errs.push('must not begin or end with a hyphen');
  return errs;
}

/** upstream IsValidPortNum. */
export function portNumberErrors(port: number): string[] {
  return port >= 1 && port <= 65535 ? [] : [inclusiveRangeError(1, 65535)];
}

function validatePorts(ports: ContainerPort[] | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  (ports ?? []).forEach((port, i) => {
    const p = path.index(i);
    if (port.name) {
      const msgs = portNameErrors(port.name);
      if (msgs.length > 0) errs.push(...msgs.map((m) => fieldErrors.invalid(p.child('name'), port.name, m)));
      else if (names.has(port.name)) errs.push(fieldErrors.duplicate(p.child('name'), port.name));
      else names.add(port.name);
    }
    if (!port.containerPort) errs.push(fieldErrors.required(p.child('containerPort')));
    else errs.push(...portNumberErrors(port.containerPort).map((m) => fieldErrors.invalid(p.child('containerPort'), port.containerPort, m)));
    if (port.hostPort) errs.push(...portNumberErrors(port.hostPort).map((m) => fieldErrors.invalid(p.child('hostPort'), port.hostPort, m)));
    if (!port.protocol) errs.push(fieldErrors.required(p.child('protocol')));
    else if (!PORT_PROTOCOLS.includes(port.protocol)) errs.push(fieldErrors.notSupported(p.child('protocol'), port.protocol, PORT_PROTOCOLS));
  });
  return errs;
}

/** Env names under the relaxed rule (beta and on by default in 1.32): printable ASCII but '='. */
function validateEnv(env: EnvVar[] | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  (env ?? []).forEach((ev, i) => {
    const p = path.index(i).child('name');
    if (!ev.name) errs.push(fieldErrors.required(p));
    else if (/[^\x20-\x7e]|=/.test(ev.name)) {
      errs.push(fieldErrors.invalid(p, ev.name, "a valid environment variable name must consist only of printable ASCII characters other than '='"));
    }
  });
  return errs;
}

function validatePolicy(value: string | undefined, allowed: string[], path: FieldPath): FieldError[] {
  if (!value) return [fieldErrors.required(path)];
  return allowed.includes(value) ? [] : [fieldErrors.notSupported(path, value, allowed)];
}

function validateContainer(c: Container, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!c.name) errs.push(fieldErrors.required(path.child('name')));
  else errs.push(...validateDns1123Label(c.name, path.child('name')));
  if (!c.image) errs.push(fieldErrors.required(path.child('image')));
  const tmp = c.terminationMessagePolicy;
  if (!tmp) errs.push(fieldErrors.required(path.child('terminationMessagePolicy'), "must be 'File' or 'FallbackToLogsOnError'"));
  else if (tmp !== 'File' && tmp !== 'FallbackToLogsOnError') {
    errs.push(fieldErrors.invalid(path.child('terminationMessagePolicy'), tmp, "must be 'File' or 'FallbackToLogsOnError'"));
  }
  errs.push(...validatePorts(c.ports, path.child('ports')));
  errs.push(...validateEnv(c.env, path.child('env')));
  errs.push(...validatePolicy(c.imagePullPolicy, PULL_POLICIES, path.child('imagePullPolicy')));
  return errs;
}

/** Regular containers (at least one) and init containers; names unique across both. */
function validateContainers(spec: PodSpec, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  const containers = spec.containers ?? [];
  if (containers.length === 0) errs.push(fieldErrors.required(path.child('containers')));
  containers.forEach((c, i) => {
    const p = path.child('containers').index(i);
    errs.push(...validateContainer(c, p));
    if (names.has(c.name)) errs.push(fieldErrors.duplicate(p.child('name'), c.name));
    else names.add(c.name);
  });
  (spec.initContainers ?? []).forEach((c, i) => {
    const p = path.child('initContainers').index(i);
    if (c.name && names.has(c.name)) errs.push(fieldErrors.duplicate(p.child('name'), c.name));
    else names.add(c.name);
    errs.push(...validateContainer(c, p));
  });
  return errs;
}

function validateVolumes(spec: PodSpec, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const names = new Set<string>();
  (spec.volumes ?? []).forEach((v, i) => {
    const p = path.index(i).child('name');
    if (!v.name) errs.push(fieldErrors.required(p));
    else if (isDns1123Label(v.name).length > 0) errs.push(...validateDns1123Label(v.name, p));
    else if (names.has(v.name)) errs.push(fieldErrors.duplicate(p, v.name));
    else names.add(v.name);
  });
  return errs;
}

/** upstream ValidatePodSpec, the parts listed in this module's header. */
export function validatePodSpec(spec: PodSpec | undefined, path: FieldPath): FieldError[] {
  const s: PodSpec = spec ?? { containers: [] };
  const errs: FieldError[] = [];
  errs.push(...validateVolumes(s, path.child('volumes')));
  errs.push(...validateContainers(s, path));
  errs.push(...validatePolicy(s.restartPolicy, RESTART_POLICIES, path.child('restartPolicy')));
  errs.push(...validatePolicy(s.dnsPolicy, DNS_POLICIES, path.child('dnsPolicy')));
  errs.push(...validateLabels(s.nodeSelector, path.child('nodeSelector')));
  if (s.serviceAccountName) {
    for (const msg of validateName(s.serviceAccountName, 'dns1123Subdomain')) {
      errs.push(fieldErrors.invalid(path.child('serviceAccountName'), s.serviceAccountName, msg));
    }
  }
  if (s.nodeName) {
    for (const msg of validateName(s.nodeName, 'dns1123Subdomain')) errs.push(fieldErrors.invalid(path.child('nodeName'), s.nodeName, msg));
  }
  if (s.activeDeadlineSeconds !== undefined && (s.activeDeadlineSeconds < 1 || s.activeDeadlineSeconds > MAX_INT32)) {
    errs.push(fieldErrors.invalid(path.child('activeDeadlineSeconds'), s.activeDeadlineSeconds, inclusiveRangeError(1, MAX_INT32)));
  }
  if (s.hostname) errs.push(...validateDns1123Label(s.hostname, path.child('hostname')));
  if (s.subdomain) errs.push(...validateDns1123Label(s.subdomain, path.child('subdomain')));
  if (s.schedulerName) errs.push(...validateDns1123Subdomain(s.schedulerName, path.child('schedulerName')));
  if (s.dnsPolicy === 'None' && !s.dnsConfig) {
    errs.push(fieldErrors.required(path.child('dnsConfig'), 'must provide `dnsConfig` when `dnsPolicy` is None'));
  }
  return errs;
}

/** upstream ValidatePodTemplateSpec: template labels and annotations, then the spec. */
export function validatePodTemplateSpec(template: PodTemplateSpec, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  // Upstream names these paths `<template>.labels`, without `metadata`.
  errs.push(...validateLabels(template.metadata?.labels, path.child('labels')));
  errs.push(...validateAnnotations(template.metadata?.annotations, path.child('annotations')));
  errs.push(...validatePodSpec(template.spec, path.child('spec')));
  if (Array.isArray(template.spec?.ephemeralContainers) && template.spec.ephemeralContainers.length > 0) {
    errs.push(fieldErrors.forbidden(path.child('spec', 'ephemeralContainers'), 'ephemeral containers not allowed in pod template'));
  }
  return errs;
}

export const POD_SPEC_PATH = FieldPath.root('spec');
