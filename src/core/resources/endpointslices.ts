/**
 * discovery/v1 EndpointSlice: a Service's endpoints in slices, written by the endpointslice
 * controller (and the API server's endpoint reconciler for `kubernetes`). Upstream's strategy:
 * generation from 1, grown by any change outside metadata; `deprecatedTopology` not writable
 * through v1 (a create drops it, moving a hostname label's entry to `nodeName`); checked
 * by ValidateEndpointSlice, with `addressType` immutable.
 */
import type { ApiObject } from '../api';
import { fieldErrors, FieldPath, type FieldError } from '../validation/field-errors';
import { isDns1123Label, isDns1123Subdomain } from '../validation/names';
import { column, OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, OBJECT_META_NAME_DESCRIPTION, since, type TableDefinition } from '../table';
import { jsonEqual } from '../../util/json-values';
import { defineTyped, STANDARD_VERBS } from './common';
import type { DefineResource } from './definition';
import type { ObjectReference } from './events';
import { PORT_PROTOCOLS, validateAppProtocol } from './endpoints-objects';
import { validateIPv4Address, validateIPv6Address, validateNonSpecialIP } from './ip-validation';
import { validateDns1123Label } from './pod-spec-validation';

export interface EndpointConditions {
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
}

export interface Endpoint {
  addresses: string[];
  conditions?: EndpointConditions;
  hostname?: string;
  targetRef?: ObjectReference;
  deprecatedTopology?: Record<string, string>;
  nodeName?: string;
  zone?: string;
  hints?: { forZones?: Array<{ name: string }> };
}

export interface EndpointSlicePort {
  name?: string;
  protocol?: string;
  port?: number;
  appProtocol?: string;
}

export interface EndpointSlice extends ApiObject {
  addressType: string;
  endpoints: Endpoint[] | null;
  ports?: EndpointSlicePort[] | null;
}

/** Upstream's limits per slice: endpoints, addresses per endpoint, ports. */
export const MAX_SLICE_ENDPOINTS = 1000;
const MAX_ADDRESSES = 100;
const MAX_PORTS = 100;

const ADDRESS_TYPES = ['FQDN', 'IPv4', 'IPv6'];
/** v1beta1's `IP`, still accepted on update of a slice stored with it. */
const DEPRECATED_ADDRESS_TYPES = ['IP'];

/** apimachinery's IsFullyQualifiedDomainName. */
function validateFqdn(value: string, path: FieldPath): FieldError[] {
  if (value === '') return [fieldErrors.required(path)];
  const name = value.endsWith('.') ? value.slice(0, -1) : value;
  const subdomain = isDns1123Subdomain(name);
  if (subdomain.length) return [fieldErrors.invalid(path, name, subdomain.join(','))];
  const labels = name.split('.');
  if (labels.length < 2) return [fieldErrors.invalid(path, name, 'should be a domain with at least two segments separated by dots')];
  for (const label of labels) {
    const errs = isDns1123Label(label);
    if (errs.length) return [fieldErrors.invalid(path, label, errs.join(','))];
  }
  return [];
}

function validateAddress(address: string, addressType: string, path: FieldPath): FieldError[] {
  switch (addressType) {
    case 'IPv4':
      return [...validateIPv4Address(address, path), ...validateNonSpecialIP(address, path)];
    case 'IPv6':
      return [...validateIPv6Address(address, path), ...validateNonSpecialIP(address, path)];
    case 'FQDN':
      return validateFqdn(address, path);
    default:
      // Unknown types (and the deprecated `IP`, checked loosely) fall through as upstream's do.
      return [];
  }
}

function validateSliceEndpoints(endpoints: readonly Endpoint[], addressType: string): FieldError[] {
  const path = FieldPath.root('endpoints');
  if (endpoints.length > MAX_SLICE_ENDPOINTS) return [fieldErrors.tooMany(path, endpoints.length, MAX_SLICE_ENDPOINTS)];
  const errs: FieldError[] = [];
  endpoints.forEach((ep, i) => {
    const at = path.index(i);
    const addresses = ep.addresses ?? [];
    if (addresses.length === 0) errs.push(fieldErrors.required(at.child('addresses'), 'must contain at least 1 address'));
    else if (addresses.length > MAX_ADDRESSES) errs.push(fieldErrors.tooMany(at.child('addresses'), addresses.length, MAX_ADDRESSES));
    addresses.forEach((a, j) => errs.push(...validateAddress(a, addressType, at.child('addresses').index(j))));
    if (ep.hostname !== undefined && ep.hostname !== null) errs.push(...validateDns1123Label(ep.hostname, at.child('hostname')));
  });
  return errs;
}

function validateSlicePorts(ports: readonly EndpointSlicePort[]): FieldError[] {
  const path = FieldPath.root('ports');
  if (ports.length > MAX_PORTS) return [fieldErrors.tooMany(path, ports.length, MAX_PORTS)];
  const errs: FieldError[] = [];
  const names = new Set<string>();
  ports.forEach((port, i) => {
    const at = path.index(i);
    const name = port.name ?? '';
    if (name) errs.push(...validateDns1123Label(name, at.child('name')));
    if (names.has(name)) errs.push(fieldErrors.duplicate(at.child('name'), name));
    else names.add(name);
    if (port.protocol === undefined || port.protocol === null) errs.push(fieldErrors.required(at.child('protocol')));
    else if (!PORT_PROTOCOLS.includes(port.protocol)) errs.push(fieldErrors.notSupported(at.child('protocol'), port.protocol, PORT_PROTOCOLS));
    if (port.appProtocol !== undefined && port.appProtocol !== null) errs.push(...validateAppProtocol(port.appProtocol, at.child('appProtocol')));
  });
  return errs;
}

/** upstream's ValidateEndpointSlice (metadata is the registry's), with the address types allowed. */
export function validateEndpointSlice(slice: EndpointSlice, addressTypes: readonly string[] = ADDRESS_TYPES): FieldError[] {
  const errs: FieldError[] = [];
  const addressType = slice.addressType ?? '';
  if (addressType === '') errs.push(fieldErrors.required(FieldPath.root('addressType')));
  else if (!addressTypes.includes(addressType)) errs.push(fieldErrors.notSupported(FieldPath.root('addressType'), addressType, addressTypes));
  errs.push(...validateSliceEndpoints(slice.endpoints ?? [], addressType), ...validateSlicePorts(slice.ports ?? []));
  return errs;
}

/**
 * upstream's dropTopologyOnV1: a v1 write cannot set `deprecatedTopology`. On create it is
 * dropped (its hostname moved to an unset `nodeName`); on update an endpoint keeps only what
 * the stored slice's endpoint at the same place held, and nothing once it names its node.
 */
function dropTopology(slice: EndpointSlice, hostnameKey: string, old?: EndpointSlice): void {
  (slice.endpoints ?? []).forEach((ep, i) => {
    if (!old) {
      const host = ep.deprecatedTopology?.[hostnameKey];
      if (ep.nodeName === undefined && host) ep.nodeName = host;
      delete ep.deprecatedTopology;
      return;
    }
    const kept = old.endpoints?.[i]?.deprecatedTopology;
    if (ep.nodeName !== undefined || !kept) delete ep.deprecatedTopology;
    else ep.deprecatedTopology = kept;
  });
}

function withoutMetadata(slice: EndpointSlice): unknown {
  const { metadata: _metadata, ...rest } = slice;
  return rest;
}

/** upstream's listWithMoreString: the first three, then ` + N more...`; `<unset>` for none. */
function listWithMore(items: readonly string[]): string {
  const max = 3;
  const text = items.slice(0, max).join(',');
  if (items.length > max) return `${text} + ${items.length - max} more...`;
  return text || '<unset>';
}

/** upstream's formatDiscoveryPorts: a port's number, else its name, else `*` (all ports). */
export function formatSlicePorts(ports: readonly EndpointSlicePort[] | null | undefined): string {
  return listWithMore((ports ?? []).map((p) => (p.port !== undefined && p.port !== null ? String(p.port) : (p.name ?? '*'))));
}

/** upstream's formatDiscoveryEndpoints: every endpoint's addresses. */
export function formatSliceEndpoints(endpoints: readonly Endpoint[] | null | undefined): string {
  return listWithMore((endpoints ?? []).flatMap((ep) => ep.addresses ?? []));
}

const ENDPOINT_SLICE_TABLE: TableDefinition<EndpointSlice> = {
  columns: [
    column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
    column(
      'AddressType',
      'string',
      'addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice must be the same type. This field is immutable after creation. The following address types are currently supported: * IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain Name.',
    ),
    column(
      'Ports',
      'string',
      'ports specifies the list of network ports exposed by each endpoint in this slice. Each port must have a unique name. When ports is empty, it indicates that there are no defined ports. When a port is defined with a nil port value, it indicates "all ports". Each slice may include a maximum of 100 ports.',
    ),
    column('Endpoints', 'string', 'endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints.'),
    column('Age', 'string', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
  ],
  row: (slice, { now }) => ({
    cells: [
      slice.metadata?.name ?? '',
      slice.addressType ?? '',
      formatSlicePorts(slice.ports),
      formatSliceEndpoints(slice.endpoints),
      since(slice.metadata?.creationTimestamp, now),
    ],
  }),
};

export const defineEndpointSlices: DefineResource = (naming) =>
  defineTyped<EndpointSlice>({
    group: naming.groups.discovery,
    version: 'v1',
    kind: 'EndpointSlice',
    resource: 'endpointslices',
    singular: 'endpointslice',
    namespaced: true,
    verbs: STANDARD_VERBS,
    nameRule: 'dns1123Subdomain',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    tracksGeneration: true,
    // upstream's SetDefaults_EndpointPort: an unnamed port is named '', TCP unless stated.
    defaults: (slice) => {
      for (const port of slice.ports ?? []) {
        port.name ??= '';
        port.protocol ??= 'TCP';
      }
    },
    specChanged: (slice, old) => !jsonEqual(withoutMetadata(slice), withoutMetadata(old)),
    // v1beta1 kept the node's hostname label (`naming.key('hostname')`) in `topology`.
    prepareForCreate: (slice) => dropTopology(slice, naming.key('hostname')),
    prepareForUpdate: (slice, old) => dropTopology(slice, naming.key('hostname'), old),
    validate: (slice) => validateEndpointSlice(slice),
    validateOnlyOnCreate: true,
    validateUpdate: (slice, old) => {
      const errs = validateEndpointSlice(slice, [...ADDRESS_TYPES, ...DEPRECATED_ADDRESS_TYPES]);
      if (slice.addressType !== old.addressType) errs.push(fieldErrors.immutable(FieldPath.root('addressType'), slice.addressType));
      return errs;
    },
    table: ENDPOINT_SLICE_TABLE,
  });
