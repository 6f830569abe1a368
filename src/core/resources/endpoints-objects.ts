/**
 * core/v1 Endpoints (the resource `endpoints`; `endpoints.ts` beside it is the verb table): the
 * addresses behind a Service, written by the endpoints controller and, for the `kubernetes`
 * Service, by the API server's endpoint reconciler. Upstream's endpoints strategy: namespaced,
 * created by PUT, updated unconditionally, checked by ValidateEndpoints.
 */
import type { ApiObject } from '../api';
import { fieldErrors, FieldPath, type FieldError } from '../validation/field-errors';
import { isDns1123Subdomain, isQualifiedName } from '../validation/names';
import { column, OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, OBJECT_META_NAME_DESCRIPTION, since, type TableDefinition } from '../table';
import { defineTyped, STANDARD_VERBS } from './common';
import type { DefineResource } from './definition';
import type { ObjectReference } from './events';
import { ipErrors, validateNonSpecialIP } from './ip-validation';
import { validateDns1123Label } from './pod-spec-validation';

export interface EndpointAddress {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: ObjectReference;
}

export interface EndpointPort {
  name?: string;
  port: number;
  protocol?: string;
  appProtocol?: string;
}

export interface EndpointSubset {
  addresses?: EndpointAddress[];
  notReadyAddresses?: EndpointAddress[];
  ports?: EndpointPort[];
}

export interface Endpoints extends ApiObject {
  subsets?: EndpointSubset[];
}

/** The protocols a Service, Endpoints or EndpointSlice port may name (upstream's supportedPortProtocols). */
export const PORT_PROTOCOLS: readonly string[] = ['SCTP', 'TCP', 'UDP'];

/** apimachinery's IsValidPortNum. */
export function portNumberErrors(port: number): string[] {
  return Number.isInteger(port) && port >= 1 && port <= 65535 ? [] : ['must be between 1 and 65535, inclusive'];
}

/** An `appProtocol`: a qualified name (upstream's ValidateQualifiedName). */
export function validateAppProtocol(value: string, path: FieldPath): FieldError[] {
  return isQualifiedName(value).map((m) => fieldErrors.invalid(path, value, m));
}

function validateEndpointAddress(address: EndpointAddress, path: FieldPath): FieldError[] {
  const ip = address.ip ?? '';
  const errs: FieldError[] = ipErrors(ip).map((m) => fieldErrors.invalid(path.child('ip'), ip, m));
  if (address.hostname) errs.push(...validateDns1123Label(address.hostname, path.child('hostname')));
  // A node's name is a DNS subdomain (upstream's ValidateNodeName).
  if (address.nodeName !== undefined && address.nodeName !== null) {
    const nodeName = address.nodeName;
    errs.push(...isDns1123Subdomain(nodeName).map((m) => fieldErrors.invalid(path.child('nodeName'), nodeName, m)));
  }
  errs.push(...validateNonSpecialIP(ip, path.child('ip')));
  return errs;
}

function validateEndpointPort(port: EndpointPort, requireName: boolean, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (requireName && !port.name) errs.push(fieldErrors.required(path.child('name')));
  else if (port.name) errs.push(...validateDns1123Label(port.name, path.child('name')));
  errs.push(...portNumberErrors(port.port ?? 0).map((m) => fieldErrors.invalid(path.child('port'), port.port ?? 0, m)));
  if (!port.protocol) errs.push(fieldErrors.required(path.child('protocol')));
  else if (!PORT_PROTOCOLS.includes(port.protocol)) errs.push(fieldErrors.notSupported(path.child('protocol'), port.protocol, PORT_PROTOCOLS));
  if (port.appProtocol !== undefined && port.appProtocol !== null) errs.push(...validateAppProtocol(port.appProtocol, path.child('appProtocol')));
  return errs;
}

/** upstream's ValidateEndpoints (metadata is the registry's): every subset has an address, and its addresses and ports are valid. */
export function validateEndpoints(endpoints: Endpoints): FieldError[] {
  const errs: FieldError[] = [];
  const subsets = FieldPath.root('subsets');
  (endpoints.subsets ?? []).forEach((ss, i) => {
    const at = subsets.index(i);
    // A headless Service's subsets may have no ports, never no addresses.
    if (!ss.addresses?.length && !ss.notReadyAddresses?.length) errs.push(fieldErrors.required(at, 'must specify `addresses` or `notReadyAddresses`'));
    (ss.addresses ?? []).forEach((a, j) => errs.push(...validateEndpointAddress(a, at.child('addresses').index(j))));
    (ss.notReadyAddresses ?? []).forEach((a, j) => errs.push(...validateEndpointAddress(a, at.child('notReadyAddresses').index(j))));
    const ports = ss.ports ?? [];
    ports.forEach((p, j) => errs.push(...validateEndpointPort(p, ports.length > 1, at.child('ports').index(j))));
  });
  return errs;
}

/** Go's net.JoinHostPort: an IPv6 address in brackets. */
function hostPort(ip: string, port: number): string {
  return ip.includes(':') ? `[${ip}]:${port}` : `${ip}:${port}`;
}

/**
 * upstream's formatEndpoints: the first three ready `ip:port` pairs (bare IPs for a subset
 * without ports), then ` + N more...`; `<none>` when there are none.
 */
export function formatEndpoints(endpoints: Endpoints): string {
  const subsets = endpoints.subsets ?? [];
  if (subsets.length === 0) return '<none>';
  const max = 3;
  const list: string[] = [];
  let more = false;
  let count = 0;
  const add = (text: string) => {
    if (list.length === max) more = true;
    else list.push(text);
  };
  for (const ss of subsets) {
    const addresses = ss.addresses ?? [];
    if (!ss.ports?.length) {
      count += addresses.length;
      for (const a of addresses) add(a.ip);
      continue;
    }
    for (const port of ss.ports) {
      count += addresses.length;
      for (const a of addresses) add(hostPort(a.ip, port.port));
    }
  }
  const text = list.join(',');
  if (more) return `${text} + ${count - max} more...`;
  return text || '<none>';
}

const ENDPOINTS_TABLE: TableDefinition<Endpoints> = {
  columns: [
    column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
    column(
      'Endpoints',
      'string',
      'The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.',
    ),
    column('Age', 'string', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
  ],
  row: (ep, { now }) => ({ cells: [ep.metadata?.name ?? '', formatEndpoints(ep), since(ep.metadata?.creationTimestamp, now)] }),
};

export const defineEndpoints: DefineResource = () =>
  defineTyped<Endpoints>({
    group: '',
    version: 'v1',
    kind: 'Endpoints',
    resource: 'endpoints',
    singular: 'endpoints',
    namespaced: true,
    shortNames: ['ep'],
    verbs: STANDARD_VERBS,
    nameRule: 'dns1123Subdomain',
    allowCreateOnUpdate: true,
    allowUnconditionalUpdate: true,
    // upstream's SetDefaults_EndpointPort: TCP unless stated.
    defaults: (ep) => {
      for (const ss of ep.subsets ?? []) for (const port of ss.ports ?? []) port.protocol ||= 'TCP';
    },
    validate: validateEndpoints,
    table: ENDPOINTS_TABLE,
  });
