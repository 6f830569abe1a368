/**
 * Service-account issuer discovery's documents (authn/service-account-discovery.ts): what upstream
 * renders for the provider document and the key set, key IDs as upstream derives them, and the
 * issuer and JWKS URIs it refuses to describe.
 */
import { createHash, generateKeyPairSync } from 'node:crypto';
import { createLocalJWKSet, jwtVerify, SignJWT } from 'jose';
import { issuerDiscoveryProvider, keyIdOf, renderIssuerDiscovery } from '../../src/authn';

const ec = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
const ISSUER = 'https://kubernetes.default.svc.cluster.local';

describe('the discovery documents', () => {
  it('the provider document: issuer, the key set at the server address, what tokens are, the algorithms sorted', () => {
    const docs = renderIssuerDiscovery({ issuer: ISSUER, keys: [rsa.publicKey, ec.privateKey, ec.publicKey] }, '10.0.0.1:6443');
    expect(docs.configuration.toString()).toBe(
      '{"issuer":"https://kubernetes.default.svc.cluster.local","jwks_uri":"https://10.0.0.1:6443/openid/v1/jwks",' +
        '"response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["ES256","RS256"]}',
    );
    expect(
      JSON.parse(renderIssuerDiscovery({ issuer: ISSUER, jwksUri: 'https://keys.example.com/jwks', keys: [ec.publicKey] }, '').configuration.toString()),
    ).toMatchObject({
      jwks_uri: 'https://keys.example.com/jwks',
      id_token_signing_alg_values_supported: ['ES256'],
    });
  });

  it('the key set: each public key with use, kty, kid, crv, alg and its numbers, in that order', () => {
    const { keySet } = renderIssuerDiscovery({ issuer: ISSUER, keys: [ec.privateKey, rsa.publicKey] }, 'h:1');
    const set = JSON.parse(keySet.toString()) as { keys: Array<Record<string, string>> };
    const ecJwk = ec.publicKey.export({ format: 'jwk' });
    const rsaJwk = rsa.publicKey.export({ format: 'jwk' });
    expect(set.keys.map((k) => Object.keys(k))).toEqual([
      ['use', 'kty', 'kid', 'crv', 'alg', 'x', 'y'],
      ['use', 'kty', 'kid', 'alg', 'n', 'e'],
    ]);
    expect(set.keys[0]).toEqual({ use: 'sig', kty: 'EC', kid: keyIdOf(ec.publicKey), crv: 'P-256', alg: 'ES256', x: ecJwk.x, y: ecJwk.y });
    expect(set.keys[1]).toEqual({ use: 'sig', kty: 'RSA', kid: keyIdOf(rsa.publicKey), alg: 'RS256', n: rsaJwk.n, e: 'AQAB' });
    // No private part of a private key given.
    expect(keySet.toString()).not.toContain('"d"');
  });

  it("a key's ID is the unpadded base64url SHA-256 of its SubjectPublicKeyInfo, the same for either half", () => {
    const der = ec.publicKey.export({ type: 'spki', format: 'der' });
    expect(keyIdOf(ec.publicKey)).toBe(createHash('sha256').update(der).digest('base64').replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, ''));
    expect(keyIdOf(ec.privateKey)).toBe(keyIdOf(ec.publicKey));
    expect(keyIdOf(rsa.publicKey)).not.toBe(keyIdOf(ec.publicKey));
  });

  it('a token signed with a served key verifies against the key set, which a relying party picks by kid', async () => {
    const { keySet } = renderIssuerDiscovery({ issuer: ISSUER, keys: [rsa.publicKey, ec.publicKey] }, 'h:1');
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: 'ES256', kid: keyIdOf(ec.privateKey) })
      .setIssuer(ISSUER)
      .setSubject('s')
      .sign(ec.privateKey);
    const { payload } = await jwtVerify(token, createLocalJWKSet(JSON.parse(keySet.toString())), { issuer: ISSUER });
    expect(payload.sub).toBe('s');
  });

  it.each([
    ['http://kubernetes.default.svc', {}, 'h:1', 'the issuer URL must use the https scheme: http://kubernetes.default.svc'],
    ['kubernetes.default.svc', {}, 'h:1', 'the issuer URL is not a URL: kubernetes.default.svc'],
    ['https://issuer.example.com/?a=b', {}, 'h:1', 'the issuer URL may not have a query: https://issuer.example.com/?a=b'],
    ['https://issuer.example.com/#x', {}, 'h:1', 'the issuer URL may not have a fragment: https://issuer.example.com/#x'],
    [ISSUER, { jwksUri: 'http://keys.example.com/jwks' }, 'h:1', 'the JWKS URI must use the https scheme: http://keys.example.com/jwks'],
    [ISSUER, {}, '', 'no JWKS URI: neither --service-account-jwks-uri nor an external address is set'],
    [ISSUER, { keys: [] }, 'h:1', 'no keys verify service account tokens'],
    [ISSUER, { keys: [generateKeyPairSync('ed25519').publicKey] }, 'h:1', 'a key cannot be described: unsupported service account key type ed25519 '],
  ])('not served for issuer %s (%p, address %p): %s', (issuer, extra, address, message) => {
    expect(() => renderIssuerDiscovery({ issuer, keys: [ec.publicKey], ...extra }, address)).toThrow(message);
  });

  it.each(['https://issuer.example.com/?', 'https://issuer.example.com/#'])(
    'serves for issuer %s: an empty query or fragment is none, as upstream parses it',
    (issuer) => {
      const { configuration } = renderIssuerDiscovery({ issuer, keys: [ec.publicKey] }, 'h:1');
      expect(JSON.parse(configuration.toString()).issuer).toBe(issuer);
    },
  );
});

describe('the provider the server serves from', () => {
  it('renders once per address, and says once in the log why it serves nothing', () => {
    const log: string[] = [];
    const served = issuerDiscoveryProvider({ issuer: ISSUER, keys: [ec.publicKey] }, (m) => log.push(m));
    const first = served('a:1');
    expect(served('a:1')).toBe(first);
    expect(JSON.parse(served('b:2')!.configuration.toString()).jwks_uri).toBe('https://b:2/openid/v1/jwks');
    const off = issuerDiscoveryProvider({ issuer: 'http://x', keys: [ec.publicKey] }, (m) => log.push(m));
    expect(off('a:1')).toBeUndefined();
    expect(off('a:1')).toBeUndefined();
    expect(log).toEqual([
      'service account issuer discovery is off (/.well-known/openid-configuration and /openid/v1/jwks are not served): the issuer URL must use the https scheme: http://x',
    ]);
  });
});
