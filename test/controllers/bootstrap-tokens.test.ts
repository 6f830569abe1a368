/**
 * The token cleaner, the bootstrap signer and the root CA publisher against the in-process core
 * on the embedded store, with time on a manual clock.
 */
import { compactVerify } from 'jose';
import type { ApiObject, ResourceTarget } from '../../src/core';
import { BootstrapSigner, RootCaPublisher, TokenCleaner, detachedSignature, enabledControllers } from '../../src/controllers';
import { createNaming } from '../../src/naming';
import { ManualClock, rfc3339 } from '../../src/clock';
import { ctx, eventually, getOrUndefined, openCore, type TestCore } from './support';

const naming = createNaming('kubernetes');
const secrets = (name?: string): ResourceTarget => ({ group: '', version: 'v1', resource: 'secrets', namespace: 'kube-system', name });
const clusterInfo: ResourceTarget = { group: '', version: 'v1', resource: 'configmaps', namespace: 'kube-public', name: 'cluster-info' };
const b64 = (s: string) => Buffer.from(s).toString('base64');

function tokenSecret(id: string, secret: string, extra: Record<string, string> = {}): ApiObject {
  const data: Record<string, string> = { 'token-id': b64(id), 'token-secret': b64(secret) };
  for (const [k, v] of Object.entries(extra)) data[k] = b64(v);
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
    type: 'bootstrap.kubernetes.io/token',
    data,
  };
}

describe('detached JWS', () => {
  it("matches upstream's test vectors for the same content, key id and key", async () => {
    const content = 'Hello from the other side. I must have called a thousand times.';
    expect(await detachedSignature(content, 'joshua', 'my voice is my passcode')).toBe(
      'eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8',
    );
    expect(await detachedSignature(content, 'joshua', 'my voice is my passcode. my voice is my passcode')).toBe(
      'eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..SFoKn0-YxqnvpSExt4LuCZ_7pvIBdX3SoUO_NsTpkdg',
    );
  });
});

describe('enabled controllers', () => {
  it('leaves tokencleaner and bootstrapsigner out of `*` unless named, as upstream', () => {
    expect(enabledControllers(['*'])).not.toContain('tokencleaner');
    expect(enabledControllers(['*'])).toContain('root-ca-cert-publisher');
    expect(enabledControllers(['*', 'tokencleaner', 'bootstrapsigner'])).toEqual(expect.arrayContaining(['tokencleaner', 'bootstrapsigner', 'replicaset']));
    expect(enabledControllers(['*', '-root-ca-cert-publisher'])).not.toContain('root-ca-cert-publisher');
  });
});

describe('token cleaner', () => {
  let t: TestCore;
  beforeEach(async () => (t = await openCore()));
  afterEach(async () => t.close());

  it('deletes expired bootstrap tokens at once and the others when they expire, leaving tokens without expiry and other secrets', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 25, 10, 0, 0));
    await t.core.create(secrets(), tokenSecret('abcdef', '0123456789abcdef', { expiration: rfc3339(clock.now() - 1000) }), {}, ctx);
    await t.core.create(secrets(), tokenSecret('bcdefg', '0123456789abcdef', { expiration: rfc3339(clock.now() + 60_000) }), {}, ctx);
    await t.core.create(secrets(), tokenSecret('cdefgh', '0123456789abcdef'), {}, ctx);
    await t.core.create(secrets(), { ...tokenSecret('defghi', '0123456789abcdef', { expiration: rfc3339(clock.now() - 1000) }), type: 'Opaque' }, {}, ctx);
    const cleaner = new TokenCleaner({ core: t.core, naming, clock, user: ctx.user });
    cleaner.start();
    try {
      await eventually(async () => (await getOrUndefined(t.core, secrets('bootstrap-token-abcdef'))) === undefined);
      await cleaner.idle();
      expect(await getOrUndefined(t.core, secrets('bootstrap-token-bcdefg'))).toBeDefined();
      clock.advance(60_000);
      await eventually(async () => (await getOrUndefined(t.core, secrets('bootstrap-token-bcdefg'))) === undefined);
      expect(await getOrUndefined(t.core, secrets('bootstrap-token-cdefgh'))).toBeDefined();
      expect(await getOrUndefined(t.core, secrets('bootstrap-token-defghi'))).toBeDefined();
    } finally {
      cleaner.stop();
    }
  });
});

describe('bootstrap signer', () => {
  let t: TestCore;
  beforeEach(async () => (t = await openCore()));
  afterEach(async () => t.close());

  const data = async () => ((await t.core.get(clusterInfo, {}, ctx)).data ?? {}) as Record<string, string>;

  it('signs cluster-info for each signing token with the full token, re-signs on change and drops signatures of removed or expired tokens', async () => {
    const clock = new ManualClock(Date.UTC(2026, 10, 25, 10, 0, 0));
    const kubeconfig = 'apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://127.0.0.1:6443\n  name: ""\n';
    await t.core.create(
      { ...clusterInfo, name: undefined },
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cluster-info' }, data: { kubeconfig } },
      {},
      ctx,
    );
    await t.core.create(secrets(), tokenSecret('abcdef', '0123456789abcdef', { 'usage-bootstrap-signing': 'true' }), {}, ctx);
    await t.core.create(
      secrets(),
      tokenSecret('bcdefg', '0123456789abcdef', { 'usage-bootstrap-signing': 'true', expiration: rfc3339(clock.now() + 30_000) }),
      {},
      ctx,
    );
    await t.core.create(secrets(), tokenSecret('cdefgh', '0123456789abcdef'), {}, ctx);
    const signer = new BootstrapSigner({ core: t.core, naming, clock, user: ctx.user });
    signer.start();
    try {
      await eventually(async () => Object.keys(await data()).length === 3);
      const signed = await data();
      expect(Object.keys(signed).sort()).toEqual(['jws-kubeconfig-abcdef', 'jws-kubeconfig-bcdefg', 'kubeconfig']);
      // A client holding the token verifies it: the detached payload is the kubeconfig.
      const [header, , signature] = signed['jws-kubeconfig-abcdef']!.split('.');
      const attached = `${header}.${Buffer.from(kubeconfig).toString('base64url')}.${signature}`;
      const verified = await compactVerify(attached, new TextEncoder().encode('abcdef.0123456789abcdef'), { algorithms: ['HS256'] });
      expect(verified.protectedHeader).toEqual({ alg: 'HS256', kid: 'abcdef' });

      const changed = `${kubeconfig}# changed\n`;
      const cm = await t.core.get(clusterInfo, {}, ctx);
      await t.core.update(clusterInfo, { ...cm, data: { ...(cm.data as object), kubeconfig: changed } }, {}, ctx);
      await eventually(async () => (await data())['jws-kubeconfig-abcdef'] === (await detachedSignature(changed, 'abcdef', 'abcdef.0123456789abcdef')));

      await t.core.delete(secrets('bootstrap-token-abcdef'), {}, ctx);
      await eventually(async () => !('jws-kubeconfig-abcdef' in (await data())));
      clock.advance(30_000);
      await eventually(async () => Object.keys(await data()).join() === 'kubeconfig');
    } finally {
      signer.stop();
    }
  });
});

describe('root CA publisher', () => {
  it('publishes the CA in every namespace, recreates it when deleted and puts it back when edited', async () => {
    const t = await openCore();
    const clock = new ManualClock();
    const rootCA = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
    const publisher = new RootCaPublisher({ core: t.core, naming, clock, user: ctx.user, rootCA });
    const cm = (ns: string): ResourceTarget => ({ group: '', version: 'v1', resource: 'configmaps', namespace: ns, name: 'kube-root-ca.crt' });
    publisher.start();
    try {
      await t.core.create({ group: '', version: 'v1', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'team-a' } }, {}, ctx);
      for (const ns of ['default', 'kube-system', 'kube-public', 'team-a']) {
        await eventually(async () => ((await getOrUndefined(t.core, cm(ns)))?.data as Record<string, string> | undefined)?.['ca.crt'] === rootCA);
      }
      await t.core.delete(cm('team-a'), {}, ctx);
      await eventually(async () => (await getOrUndefined(t.core, cm('team-a'))) !== undefined);
      const edited = await t.core.get(cm('team-a'), {}, ctx);
      await t.core.update(cm('team-a'), { ...edited, data: { 'ca.crt': 'tampered' } }, {}, ctx);
      await eventually(async () => ((await t.core.get(cm('team-a'), {}, ctx)).data as Record<string, string>)['ca.crt'] === rootCA);
    } finally {
      publisher.stop();
      await t.close();
    }
  });
});
