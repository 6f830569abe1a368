/**
 * OIDC ID tokens against a provider served over HTTPS by the test (discovery document and JWKS,
 * trusted through the CA given as `--oidc-ca-file`): valid, expired, malformed, wrong-audience,
 * wrong-issuer, wrong-signature tokens and rotated-away keys, the username and group claims
 * with upstream's prefixes, required claims and unverified emails.
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { SignJWT, exportJWK } from 'jose';
import { oidcAuthenticator, type OidcAuthenticator, type OidcOptions } from '../../src/authn';
import { ManualClock } from '../../src/clock';
import { createTestPki, type TestPki } from '../grpc/fixtures/certs';

interface Key {
  kid: string;
  privateKey: KeyObject;
  jwk: Record<string, unknown>;
}

async function newKey(kid: string): Promise<Key> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'RS256', use: 'sig' } };
}

let pki: TestPki;
let server: https.Server;
let issuer: string;
let served: Key[] = [];
let discoveryIssuer: string | undefined;
const clock = new ManualClock(Date.parse('2026-06-01T00:00:00Z'));
const now = () => Math.floor(clock.now() / 1000);
const authenticators: OidcAuthenticator[] = [];

beforeAll(async () => {
  pki = await createTestPki();
  server = https.createServer({ key: pki.server.key, cert: pki.server.cert }, (req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/.well-known/openid-configuration') res.end(JSON.stringify({ issuer: discoveryIssuer ?? issuer, jwks_uri: `${issuer}/keys` }));
    else if (req.url === '/keys') res.end(JSON.stringify({ keys: served.map((k) => k.jwk) }));
    else res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  served = [await newKey('k1')];
});

afterAll(async () => {
  for (const a of authenticators) a.close();
  await new Promise((resolve) => server.close(resolve));
});

async function authenticator(extra: Partial<OidcOptions> = {}): Promise<OidcAuthenticator> {
  const a = oidcAuthenticator({
    issuerUrl: issuer,
    clientId: 'kubectl',
    usernameClaim: 'sub',
    requiredClaims: {},
    ca: pki.ca,
    signingAlgs: ['RS256'],
    clock,
    ...extra,
  });
  authenticators.push(a);
  await a.ready();
  return a;
}

function token(claims: Record<string, unknown> = {}, key: Key = served[0]!, options: { exp?: number } = {}): Promise<string> {
  return new SignJWT({ sub: 'alice', email: 'alice@example.com', email_verified: true, groups: ['dev', 'ops'], ...claims })
    .setProtectedHeader({ alg: 'RS256', kid: key.kid })
    .setIssuer((claims.iss as string) ?? issuer)
    .setAudience((claims.aud as string) ?? 'kubectl')
    .setIssuedAt(now())
    .setExpirationTime(options.exp ?? now() + 3600)
    .sign(key.privateKey);
}

describe('OIDC authenticator', () => {
  it('authenticates a valid ID token; claims other than email get the issuer prefix', async () => {
    const a = await authenticator({ groupsClaim: 'groups', groupsPrefix: 'oidc:' });
    expect(await a.authenticateToken(await token())).toEqual({
      outcome: 'authenticated',
      user: { username: `${issuer}#alice`, groups: ['oidc:dev', 'oidc:ops'] },
    });
  });

  it('email claims are not prefixed, explicit prefixes apply, "-" disables the prefix', async () => {
    expect(await (await authenticator({ usernameClaim: 'email' })).authenticateToken(await token())).toMatchObject({ user: { username: 'alice@example.com' } });
    expect(await (await authenticator({ usernamePrefix: 'oidc:' })).authenticateToken(await token())).toMatchObject({ user: { username: 'oidc:alice' } });
    expect(await (await authenticator({ usernamePrefix: '-' })).authenticateToken(await token())).toMatchObject({ user: { username: 'alice' } });
  });

  it('refuses expired, wrong-audience and wrong-signature tokens, unverified emails and missing required claims', async () => {
    const a = await authenticator({ requiredClaims: { hd: 'example.com' } });
    expect((await a.authenticateToken(await token({ hd: 'example.com' }, served[0], { exp: now() - 1 }))).outcome).toBe('rejected');
    expect((await a.authenticateToken(await token({ hd: 'example.com', aud: 'someone-else' }))).outcome).toBe('rejected');
    const stranger = await newKey('k1');
    expect((await a.authenticateToken(await token({ hd: 'example.com' }, stranger))).outcome).toBe('rejected');
    expect((await a.authenticateToken(await token({}))).outcome).toBe('rejected');
    expect((await a.authenticateToken(await token({ hd: 'example.com' }))).outcome).toBe('authenticated');
    const byEmail = await authenticator({ usernameClaim: 'email' });
    expect((await byEmail.authenticateToken(await token({ email_verified: false }))).outcome).toBe('rejected');
  });

  it('has no opinion on malformed tokens and tokens of another issuer', async () => {
    const a = await authenticator();
    expect((await a.authenticateToken('not-a-jwt')).outcome).toBe('noOpinion');
    expect((await a.authenticateToken(await token({ iss: 'https://other.example' }))).outcome).toBe('noOpinion');
  });

  it('refreshes the keys: a rotated-in key is picked up, a rotated-away key stops working', async () => {
    const a = await authenticator();
    const old = await token();
    const k2 = await newKey('k2');
    served = [k2];
    clock.advance(60_000);
    expect((await a.authenticateToken(await token({}, k2))).outcome).toBe('authenticated');
    expect((await a.authenticateToken(old)).outcome).toBe('rejected');
    served = [served[0]!];
  });

  it('refuses to trust a provider whose discovery names another issuer', async () => {
    discoveryIssuer = 'https://evil.example';
    try {
      const a = await authenticator();
      expect(await a.authenticateToken(await token({}, served[0]))).toEqual({ outcome: 'rejected', reason: 'oidc: authenticator not initialized' });
    } finally {
      discoveryIssuer = undefined;
    }
  });
});
