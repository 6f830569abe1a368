/**
 * `--authentication-config`: validation naming each mistaken field (as upstream words it), CEL
 * claim mappings and validation rules against an HTTPS provider served by the test, and reload:
 * a good edit takes effect, a bad one keeps the last good configuration.
 */
import { ServerMetrics } from '../../src/metrics';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { generateKeyPairSync, type KeyObject } from 'node:crypto';
import { SignJWT, exportJWK } from 'jose';
import { AuthenticationConfigError, parseAuthenticationConfig, structuredAuthenticator, type StructuredAuthenticator } from '../../src/authn';
import { createNaming } from '../../src/naming';
import { ManualClock } from '../../src/clock';
import { createTestPki, type TestPki } from '../grpc/fixtures/certs';

const naming = createNaming('kubernetes');
const SA_ISSUER = 'https://kubernetes.default.svc.cluster.local';

describe('validation', () => {
  function errorsOf(yaml: string): string[] {
    try {
      parseAuthenticationConfig(yaml, naming, [SA_ISSUER]);
    } catch (err) {
      if (err instanceof AuthenticationConfigError) return err.errors;
      throw err;
    }
    return [];
  }

  it('names every mistaken field', () => {
    expect(
      errorsOf(`
apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer: {url: "http://idp.example", audiences: [a, b]}
  claimMappings:
    username: {claim: sub}
    extra:
    - {key: "Example.com/Team", valueExpression: "claims.team"}
    - {key: "kubernetes.io/x", valueExpression: "claims.x"}
- issuer: {url: "${SA_ISSUER}", audiences: []}
  claimMappings: {}
  claimValidationRules:
  - {expression: "claims.", message: broken}
`),
    ).toEqual([
      'jwt[0].issuer.url: Invalid value: "http://idp.example": URL scheme must be https',
      'jwt[0].issuer.audienceMatchPolicy: Invalid value: "": audienceMatchPolicy must be MatchAny for multiple audiences',
      'jwt[0].claimMappings.username.prefix: Required value: prefix is required when claim is set. It can be set to an empty string to disable prefixing',
      'jwt[0].claimMappings.extra[0].key: Invalid value: "Example.com/Team": key must be lowercase',
      'jwt[0].claimMappings.extra[1].key: Invalid value: "kubernetes.io/x": kubernetes.io and k8s.io domains are reserved',
      `jwt[1].issuer.url: Invalid value: "${SA_ISSUER}": URL must not overlap with disallowed issuers: [${SA_ISSUER}]`,
      'jwt[1].issuer.audiences: Required value: at least one jwt[1].issuer.audiences is required',
      expect.stringMatching(/^jwt\[1\]\.claimValidationRules\[0\]\.expression: Invalid value: "claims\.": compilation failed: /),
      'jwt[1].claimMappings.username: Required value: claim or expression is required',
    ]);
  });

  it('refuses, when loaded, an expression naming a variable its place does not have or a function CEL does not have', () => {
    expect(
      errorsOf(`
apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer: {url: "https://idp.example", audiences: [a]}
  claimMappings:
    username: {expression: "'u:' + user.username"}
    groups: {expression: "claims.groups.map(g, lowercase(g))"}
  userValidationRules:
  - {expression: "!user.username.startsWith('system:') && quantity('1').sign() == 1", message: reserved}
`),
    ).toEqual([
      "jwt[0].claimMappings.username.expression: Invalid value: \"'u:' + user.username\": compilation failed: ERROR: <input>:1:8: undeclared reference to 'user' (in container '')\n | 'u:' + user.username\n | .......^",
      "jwt[0].claimMappings.groups.expression: Invalid value: \"claims.groups.map(g, lowercase(g))\": compilation failed: ERROR: <input>:1:31: undeclared reference to 'lowercase' (in container '')\n | claims.groups.map(g, lowercase(g))\n | ..............................^",
    ]);
  });

  it('refuses claims.email as user name unless claims.email_verified is checked', () => {
    const base = (extra: string) => `
apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer: {url: "https://idp.example", audiences: [a]}
  claimMappings:
    username: {expression: "claims.email"}
${extra}`;
    expect(errorsOf(base(''))[0]).toMatch(
      /^jwt\[0\]\.claimMappings\.username\.expression: Invalid value: "claims\.email": claims\.email_verified must be used/,
    );
    expect(errorsOf(base('  claimValidationRules:\n  - {expression: "claims.email_verified == true", message: unverified}'))).toEqual([]);
  });

  it('refuses the wrong apiVersion or kind', () => {
    expect(errorsOf('apiVersion: v1\nkind: Config\n')).toEqual([
      'apiVersion: Unsupported value: "v1": supported values: "apiserver.config.k8s.io/v1beta1", "apiserver.config.k8s.io/v1"',
      'kind: Unsupported value: "Config": supported values: "AuthenticationConfiguration"',
    ]);
  });
});

describe('JWT authenticators from the configuration, and reload', () => {
  let pki: TestPki;
  let server: https.Server;
  let issuer: string;
  let key: { privateKey: KeyObject; jwk: Record<string, unknown> };
  let dir: string;
  let file: string;
  const clock = new ManualClock(Date.parse('2026-06-01T00:00:00Z'));
  const opened: StructuredAuthenticator[] = [];

  beforeAll(async () => {
    pki = await createTestPki();
    const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    key = { privateKey, jwk: { ...(await exportJWK(publicKey)), kid: 'k1', alg: 'RS256' } };
    server = https.createServer({ key: pki.server.key, cert: pki.server.cert }, (req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/.well-known/openid-configuration') res.end(JSON.stringify({ issuer, jwks_uri: `${issuer}/keys` }));
      else res.end(JSON.stringify({ keys: [key.jwk] }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    issuer = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-authn-config-'));
    file = path.join(dir, 'authn.yaml');
  });

  afterAll(async () => {
    for (const a of opened) a.close();
    await new Promise((resolve) => server.close(resolve));
    await fs.rm(dir, { recursive: true, force: true });
  });

  const config = (mappings: string, rules = '') => `
apiVersion: apiserver.config.k8s.io/v1beta1
kind: AuthenticationConfiguration
jwt:
- issuer:
    url: "${issuer}"
    audiences: [kubectl, other]
    audienceMatchPolicy: MatchAny
    certificateAuthority: |
${pki.ca
  .trim()
  .split('\n')
  .map((l) => `      ${l}`)
  .join('\n')}
  claimMappings:
${mappings}
${rules}`;

  const token = (claims: Record<string, unknown>, aud = 'kubectl') =>
    new SignJWT({ sub: 'alice', ...claims })
      .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
      .setIssuer(issuer)
      .setAudience(aud)
      .setIssuedAt(Math.floor(clock.now() / 1000))
      .setExpirationTime(Math.floor(clock.now() / 1000) + 600)
      .sign(key.privateKey);

  async function open(metrics?: ServerMetrics): Promise<StructuredAuthenticator> {
    const a = structuredAuthenticator({
      file,
      naming,
      clock,
      serviceAccountIssuers: [SA_ISSUER],
      ...(metrics ? { onReload: (s) => metrics.configReloaded('authentication', { status: s.status, atMs: s.lastTimestampSeconds * 1000 }) } : {}),
    });
    opened.push(a);
    await a.ready();
    return a;
  }

  it('maps claims with CEL and checks the validation rules', async () => {
    await fs.writeFile(
      file,
      config(
        `    username: {expression: "'oidc:' + claims.sub"}
    groups: {claim: groups, prefix: "idp:"}
    uid: {claim: sub}
    extra:
    - {key: "example.com/team", valueExpression: "claims.team"}`,
        `  claimValidationRules:
  - {claim: hd, requiredValue: example.com}
  - {expression: "claims.sub != 'mallory'", message: "mallory is not welcome"}
  userValidationRules:
  - {expression: "!user.username.startsWith('oidc:system:')", message: "no system users"}`,
      ),
    );
    const a = await open();
    expect(await a.authenticateToken(await token({ hd: 'example.com', groups: ['dev'], team: 'red' }))).toEqual({
      outcome: 'authenticated',
      user: { username: 'oidc:alice', uid: 'alice', groups: ['idp:dev'], extra: { 'example.com/team': ['red'] } },
    });
    expect(await a.authenticateToken(await token({ hd: 'example.com', team: 'blue' }, 'other'))).toMatchObject({
      outcome: 'authenticated',
      user: { groups: [] },
    });
    // A mapping over a claim the token lacks fails, as a CEL error does upstream.
    expect(await a.authenticateToken(await token({ hd: 'example.com' }))).toMatchObject({ outcome: 'rejected', reason: expect.stringContaining('team') });
    expect(await a.authenticateToken(await token({ hd: 'example.com', team: 'x' }, 'nobody'))).toMatchObject({ outcome: 'rejected' });
    expect(await a.authenticateToken(await token({ hd: 'other.com', team: 'x' }))).toMatchObject({ outcome: 'rejected' });
    expect(await a.authenticateToken(await token({ hd: 'example.com', team: 'x', sub: 'mallory' }))).toEqual({
      outcome: 'rejected',
      reason: 'jwt: mallory is not welcome',
    });
    expect(await a.authenticateToken(await token({ hd: 'example.com', team: 'x', sub: 'system:x' }))).toEqual({
      outcome: 'rejected',
      reason: 'jwt: no system users',
    });
  });

  it('reloads a good edit, and keeps the last good configuration on a bad one', async () => {
    await fs.writeFile(file, config('    username: {claim: sub, prefix: "v1:"}'));
    const metrics = new ServerMetrics('sha256:test');
    const a = await open(metrics);
    expect(await a.authenticateToken(await token({}))).toMatchObject({ user: { username: 'v1:alice' } });
    const before = a.reloadStatus();
    await fs.writeFile(file, config('    username: {claim: sub, prefix: "v2:"}'));
    clock.advance(1000);
    await a.reload();
    expect(await a.authenticateToken(await token({}))).toMatchObject({ user: { username: 'v2:alice' } });
    expect(a.reloadStatus()).toMatchObject({ status: 'success' });
    expect(a.reloadStatus().hash).not.toBe(before.hash);
    await fs.writeFile(file, config('    username: {expression: "claims."}'));
    clock.advance(1000);
    await a.reload();
    expect(a.reloadStatus()).toMatchObject({ status: 'failure' });
    expect(await a.authenticateToken(await token({}))).toMatchObject({ user: { username: 'v2:alice' } });
    // Upstream's reload metrics, as /metrics shows them.
    const text = (await metrics.text()).body;
    expect(text).toContain('apiserver_authentication_config_controller_automatic_reloads_total{status="success",apiserver_id_hash="sha256:test"} 1');
    expect(text).toContain('apiserver_authentication_config_controller_automatic_reloads_total{status="failure",apiserver_id_hash="sha256:test"} 1');
    expect(text).toMatch(
      /apiserver_authentication_config_controller_automatic_reload_last_timestamp_seconds\{status="failure",apiserver_id_hash="sha256:test"\} \d+/,
    );
  });
});
