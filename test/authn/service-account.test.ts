/**
 * Service-account tokens: TokenRequest issues them through the core (the `serviceaccounts/token`
 * subresource), the authenticator accepts them — and refuses expired, malformed, wrong-audience,
 * wrong-issuer, wrong-signature and revoked ones. A real core on the embedded store, a manual
 * clock for expiry.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { generateKeyPairSync } from 'node:crypto';
import { SignJWT, decodeJwt } from 'jose';
import { keysOfPem, serviceAccountAuthenticator, tokenRequestHandler, type ServiceAccountTokenOptions } from '../../src/authn';
import { createCore, type ApiObject, type Core, type RequestContext } from '../../src/core';
import { createStore } from '../../src/store';
import { createNaming } from '../../src/naming';
import { ManualClock } from '../../src/clock';
import { StatusError } from '../../src/status';

const naming = createNaming('kubernetes');
const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };
const ISSUER = 'https://kubernetes.default.svc.cluster.local';
const sas = { group: '', version: 'v1', resource: 'serviceaccounts', namespace: 'default' };
const pods = { group: '', version: 'v1', resource: 'pods', namespace: 'default' };

function pemKey(): string {
  return generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
}

let dir: string;
let core: Core;
const clock = new ManualClock(Date.parse('2026-06-01T00:00:00Z'));
let options: ServiceAccountTokenOptions;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-sa-'));
  const keys = keysOfPem(pemKey());
  options = {
    naming,
    clock,
    issuers: [ISSUER],
    apiAudiences: [ISSUER],
    verifyingKeys: keys.publicKeys,
    signingKey: keys.privateKey!,
    lookup: true,
    objects: async (resource, namespace, name) => {
      try {
        return await core.get({ group: '', version: 'v1', resource, namespace, name }, {}, admin);
      } catch (err) {
        if (StatusError.is(err, 'NotFound')) return undefined;
        throw err;
      }
    },
  };
  core = createCore({
    store: createStore({ kind: 'embedded', dataDir: dir }),
    naming,
    clock,
    compactionIntervalMs: 0,
    handlers: { 'serviceaccounts/token': tokenRequestHandler(options) },
  });
  await core.ready();
  await core.create(sas, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'builder' } }, {}, admin);
});

afterAll(async () => {
  await core.close();
  await fs.rm(dir, { recursive: true, force: true });
});

async function requestToken(sa: string, spec: Record<string, unknown> = {}): Promise<string> {
  const { object } = await core.create(
    { ...sas, name: sa, subresource: 'token' },
    { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec },
    {},
    admin,
  );
  return (object.status as { token: string }).token;
}

const authenticator = () => serviceAccountAuthenticator(options);

describe('TokenRequest and service-account tokens', () => {
  it('issues a token upstream-shaped: issuer, audience, subject, lifetime, private claims', async () => {
    const { object } = await core.create(
      { ...sas, name: 'builder', subresource: 'token' },
      { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: {} },
      {},
      admin,
    );
    expect(object).toMatchObject({
      kind: 'TokenRequest',
      spec: { audiences: [ISSUER], expirationSeconds: 3600 },
      status: { expirationTimestamp: '2026-06-01T01:00:00Z' },
    });
    const sa = await core.get({ ...sas, name: 'builder' }, {}, admin);
    const claims = decodeJwt((object.status as { token: string }).token);
    expect(claims).toMatchObject({
      iss: ISSUER,
      aud: [ISSUER],
      sub: 'system:serviceaccount:default:builder',
      exp: Date.parse('2026-06-01T01:00:00Z') / 1000,
      'kubernetes.io': { namespace: 'default', serviceaccount: { name: 'builder', uid: sa.metadata!.uid } },
    });
  });

  it('authenticates a valid token as the service account', async () => {
    const token = await requestToken('builder');
    const sa = await core.get({ ...sas, name: 'builder' }, {}, admin);
    expect(await authenticator().authenticateToken(token)).toMatchObject({
      outcome: 'authenticated',
      user: { username: 'system:serviceaccount:default:builder', uid: sa.metadata!.uid, groups: ['system:serviceaccounts', 'system:serviceaccounts:default'] },
    });
  });

  it('refuses a duration under 10 minutes (422) and a token for a missing account (404)', async () => {
    await expect(requestToken('builder', { expirationSeconds: 599 })).rejects.toMatchObject({
      status: { code: 422, message: expect.stringContaining('may not specify a duration less than 10 minutes') },
    });
    await expect(requestToken('nobody')).rejects.toMatchObject({ status: { code: 404, message: 'serviceaccounts "nobody" not found' } });
  });

  it('refuses an expired token', async () => {
    const token = await requestToken('builder', { expirationSeconds: 600 });
    const later = serviceAccountAuthenticator({ ...options, clock: new ManualClock(Date.parse('2026-06-01T00:10:01Z')) });
    expect(await later.authenticateToken(token)).toMatchObject({ outcome: 'rejected' });
  });

  it('refuses a token for another audience, one from another issuer it does not know, one with a bad signature', async () => {
    const otherAudience = await requestToken('builder', { audiences: ['vault'] });
    expect((await authenticator().authenticateToken(otherAudience)).outcome).toBe('rejected');
    // An issuer it does not serve is someone else's token: no opinion (the chain answers 401).
    const foreignIssuer = serviceAccountAuthenticator({ ...options, issuers: ['https://other.example'] });
    expect((await foreignIssuer.authenticateToken(await requestToken('builder'))).outcome).toBe('noOpinion');
    const forged = await new SignJWT({ 'kubernetes.io': { namespace: 'default', serviceaccount: { name: 'builder', uid: 'x' } } })
      .setProtectedHeader({ alg: 'ES256' })
      .setIssuer(ISSUER)
      .setAudience(ISSUER)
      .setSubject('system:serviceaccount:default:builder')
      .setIssuedAt(Date.parse('2026-06-01T00:00:00Z') / 1000)
      .setExpirationTime(Date.parse('2026-06-01T01:00:00Z') / 1000)
      .sign(keysOfPem(pemKey()).privateKey!);
    expect((await authenticator().authenticateToken(forged)).outcome).toBe('rejected');
  });

  it('has no opinion on a malformed token (not a JWT)', async () => {
    for (const token of ['abc', 'a.b.c', 'abcdef.0123456789abcdef']) expect((await authenticator().authenticateToken(token)).outcome).toBe('noOpinion');
  });

  it('revokes a token when its account or bound pod is deleted (lookup)', async () => {
    await core.create(sas, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'temp' } }, {}, admin);
    await core.create(
      pods,
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'runner' }, spec: { containers: [{ name: 'c', image: 'x' }] } } as ApiObject,
      {},
      admin,
    );
    const accountToken = await requestToken('temp');
    const podToken = await requestToken('builder', { boundObjectRef: { kind: 'Pod', apiVersion: 'v1', name: 'runner' } });
    expect((await authenticator().authenticateToken(podToken)).outcome).toBe('authenticated');
    expect(await authenticator().authenticateToken(podToken)).toMatchObject({ user: { extra: { 'authentication.kubernetes.io/pod-name': ['runner'] } } });
    await core.delete({ ...sas, name: 'temp' }, {}, admin);
    await core.delete({ ...pods, name: 'runner' }, { gracePeriodSeconds: 0 }, admin);
    expect((await authenticator().authenticateToken(accountToken)).outcome).toBe('rejected');
    expect((await authenticator().authenticateToken(podToken)).outcome).toBe('rejected');
    // Without lookup, the signature and claims alone decide.
    expect((await serviceAccountAuthenticator({ ...options, lookup: false }).authenticateToken(accountToken)).outcome).toBe('authenticated');
  });
});
