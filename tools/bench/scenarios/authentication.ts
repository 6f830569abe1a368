/**
 * Scenario 7: authentication CPU per request, in process: the chain answering a request with a
 * client certificate (TLS already verified it), a static token, a TokenReview webhook token
 * whose decision is cached, and a service-account JWT (signature check plus the lookup of the
 * account in the watch cache). The reference is the client certificate: the cheapest method.
 */
import { generateKeyPairSync } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { ensurePki } from '../../../src/server/pki';
import {
  type Credentials,
  createAuthenticator,
  keysOfPem,
  parseTokenFile,
  serviceAccountAuthenticator,
  tokenFileAuthenticator,
  tokenRequestHandler,
  webhookTokenAuthenticator,
  type ServiceAccountTokenOptions,
} from '../../../src/authn';
import { createCore, type RequestContext } from '../../../src/core';
import { createStore } from '../../../src/store';
import { createNaming } from '../../../src/naming';
import { systemClock } from '../../../src/clock';
import { StatusError } from '../../../src/status';
import type { Context } from '../context';
import { micros } from '../report';

const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };

/** CPU µs per call of `fn`, measured over `ms` after a warm-up. */
export async function cpuPerCall(fn: () => Promise<unknown>, ms: number): Promise<number> {
  for (let i = 0; i < 200; i++) await fn();
  const start = process.cpuUsage();
  const until = performance.now() + ms;
  let calls = 0;
  while (performance.now() < until) {
    for (let i = 0; i < 100; i++) await fn();
    calls += 100;
  }
  const used = process.cpuUsage(start);
  return (used.user + used.system) / calls;
}

export async function runAuthentication(ctx: Context): Promise<void> {
  const naming = createNaming('kubernetes');
  const dir = await ctx.tmpDir('authn');
  const core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming, compactionIntervalMs: 0 });
  const keys = keysOfPem(generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
  const issuer = 'https://kubernetes.default.svc.cluster.local';
  const sa: ServiceAccountTokenOptions = {
    naming,
    clock: systemClock,
    issuers: [issuer],
    apiAudiences: [issuer],
    verifyingKeys: keys.publicKeys,
    signingKey: keys.privateKey!,
    lookup: true,
    objects: async (resource, namespace, name) => {
      try {
        return await core.get({ group: '', version: 'v1', resource, namespace, name }, { resourceVersion: '0' }, admin);
      } catch (err) {
        if (StatusError.is(err, 'NotFound')) return undefined;
        throw err;
      }
    },
  };
  let closeHook: (() => Promise<void>) | undefined;
  try {
    await core.ready();
    const sas = { group: '', version: 'v1', resource: 'serviceaccounts', namespace: 'default' };
    await core.create(sas, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'bench' } }, {}, admin);
    const saObject = await core.get({ ...sas, name: 'bench' }, {}, admin);
    const jwt = ((await tokenRequestHandler(sa).create({ spec: {} }, {}, admin, saObject)).status as { token: string }).token;
    // A real TokenReview webhook over TLS that answers once: every later call is served from the decision cache.
    const pki = await ensurePki({ dataDir: dir });
    const hook = https.createServer({ key: pki.servingKey, cert: pki.servingCert }, (req, res) => {
      req.resume();
      req.on('end', () => res.end(JSON.stringify({ status: { authenticated: true, user: { username: 'hooked', groups: ['dev'] } } })));
    });
    await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
    closeHook = () => new Promise((resolve) => hook.close(() => resolve()));
    const webhook = webhookTokenAuthenticator({
      client: { server: `https://127.0.0.1:${(hook.address() as AddressInfo).port}/authenticate`, ca: pki.caCert },
      apiVersion: 'authentication.k8s.io/v1beta1',
      cacheTtlMs: 3_600_000,
      clock: systemClock,
    });
    const cachedWebhook = { name: 'webhook', authenticateToken: webhook.authenticateToken };
    const chain = createAuthenticator({
      certificates: true,
      tokens: [serviceAccountAuthenticator(sa), tokenFileAuthenticator(parseTokenFile('static-token,alice,uid-1,dev\n', 'bench.csv')), cachedWebhook],
      anonymous: true,
    });
    await webhook.authenticateToken('webhook-token');
    const cases: Array<[string, Credentials]> = [
      ['client certificate', { certificate: { verified: true, commonName: 'admin', organizations: ['system:masters'] } }],
      ['static token (--token-auth-file)', { token: 'static-token' }],
      ['webhook token, cached decision', { token: 'webhook-token' }],
      ['service-account JWT (signature + lookup)', { token: jwt }],
    ];
    const ms = ctx.options.quick ? 300 : 1500;
    const results: Array<[string, number]> = [];
    for (const [name, credentials] of cases) results.push([name, await cpuPerCall(async () => chain.authenticate(credentials), ms)]);
    const reference = results[0]![1];
    for (const [name, us] of results) {
      ctx.rows.push({
        scenario: 7,
        name: `authentication: ${name}`,
        keelson: `${micros(us)} µs CPU per request`,
        reference: name === results[0]![0] ? '(reference)' : `${micros(reference)} µs`,
        ratio: name === results[0]![0] ? '1.00×' : `${(reference / us).toFixed(2)}×`,
        cpu: `${micros(us)}`,
        latency: '',
        note: 'in process, the whole chain (methods tried in order: service account, static, webhook)',
      });
    }
  } finally {
    await closeHook?.();
    await core.close();
  }
}
