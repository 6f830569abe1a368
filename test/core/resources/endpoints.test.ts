/**
 * core/v1 Endpoints and discovery/v1 EndpointSlice through the generic store: defaults, and
 * upstream's ValidateEndpoints / ValidateEndpointSlice messages for bad input, plus the printers.
 */
import type { Endpoints, EndpointSlice } from '../../../src/core/resources';
import { formatEndpoints } from '../../../src/core/resources/endpoints-objects';
import { formatSliceEndpoints, formatSlicePorts } from '../../../src/core/resources/endpointslices';
import { create, definition, stored, update } from './through-store';

const endpoints = definition('endpoints');
const slices = definition('endpointslices');
const meta = { name: 'web', namespace: 'default' };

describe('Endpoints', () => {
  it('defaults port protocols to TCP and takes a valid object', async () => {
    const { object, messages } = await create<Endpoints>(endpoints, {
      metadata: meta,
      subsets: [{ addresses: [{ ip: '10.1.2.3', nodeName: 'n1' }], notReadyAddresses: [{ ip: '10.1.2.4' }], ports: [{ port: 80 }] }],
    });
    expect(messages).toEqual([]);
    expect(object.subsets![0]!.ports).toEqual([{ port: 80, protocol: 'TCP' }]);
  });

  it('refuses subsets without addresses, bad and special IPs, bad hostnames and node names, and bad ports', async () => {
    const { messages } = await create(endpoints, {
      metadata: meta,
      subsets: [
        { ports: [{ port: 80 }] },
        {
          addresses: [{ ip: 'nope' }, { ip: '127.0.0.1' }, { ip: '169.254.1.1', hostname: 'Bad_Host' }, { ip: '0.0.0.0', nodeName: 'UPPER' }],
          ports: [
            { port: 0, protocol: 'HTTP' },
            { name: 'a', port: 70000, appProtocol: 'bad proto' },
          ],
        },
      ],
    });
    expect(messages).toEqual([
      'subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`',
      'subsets[1].addresses[0].ip: Invalid value: "nope": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)',
      'subsets[1].addresses[0].ip: Invalid value: "nope": must be a valid IP address',
      'subsets[1].addresses[1].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
      "subsets[1].addresses[2].hostname: Invalid value: \"Bad_Host\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      'subsets[1].addresses[2].ip: Invalid value: "169.254.1.1": may not be in the link-local range (169.254.0.0/16, fe80::/10)',
      "subsets[1].addresses[3].nodeName: Invalid value: \"UPPER\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
      'subsets[1].addresses[3].ip: Invalid value: "0.0.0.0": may not be unspecified (0.0.0.0)',
      'subsets[1].ports[0].name: Required value',
      'subsets[1].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive',
      'subsets[1].ports[0].protocol: Unsupported value: "HTTP": supported values: "SCTP", "TCP", "UDP"',
      'subsets[1].ports[1].port: Invalid value: 70000: must be between 1 and 65535, inclusive',
      "subsets[1].ports[1].appProtocol: Invalid value: \"bad proto\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
    ]);
  });

  it('prints the first three ready address:port pairs and how many more', () => {
    const ep: Endpoints = {
      subsets: [{ addresses: ['10.0.0.1', '10.0.0.2'].map((ip) => ({ ip })), ports: [{ port: 80 }, { port: 443 }] }, { addresses: [{ ip: 'fd00::1' }] }],
    };
    expect(formatEndpoints(ep)).toBe('10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 2 more...');
    expect(formatEndpoints({ subsets: [{ addresses: [{ ip: 'fd00::1' }], ports: [{ port: 80 }] }] })).toBe('[fd00::1]:80');
    expect(formatEndpoints({})).toBe('<none>');
    expect(formatEndpoints({ subsets: [{ notReadyAddresses: [{ ip: '10.0.0.9' }], ports: [{ port: 80 }] }] })).toBe('<none>');
  });
});

describe('EndpointSlice', () => {
  const slice = (extra: Record<string, unknown>) => ({ metadata: meta, addressType: 'IPv4', endpoints: [], ...extra });

  it('defaults port names and protocols, starts generation at 1 and drops deprecatedTopology, moving its hostname to nodeName', async () => {
    const { object, messages } = await create<EndpointSlice>(
      slices,
      slice({ endpoints: [{ addresses: ['10.1.2.3'], deprecatedTopology: { 'kubernetes.io/hostname': 'n1', zone: 'a' } }], ports: [{ port: 80 }] }),
    );
    expect(messages).toEqual([]);
    expect(object.ports).toEqual([{ name: '', protocol: 'TCP', port: 80 }]);
    expect(object.metadata?.generation).toBe(1);
    expect(object.endpoints).toEqual([{ addresses: ['10.1.2.3'], nodeName: 'n1' }]);
  });

  it('refuses bad address types, addresses of the wrong family or special, bad FQDNs, duplicate and bad ports', async () => {
    expect((await create(slices, slice({ addressType: '' }))).messages).toEqual(['addressType: Required value']);
    expect((await create(slices, slice({ addressType: 'IP' }))).messages).toEqual([
      'addressType: Unsupported value: "IP": supported values: "FQDN", "IPv4", "IPv6"',
    ]);
    const { messages } = await create(
      slices,
      slice({
        endpoints: [{ addresses: [] }, { addresses: ['fd00::1', '127.0.0.1'], hostname: 'A' }],
        ports: [
          { name: 'http', port: 80, protocol: 'QUIC' },
          { name: 'http', port: 81 },
        ],
      }),
    );
    expect(messages).toEqual([
      'endpoints[0].addresses: Required value: must contain at least 1 address',
      'endpoints[1].addresses[0]: Invalid value: "fd00::1": must be a valid IPv4 address',
      'endpoints[1].addresses[1]: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)',
      "endpoints[1].hostname: Invalid value: \"A\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
      'ports[0].protocol: Unsupported value: "QUIC": supported values: "SCTP", "TCP", "UDP"',
      'ports[1].name: Duplicate value: "http"',
    ]);
    const fqdn = await create(slices, slice({ addressType: 'FQDN', endpoints: [{ addresses: ['example.com.', 'single', 'Bad.Example'] }] }));
    expect(fqdn.messages).toEqual([
      'endpoints[0].addresses[1]: Invalid value: "single": should be a domain with at least two segments separated by dots',
      "endpoints[0].addresses[2]: Invalid value: \"Bad.Example\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ]);
    const many = await create(slices, slice({ endpoints: Array.from({ length: 1001 }, (_, i) => ({ addresses: [`10.0.${i >> 8}.${(i & 255) + 1}`] })) }));
    expect(many.messages).toEqual(['endpoints: Too many: 1001: must have at most 1000 items']);
  });

  it('keeps addressType immutable and grows generation when anything but metadata changes', async () => {
    const old = await stored<EndpointSlice>(slices, slice({ endpoints: [{ addresses: ['10.1.2.3'] }] }));
    const changed = await update<EndpointSlice>(slices, { ...old, addressType: 'IPv6', endpoints: [] }, old);
    expect(changed.messages).toEqual(['addressType: Invalid value: "IPv6": field is immutable']);
    const moved = await update<EndpointSlice>(slices, { ...old, endpoints: [{ addresses: ['10.1.2.4'] }] }, old);
    expect(moved.messages).toEqual([]);
    expect(moved.object.metadata?.generation).toBe(2);
  });

  it('prints ports (number, else name, else *) and addresses, three then how many more, <unset> for none', () => {
    expect(formatSlicePorts([{ port: 80 }, { name: 'dns' }, {}, { port: 9 }])).toBe('80,dns,* + 1 more...');
    expect(formatSlicePorts(null)).toBe('<unset>');
    expect(formatSliceEndpoints([{ addresses: ['10.0.0.1', '10.0.0.2'] }, { addresses: ['10.0.0.3'] }])).toBe('10.0.0.1,10.0.0.2,10.0.0.3');
    expect(formatSliceEndpoints([])).toBe('<unset>');
  });
});
