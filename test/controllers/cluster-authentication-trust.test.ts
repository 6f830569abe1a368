/**
 * The `extension-apiserver-authentication` ConfigMap (src/controllers/cluster-authentication-trust.ts)
 * through a real core on the embedded store: what one server publishes, how several servers'
 * parts merge, and that an edited ConfigMap is put back.
 */
import 'reflect-metadata';
import { X509Certificate, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import type { ApiObject, Core } from '../../src/core';
import { ClusterAuthenticationTrustController, type ClusterAuthenticationInfo } from '../../src/controllers';
import { ManualClock } from '../../src/clock';
import { createNaming } from '../../src/naming';
import { createTestPki } from '../grpc/fixtures/certs';
import { type TestCore, cms, ctx, eventually, getOrUndefined, openCore } from './support';

const naming = createNaming('kubernetes');
const SERVER = { username: 'system:apiserver', groups: ['system:masters'] };
const NAME = 'extension-apiserver-authentication';

let t: TestCore;
let clientCa: string;
let frontProxyCa: string;
let otherClientCa: string;
const running: ClusterAuthenticationTrustController[] = [];

beforeAll(async () => {
  [clientCa, frontProxyCa, otherClientCa] = await Promise.all(['client-ca', 'front-proxy-ca', 'other-client-ca'].map(async (n) => (await createTestPki(n)).ca));
});

beforeEach(async () => {
  t = await openCore();
});

afterEach(async () => {
  for (const c of running.splice(0)) c.stop();
  await t.close();
});

function start(info: ClusterAuthenticationInfo, clock = new ManualClock(Date.now())): ClusterAuthenticationTrustController {
  const controller = new ClusterAuthenticationTrustController({ core: t.core, naming, clock, user: SERVER, info });
  running.push(controller);
  controller.start();
  return controller;
}

const FRONT_PROXY = {
  allowedNames: ['front-proxy-client'],
  usernameHeaders: ['X-Remote-User'],
  uidHeaders: [],
  groupHeaders: ['X-Remote-Group'],
  extraHeaderPrefixes: ['X-Remote-Extra-'],
};

async function published(core: Core = t.core): Promise<Record<string, string> | undefined> {
  return (await getOrUndefined(core, cms('kube-system', NAME)))?.data as Record<string, string> | undefined;
}

/** The certificates of a bundle, by their DER in base64. */
function certificates(pem: string | undefined): string[] {
  return (pem?.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? []).map((b) => new X509Certificate(b).raw.toString('base64'));
}

describe('ClusterAuthenticationTrust controller', () => {
  it('publishes the client CA alone when no front proxy is configured, creating the system namespace if missing', async () => {
    const controller = start({ clientCa });
    await controller.idle();
    const data = await published();
    expect(Object.keys(data!)).toEqual(['client-ca-file']);
    expect(certificates(data!['client-ca-file'])).toEqual(certificates(clientCa));
    expect(await getOrUndefined(t.core, { group: '', version: 'v1', resource: 'namespaces', name: 'kube-system' })).toBeDefined();
  });

  it("publishes the front proxy's CA, names and headers as JSON string arrays", async () => {
    const controller = start({ clientCa, requestHeader: { clientCa: frontProxyCa, ...FRONT_PROXY } });
    await controller.idle();
    const data = (await published())!;
    expect(Object.keys(data).sort()).toEqual([
      'client-ca-file',
      'requestheader-allowed-names',
      'requestheader-client-ca-file',
      'requestheader-extra-headers-prefix',
      'requestheader-group-headers',
      'requestheader-uid-headers',
      'requestheader-username-headers',
    ]);
    expect(data['requestheader-allowed-names']).toBe('["front-proxy-client"]');
    expect(data['requestheader-username-headers']).toBe('["X-Remote-User"]');
    expect(data['requestheader-uid-headers']).toBe('[]');
    expect(data['requestheader-group-headers']).toBe('["X-Remote-Group"]');
    expect(data['requestheader-extra-headers-prefix']).toBe('["X-Remote-Extra-"]');
    expect(certificates(data['requestheader-client-ca-file'])).toEqual(certificates(frontProxyCa));
  });

  it("merges what several servers on one store publish: each CA once, each name once, the first writer's first", async () => {
    const first = start({ clientCa, requestHeader: { clientCa: frontProxyCa, ...FRONT_PROXY } });
    await first.idle();
    const second = start({
      clientCa: `${otherClientCa}${clientCa}`,
      requestHeader: { ...FRONT_PROXY, clientCa: frontProxyCa, usernameHeaders: ['X-Forwarded-User', 'X-Remote-User'], allowedNames: [] },
    });
    await second.idle();
    await first.idle();
    const data = (await published())!;
    expect(certificates(data['client-ca-file'])).toEqual([...certificates(clientCa), ...certificates(otherClientCa)]);
    expect(certificates(data['requestheader-client-ca-file'])).toEqual(certificates(frontProxyCa));
    expect(data['requestheader-username-headers']).toBe('["X-Remote-User","X-Forwarded-User"]');
    expect(data['requestheader-allowed-names']).toBe('["front-proxy-client"]');
  });

  it('puts back a part someone removed', async () => {
    const controller = start({ clientCa, requestHeader: { clientCa: frontProxyCa, ...FRONT_PROXY } });
    await controller.idle();
    const current = (await t.core.get(cms('kube-system', NAME), {}, ctx)) as ApiObject;
    const data = { ...(current.data as Record<string, string>) };
    delete data['requestheader-client-ca-file'];
    data['requestheader-group-headers'] = '["X-Injected"]';
    await t.core.update(cms('kube-system', NAME), { ...current, data }, {}, ctx);
    // The informer brings the change and the controller merges its part back in.
    const healed = await eventually(
      async () => {
        const now = (await published())!;
        return now['requestheader-client-ca-file'] ? now : undefined;
      },
      { what: 'the front-proxy CA back in the ConfigMap' },
    );
    expect(certificates(healed['requestheader-client-ca-file'])).toEqual(certificates(frontProxyCa));
    // Merged, not replaced: what another server may have written stays.
    expect(healed['requestheader-group-headers']).toBe('["X-Injected","X-Remote-Group"]');
  });

  it('drops an expired CA another server left behind (five minutes of slack)', async () => {
    const expired = await selfSigned('old-client-ca', new Date(Date.now() - 2 * 86_400_000), new Date(Date.now() - 3_600_000));
    await t.core.create(cms('kube-system'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: NAME }, data: { 'client-ca-file': expired } }, {}, ctx);
    const controller = start({ clientCa });
    await controller.idle();
    expect(certificates((await published())!['client-ca-file'])).toEqual(certificates(clientCa));
  });

  it('writes nothing when what is there is already what it would write', async () => {
    const controller = start({ clientCa });
    await controller.idle();
    const before = (await t.core.get(cms('kube-system', NAME), {}, ctx)).metadata!.resourceVersion;
    const clock = new ManualClock(Date.now());
    const again = start({ clientCa }, clock);
    await again.idle();
    clock.advance(60_000);
    await again.idle();
    expect((await t.core.get(cms('kube-system', NAME), {}, ctx)).metadata!.resourceVersion).toBe(before);
  });
});

async function selfSigned(name: string, notBefore: Date, notAfter: Date): Promise<string> {
  const crypto = webcrypto as unknown as Crypto;
  x509.cryptoProvider.set(crypto);
  const keys = await crypto.subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign', 'verify']);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: `CN=${name}`,
    keys,
    notBefore,
    notAfter,
    signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
    extensions: [new x509.BasicConstraintsExtension(true, undefined, true)],
  });
  return cert.toString('pem');
}
