/**
 * Front-proxy authentication (src/authn/request-header.ts) through the whole chain, as upstream's
 * request-header authenticator behaves in front of the x509 and token methods: certificates
 * made by the test with @peculiar/x509, one CA for the front proxy and one for ordinary clients.
 */
import { X509Certificate } from 'node:crypto';
import { type AuthenticationResult, type Credentials, type PeerCertificate, createAuthenticator, requestHeaderAuthenticator } from '../../src/authn';
import type { RequestHeaderOptions } from '../../src/authn';
import { ManualClock } from '../../src/clock';
import { type TestPki, createTestPki } from '../grpc/fixtures/certs';

let frontProxyPki: TestPki;
let clientPki: TestPki;
let proxyCert: string;
let otherProxyCert: string;
let clientCertNamedLikeProxy: string;

beforeAll(async () => {
  frontProxyPki = await createTestPki('front-proxy-ca');
  clientPki = await createTestPki('client-ca');
  proxyCert = (await frontProxyPki.issueClient('CN=front-proxy-client')).cert;
  otherProxyCert = (await frontProxyPki.issueClient('CN=someone-else')).cert;
  clientCertNamedLikeProxy = (await clientPki.issueClient('CN=front-proxy-client, O=devs')).cert;
});

/**
 * A client certificate as the HTTPS door presents it: `verified` is what the TLS layer says,
 * which trusts both CAs once a front-proxy CA is configured (docs/FRONT-PROXY.md).
 */
function peer(pem: string, verified = true): PeerCertificate {
  const x = new X509Certificate(pem);
  const field = (name: string) => x.subject.split('\n').flatMap((line) => (line.startsWith(`${name}=`) ? [line.slice(name.length + 1)] : []));
  return { verified, commonName: field('CN')[0] ?? '', organizations: field('O'), extKeyUsage: x.keyUsage, der: x.raw };
}

/** A request's headers as the gateway holds them: each line its own value, removable. */
class Headers {
  readonly lines = new Map<string, string[]>();
  constructor(entries: Array<[string, string]>) {
    for (const [name, value] of entries) {
      const key = name.toLowerCase();
      this.lines.set(key, [...(this.lines.get(key) ?? []), value]);
    }
  }
  get headers(): Record<string, string> {
    return Object.fromEntries([...this.lines].map(([k, v]) => [k, v.join(', ')]));
  }
  headerValues(name: string): string[] {
    return this.lines.get(name) ?? [];
  }
  removeHeader(name: string): void {
    this.lines.delete(name);
  }
}

const STANDARD: Omit<RequestHeaderOptions, 'clientCa'> = {
  allowedNames: ['front-proxy-client'],
  usernameHeaders: ['X-Remote-User'],
  uidHeaders: [],
  groupHeaders: ['X-Remote-Group'],
  extraHeaderPrefixes: ['X-Remote-Extra-'],
};

function chain(options: Partial<RequestHeaderOptions> = {}) {
  const requestHeader = requestHeaderAuthenticator({ clientCa: frontProxyPki.ca, x509ClientCa: () => clientPki.ca, ...STANDARD, ...options });
  return createAuthenticator({ requestHeader, certificates: true, tokens: [], anonymous: true });
}

async function authenticate(options: Partial<RequestHeaderOptions>, credentials: Credentials): Promise<AuthenticationResult> {
  return await chain(options).authenticate(credentials);
}

const PROXIED: Array<[string, string]> = [
  ['X-Remote-User', 'alice'],
  ['X-Remote-Group', 'devs'],
  ['X-Remote-Group', 'ops, on-call'],
  ['X-Remote-Extra-Scopes', 'read'],
  ['X-Remote-Extra-Scopes', 'write'],
  ['X-Remote-Extra-Acme.com%2Fproject', 'keelson'],
  ['Accept', 'application/json'],
];

describe('request-header authentication', () => {
  it('takes the user, groups and extra from the headers of a front proxy whose certificate its CA signed', async () => {
    const headers = new Headers(PROXIED);
    const result = await authenticate({}, { certificate: peer(proxyCert), headers });
    expect(result).toEqual({
      outcome: 'authenticated',
      user: {
        username: 'alice',
        // Each header line is one group, commas and all, as Go's header values are.
        groups: ['devs', 'ops, on-call', 'system:authenticated'],
        extra: { scopes: ['read', 'write'], 'acme.com/project': ['keelson'] },
      },
    });
  });

  it('removes the headers it read, and only those, once they named the user', async () => {
    const headers = new Headers(PROXIED);
    await authenticate({}, { certificate: peer(proxyCert), headers });
    expect([...headers.lines.keys()]).toEqual(['accept']);
  });

  it('answers at once, without a promise, as a verified client certificate is', () => {
    const result = chain().authenticate({ certificate: peer(proxyCert), headers: new Headers(PROXIED) });
    expect(result).not.toBeInstanceOf(Promise);
    expect((result as AuthenticationResult & { outcome: 'authenticated' }).user.username).toBe('alice');
  });

  it('ignores the headers of a client whose certificate the client CA signed, whatever its name: that client is itself', async () => {
    const headers = new Headers(PROXIED);
    const result = await authenticate({}, { certificate: peer(clientCertNamedLikeProxy), headers });
    expect(result).toEqual({ outcome: 'authenticated', user: { username: 'front-proxy-client', groups: ['devs', 'system:authenticated'] } });
    expect(headers.headerValues('x-remote-user')).toEqual(['alice']);
  });

  it('refuses a front-proxy certificate whose common name is not allowed, and it is no ordinary client either (401)', async () => {
    const result = await authenticate({}, { certificate: peer(otherProxyCert), headers: new Headers(PROXIED) });
    expect(result.outcome).toBe('rejected');
    expect((result as { reason: string }).reason).toContain('x509: subject with cn=someone-else is not in the allowed list');
  });

  it('lets any certificate its CA signed speak when no names are listed', async () => {
    const result = await authenticate({ allowedNames: [] }, { certificate: peer(otherProxyCert), headers: new Headers(PROXIED) });
    expect(result.outcome === 'authenticated' && result.user.username).toBe('alice');
  });

  it('believes no header without a client certificate: the request goes on as anonymous, headers untouched', async () => {
    const headers = new Headers(PROXIED);
    const result = await authenticate({}, { headers });
    expect(result).toEqual({ outcome: 'authenticated', user: { username: 'system:anonymous', groups: ['system:unauthenticated'] } });
    expect(headers.headerValues('x-remote-user')).toEqual(['alice']);
  });

  it('refuses a front-proxy certificate that names no user: it is not a client certificate of this server (401)', async () => {
    const result = await authenticate({}, { certificate: peer(proxyCert), headers: new Headers([['Accept', '*/*']]) });
    expect(result.outcome).toBe('rejected');
    expect((result as { reason: string }).reason).toContain('x509: certificate signed by unknown authority');
  });

  it('speaks for no gRPC call: a call has no headers to name a user', async () => {
    const result = await authenticate({}, { certificate: peer(proxyCert) });
    expect(result.outcome).toBe('rejected');
  });

  it('accepts a front-proxy certificate as an ordinary client when the same CA signs both (upstream warns against it)', async () => {
    const requestHeader = requestHeaderAuthenticator({ clientCa: frontProxyPki.ca, x509ClientCa: () => frontProxyPki.ca, ...STANDARD });
    const authenticator = createAuthenticator({ requestHeader, certificates: true, tokens: [], anonymous: true });
    const result = await authenticator.authenticate({ certificate: peer(proxyCert), headers: new Headers([]) });
    expect(result.outcome === 'authenticated' && result.user.username).toBe('front-proxy-client');
  });

  it('refuses an expired front-proxy certificate', async () => {
    const clock = new ManualClock(Date.now() + 48 * 3600_000);
    const result = await authenticate({ clock }, { certificate: peer(proxyCert), headers: new Headers(PROXIED) });
    expect(result.outcome).toBe('rejected');
    expect((result as { reason: string }).reason).toContain('expired or is not yet valid');
  });

  it('takes the first username header that has a value, in the order configured, and the uid from the uid headers', async () => {
    const headers = new Headers([
      ['X-Forwarded-User', ''],
      ['X-Remote-User', 'bob'],
      ['X-Remote-Uid', 'u-42'],
    ]);
    const result = await authenticate(
      { usernameHeaders: ['X-Forwarded-User', 'X-Remote-User'], uidHeaders: ['X-Remote-Uid'] },
      { certificate: peer(proxyCert), headers },
    );
    expect(result).toEqual({ outcome: 'authenticated', user: { username: 'bob', uid: 'u-42', groups: ['system:authenticated'] } });
    expect([...headers.lines.keys()]).toEqual([]);
  });

  it('decodes extra keys as URL path segments, lower-casing the name first, and keeps a malformed key as sent', async () => {
    const headers = new Headers([
      ['X-Remote-User', 'carol'],
      ['X-Remote-Extra-Upper%41', 'a'],
      ['X-Remote-Extra-Plus+Sign', 'b'],
      ['X-Remote-Extra-Bad%zz', 'c'],
    ]);
    const result = await authenticate({}, { certificate: peer(proxyCert), headers });
    expect(result.outcome === 'authenticated' && result.user.extra).toEqual({ upperA: ['a'], 'plus+sign': ['b'], 'bad%zz': ['c'] });
  });

  it('reads no headers when none are configured (upstream kube-apiserver has no default header names)', async () => {
    const result = await authenticate(
      { usernameHeaders: [], groupHeaders: [], extraHeaderPrefixes: [] },
      { certificate: peer(proxyCert), headers: new Headers(PROXIED) },
    );
    expect(result.outcome).toBe('rejected');
  });

  it('refuses a front-proxy CA bundle that holds no certificate', () => {
    expect(() => requestHeaderAuthenticator({ clientCa: 'not a certificate', ...STANDARD })).toThrow('the front-proxy CA bundle holds no PEM certificate');
  });
});
