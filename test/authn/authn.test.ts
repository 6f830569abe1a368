/**
 * The authentication methods and their chain, with valid, expired, malformed, revoked and
 * mis-typed credentials. Bootstrap tokens read real Secrets from an in-process core on the
 * embedded store.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import {
  authenticateCertificate,
  bootstrapTokenAuthenticator,
  createAuthenticator,
  parseTokenFile,
  TokenFileError,
  tokenFileAuthenticator,
  type BootstrapTokenOptions,
  type TokenAuthenticator,
} from '../../src/authn';
import { createCore, type ApiObject, type Core, type RequestContext } from '../../src/core';
import { createStore } from '../../src/store';
import { createNaming } from '../../src/naming';
import { ManualClock } from '../../src/clock';
import { StatusError } from '../../src/status';

describe('client certificates', () => {
  it('maps a verified certificate to CN and one group per O', () => {
    expect(authenticateCertificate({ verified: true, commonName: 'admin', organizations: ['system:masters'] })).toEqual({
      outcome: 'authenticated',
      user: { username: 'admin', groups: ['system:masters'] },
    });
  });

  it('has no opinion without a certificate', () => {
    expect(authenticateCertificate(undefined)).toEqual({ outcome: 'noOpinion' });
  });

  it('rejects a certificate that did not verify, one not meant for client auth, and one without a common name', () => {
    expect(authenticateCertificate({ verified: false, verifyError: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', commonName: 'x', organizations: [] }).outcome).toBe(
      'rejected',
    );
    expect(authenticateCertificate({ verified: true, commonName: 'x', organizations: [], extKeyUsage: ['1.3.6.1.5.5.7.3.1'] }).outcome).toBe('rejected');
    expect(authenticateCertificate({ verified: true, commonName: '', organizations: [] }).outcome).toBe('rejected');
    expect(authenticateCertificate({ verified: true, commonName: 'x', organizations: [], extKeyUsage: ['1.3.6.1.5.5.7.3.2'] }).outcome).toBe('authenticated');
  });
});

describe('static token file', () => {
  it('reads token, user, uid and the optional quoted groups column', () => {
    const file = parseTokenFile('t1,alice,uid-1\nt2,bob,uid-2,"dev,ops"\n\nt3,carol,uid-3,single\n', 'tokens.csv');
    const auth = tokenFileAuthenticator(file);
    expect(auth.authenticateToken('t1')).toEqual({ outcome: 'authenticated', user: { username: 'alice', uid: 'uid-1', groups: [] } });
    expect(auth.authenticateToken('t2')).toEqual({ outcome: 'authenticated', user: { username: 'bob', uid: 'uid-2', groups: ['dev', 'ops'] } });
    expect(auth.authenticateToken('t3')).toEqual({ outcome: 'authenticated', user: { username: 'carol', uid: 'uid-3', groups: ['single'] } });
    expect(auth.authenticateToken('t4')).toEqual({ outcome: 'noOpinion' });
    expect(file.warnings).toEqual([]);
  });

  it('refuses a record of fewer than three columns, naming the file, as upstream', () => {
    expect(() => parseTokenFile('t1,alice\n', '/etc/tokens.csv')).toThrow(
      new TokenFileError("token file '/etc/tokens.csv' must have at least 3 columns (token, user name, user uid), found 2"),
    );
    expect(() => parseTokenFile('t1,"alice,uid\n', 'f')).toThrow(TokenFileError);
  });

  it("skips an empty token and lets a repeated token's last record win, with a warning each", () => {
    const file = parseTokenFile(',nobody,uid-0\nt1,alice,uid-1\nt1,eve,uid-2\n', 'f.csv');
    expect(file.warnings).toEqual([
      "empty token has been found in token file 'f.csv', record number '1'",
      "duplicate token has been found in token file 'f.csv', record number '3'",
    ]);
    expect(tokenFileAuthenticator(file).authenticateToken('t1')).toMatchObject({ user: { username: 'eve' } });
    expect(tokenFileAuthenticator(file).authenticateToken('')).toEqual({ outcome: 'noOpinion' });
  });
});

describe('the chain', () => {
  const alice = tokenFileAuthenticator(parseTokenFile('t1,alice,uid-1,dev\n', 'f'));
  const refusing: TokenAuthenticator = {
    name: 'jwt',
    authenticateToken: (t) => (t.startsWith('ey') ? { outcome: 'rejected', reason: 'signature invalid' } : { outcome: 'noOpinion' }),
  };

  it('lets the first method that authenticates decide, adding system:authenticated', async () => {
    const chain = createAuthenticator({ certificates: true, tokens: [refusing, alice], anonymous: true });
    expect(await chain.authenticate({ token: 't1' })).toEqual({
      outcome: 'authenticated',
      user: { username: 'alice', uid: 'uid-1', groups: ['dev', 'system:authenticated'] },
    });
    expect(await chain.authenticate({ certificate: { verified: true, commonName: 'admin', organizations: ['system:masters'] }, token: 't1' })).toMatchObject({
      user: { username: 'admin', groups: ['system:masters', 'system:authenticated'] },
    });
  });

  it('refuses presented credentials nobody accepts (never anonymous), with the reasons for the log', async () => {
    const chain = createAuthenticator({ certificates: true, tokens: [refusing, alice], anonymous: true });
    expect(await chain.authenticate({ token: 'eyJhbGciOi' })).toEqual({ outcome: 'rejected', reason: 'jwt: signature invalid; invalid bearer token' });
    expect(await chain.authenticate({ token: 'nope' })).toEqual({ outcome: 'rejected', reason: 'invalid bearer token' });
    expect((await chain.authenticate({ certificate: { verified: false, commonName: 'x', organizations: [] } })).outcome).toBe('rejected');
  });

  it("answers a connection's certificate once: its requests share one frozen user, and a refused certificate stays refused", async () => {
    const chain = createAuthenticator({ certificates: true, tokens: [], anonymous: true });
    const cert = { verified: true, commonName: 'admin', organizations: ['system:masters'] };
    const first = await chain.authenticate({ certificate: cert });
    const second = await chain.authenticate({ certificate: cert });
    expect(second).toBe(first);
    expect(first).toEqual({ outcome: 'authenticated', user: { username: 'admin', groups: ['system:masters', 'system:authenticated'] } });
    const user = (first as { user: { groups: string[] } }).user;
    expect(Object.isFrozen(user) && Object.isFrozen(user.groups)).toBe(true);
    // The certificate's own list is left as it was.
    expect(cert.organizations).toEqual(['system:masters']);
    // Another connection's certificate with the same subject is answered on its own.
    expect(await chain.authenticate({ certificate: { ...cert } })).not.toBe(first);
    const bad = { verified: false, verifyError: 'certificate has expired', commonName: 'x', organizations: [] };
    expect(await chain.authenticate({ certificate: bad })).toEqual({ outcome: 'rejected', reason: 'x509: certificate has expired' });
    expect(await chain.authenticate({ certificate: bad })).toEqual({ outcome: 'rejected', reason: 'x509: certificate has expired' });
  });

  it('makes a request without credentials anonymous, or refuses it with --anonymous-auth=false', async () => {
    expect(await createAuthenticator({ certificates: true, tokens: [alice], anonymous: true }).authenticate({})).toEqual({
      outcome: 'authenticated',
      user: { username: 'system:anonymous', groups: ['system:unauthenticated'] },
    });
    expect((await createAuthenticator({ certificates: true, tokens: [alice], anonymous: false }).authenticate({})).outcome).toBe('rejected');
  });
});

describe('bootstrap tokens', () => {
  const naming = createNaming('kubernetes');
  const clock = new ManualClock(Date.parse('2026-06-01T00:00:00Z'));
  const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };
  let dir: string;
  let core: Core;
  let auth: TokenAuthenticator;
  let options: BootstrapTokenOptions;

  const b64 = (s: string) => Buffer.from(s).toString('base64');
  function tokenSecret(id: string, data: Record<string, string>, type = 'bootstrap.kubernetes.io/token'): ApiObject {
    return {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
      type,
      data: Object.fromEntries(Object.entries({ 'token-id': id, ...data }).map(([k, v]) => [k, b64(v)])),
    };
  }
  const secrets = { group: '', version: 'v1', resource: 'secrets', namespace: 'kube-system' };

  beforeAll(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-authn-'));
    core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming, clock, compactionIntervalMs: 0 });
    await core.ready();
    options = {
      namespace: naming.namespaces.system,
      secretType: naming.bootstrapTokenSecretType,
      clock,
      secrets: async (namespace, name) => {
        try {
          return await core.get({ ...secrets, namespace, name }, { resourceVersion: '0' }, admin);
        } catch (err) {
          if (StatusError.is(err, 'NotFound')) return undefined;
          throw err;
        }
      },
    };
    auth = bootstrapTokenAuthenticator(options);
    const usable = { 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true' };
    for (const secret of [
      tokenSecret('abcdef', { ...usable, 'auth-extra-groups': 'system:bootstrappers:kubeadm:default-node-token' }),
      tokenSecret('expird', { ...usable, expiration: '2026-05-31T23:59:59Z' }),
      tokenSecret('future', { ...usable, expiration: '2026-06-01T00:00:01Z' }),
      tokenSecret('nousag', { 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'false' }),
      tokenSecret('badgrp', { ...usable, 'auth-extra-groups': 'system:masters' }),
      tokenSecret('wrongt', usable, 'Opaque'),
    ]) {
      await core.create(secrets, secret, {}, admin);
    }
  });

  afterAll(async () => {
    await core.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('authenticates a valid token as system:bootstrap:<id> with its extra groups', async () => {
    expect(await auth.authenticateToken('abcdef.0123456789abcdef')).toEqual({
      outcome: 'authenticated',
      user: { username: 'system:bootstrap:abcdef', groups: ['system:bootstrappers', 'system:bootstrappers:kubeadm:default-node-token'] },
    });
    expect((await auth.authenticateToken('future.0123456789abcdef')).outcome).toBe('authenticated');
  });

  it('has no opinion on an expired, unusable, mis-typed, wrong-secret, unknown or malformed token', async () => {
    for (const token of [
      'expird.0123456789abcdef',
      'nousag.0123456789abcdef',
      'badgrp.0123456789abcdef',
      'wrongt.0123456789abcdef',
      'abcdef.0123456789abcdee',
      'zzzzzz.0123456789abcdef',
      'abcdef0123456789abcdef',
      'ABCDEF.0123456789abcdef',
      'eyJhbGciOiJSUzI1NiJ9.e30.sig',
    ]) {
      expect([token, await auth.authenticateToken(token)]).toEqual([token, { outcome: 'noOpinion' }]);
    }
  });

  it('stops accepting a token once its secret is deleted (revocation), and once it expires', async () => {
    await core.create(
      secrets,
      tokenSecret('revoke', { 'token-secret': '0123456789abcdef', 'usage-bootstrap-authentication': 'true', expiration: '2026-06-02T00:00:00Z' }),
      {},
      admin,
    );
    expect((await auth.authenticateToken('revoke.0123456789abcdef')).outcome).toBe('authenticated');
    const later = new ManualClock(Date.parse('2026-06-02T00:00:00Z'));
    const expired = bootstrapTokenAuthenticator({ ...options, clock: later });
    expect((await expired.authenticateToken('revoke.0123456789abcdef')).outcome).toBe('noOpinion');
    await core.delete({ ...secrets, name: 'bootstrap-token-revoke' }, {}, admin);
    expect((await auth.authenticateToken('revoke.0123456789abcdef')).outcome).toBe('noOpinion');
  });
});
