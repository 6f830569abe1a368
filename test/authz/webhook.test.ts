/**
 * The Webhook authorizer against a SubjectAccessReview service served over mutual TLS by the
 * test, the AuthorizationConfiguration file's validation (each error naming its field), and the
 * server's chain built from the file: order, failure policies, match conditions, and reloads
 * that keep the last good configuration.
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { authorizeAll, type AuthorizationAttributes } from '../../src/authz';
import { parseAuthorizationConfig } from '../../src/authz/config';
import { webhookAuthorizer, type WebhookAuthorizerOptions } from '../../src/authz/webhook';
import { readWebhookConfig } from '../../src/authn';
import { ManualClock } from '../../src/clock';
import { createNaming } from '../../src/naming';
import { buildAuthorizers } from '../../src/server/authorization';
import { parseFlags, type ServerConfig } from '../../src/server/flags';
import { buildFeatureGates } from '../../src/features';
import type { CoreApi } from '../../src/core';
import { createTestPki, type TestPki } from '../grpc/fixtures/certs';

const naming = createNaming('kubernetes');
let pki: TestPki;
let server: https.Server;
let dir: string;
let kubeconfig: string;
const reviews: Array<{ apiVersion: string; spec: Record<string, unknown>; peer: string }> = [];
/** What the service answers; `'hang'` never answers, a number is an HTTP status. */
let answer: (spec: Record<string, unknown>) => unknown = () => ({ allowed: false });

beforeAll(async () => {
  pki = await createTestPki();
  server = https.createServer({ key: pki.server.key, cert: pki.server.cert, ca: pki.ca, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { apiVersion: string; spec: Record<string, unknown> };
      const peer = String((req.socket as import('node:tls').TLSSocket).getPeerCertificate().subject?.CN ?? '');
      reviews.push({ apiVersion: review.apiVersion, spec: review.spec, peer });
      const a = answer(review.spec);
      if (a === 'hang') return;
      if (typeof a === 'number') {
        res.statusCode = a;
        return res.end('{}');
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'SubjectAccessReview', status: a }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/authorize`;
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-authz-webhook-'));
  await fs.writeFile(path.join(dir, 'ca.crt'), pki.ca);
  await fs.writeFile(path.join(dir, 'client.crt'), pki.client.cert);
  await fs.writeFile(path.join(dir, 'client.key'), pki.client.key);
  kubeconfig = path.join(dir, 'webhook.kubeconfig');
  await fs.writeFile(
    kubeconfig,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      `- name: authz\n  cluster:\n    server: ${url}\n    certificate-authority: ca.crt`,
      'users:',
      '- name: apiserver\n  user:\n    client-certificate: client.crt\n    client-key: client.key',
      'contexts:',
      '- name: webhook\n  context: {cluster: authz, user: apiserver}',
      'current-context: webhook',
    ].join('\n'),
  );
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await fs.rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  reviews.length = 0;
  answer = () => ({ allowed: false });
});

const alice = { username: 'alice', uid: 'u-1', groups: ['dev', 'system:authenticated'], extra: { scopes: ['a'] } };
const getPod = (user = alice): AuthorizationAttributes => ({
  user,
  verb: 'get',
  isResourceRequest: true,
  path: '',
  namespace: 'team-a',
  apiGroup: '',
  apiVersion: 'v1',
  resource: 'pods',
  subresource: '',
  name: 'web',
});
const healthz: AuthorizationAttributes = {
  user: alice,
  verb: 'get',
  isResourceRequest: false,
  path: '/healthz',
  namespace: '',
  apiGroup: '',
  apiVersion: '',
  resource: '',
  subresource: '',
  name: '',
};

function hook(overrides: Partial<WebhookAuthorizerOptions> = {}) {
  const clock = new ManualClock(1_000_000);
  const authorizer = webhookAuthorizer({
    name: 'Webhook',
    client: readWebhookConfig(kubeconfig),
    apiVersion: 'authorization.k8s.io/v1',
    authorizedTtlMs: 300_000,
    unauthorizedTtlMs: 30_000,
    timeoutMs: 2_000,
    failurePolicy: 'NoOpinion',
    clock,
    ...overrides,
  });
  return { authorizer, clock };
}

describe('the webhook authorizer', () => {
  test('posts a v1 review with the user and resource attributes, over mutual TLS; allowed, denied and neither', async () => {
    const { authorizer } = hook();
    answer = () => ({ allowed: true, reason: 'team-a reads pods' });
    expect(await authorizer.authorize(getPod())).toEqual({ decision: 'allow', reason: 'team-a reads pods' });
    expect(reviews[0]).toEqual({
      apiVersion: 'authorization.k8s.io/v1',
      peer: 'keelson-gateway',
      spec: {
        user: 'alice',
        uid: 'u-1',
        groups: ['dev', 'system:authenticated'],
        extra: { scopes: ['a'] },
        resourceAttributes: { namespace: 'team-a', verb: 'get', group: '', version: 'v1', resource: 'pods', subresource: '', name: 'web' },
      },
    });
    answer = () => ({ allowed: false, denied: true, reason: 'never on Fridays' });
    expect(await authorizer.authorize(healthz)).toEqual({ decision: 'deny', reason: 'never on Fridays' });
    expect(reviews[1]!.spec.nonResourceAttributes).toEqual({ path: '/healthz', verb: 'get' });
    answer = () => ({ allowed: false });
    expect(await authorizer.authorize({ ...getPod(), verb: 'delete' })).toEqual({ decision: 'noOpinion', reason: '' });
  });

  test('v1beta1 names the groups `group`', async () => {
    const { authorizer } = hook({ apiVersion: 'authorization.k8s.io/v1beta1' });
    answer = () => ({ allowed: true });
    await authorizer.authorize(getPod());
    expect(reviews[0]!.apiVersion).toBe('authorization.k8s.io/v1beta1');
    expect(reviews[0]!.spec.group).toEqual(['dev', 'system:authenticated']);
    expect(reviews[0]!.spec.groups).toBeUndefined();
  });

  test('allowed answers are cached for the authorized TTL, the others for the unauthorized TTL', async () => {
    const { authorizer, clock } = hook();
    answer = (spec) => ({ allowed: (spec.resourceAttributes as { verb: string }).verb === 'get' });
    await authorizer.authorize(getPod());
    await authorizer.authorize({ ...getPod(), verb: 'delete' });
    clock.advance(29_000);
    await authorizer.authorize(getPod());
    await authorizer.authorize({ ...getPod(), verb: 'delete' });
    expect(reviews).toHaveLength(2);
    clock.advance(2_000);
    await authorizer.authorize(getPod());
    await authorizer.authorize({ ...getPod(), verb: 'delete' });
    expect(reviews).toHaveLength(3);
    clock.advance(300_000);
    await authorizer.authorize(getPod());
    expect(reviews).toHaveLength(4);
  });

  test('failures follow the failure policy and are not cached: HTTP errors, malformed answers, timeouts, a service that is down', async () => {
    const noOpinion = hook().authorizer;
    const deny = hook({ failurePolicy: 'Deny', timeoutMs: 200 }).authorizer;
    answer = () => 500;
    expect(await noOpinion.authorize(getPod())).toEqual({ decision: 'noOpinion', reason: 'webhook failed: HTTP 500' });
    expect(await deny.authorize(getPod())).toEqual({ decision: 'deny', reason: 'webhook failed: HTTP 500' });
    answer = () => null;
    expect(await deny.authorize(getPod())).toEqual({ decision: 'deny', reason: 'webhook failed: the answer has no status' });
    answer = () => 'hang';
    expect(await deny.authorize(getPod())).toEqual({ decision: 'deny', reason: 'webhook failed: no answer within 200 ms' });
    const down = webhookAuthorizer({
      ...{ name: 'x', apiVersion: 'authorization.k8s.io/v1', authorizedTtlMs: 1, unauthorizedTtlMs: 1, timeoutMs: 500, clock: new ManualClock(0) },
      client: { server: 'https://127.0.0.1:1/' },
      failurePolicy: 'Deny',
    });
    expect((await down.authorize(getPod())).decision).toBe('deny');
    answer = () => ({ allowed: true });
    expect((await deny.authorize(getPod())).decision).toBe('allow');
  });

  test('match conditions: a false one skips the call, all true call it, an error follows the failure policy', async () => {
    const config = parseAuthorizationConfig(
      [
        'apiVersion: apiserver.config.k8s.io/v1',
        'kind: AuthorizationConfiguration',
        'authorizers:',
        '- type: Webhook',
        '  name: guard',
        '  webhook:',
        '    timeout: 2s',
        '    subjectAccessReviewVersion: v1',
        '    matchConditionSubjectAccessReviewVersion: v1',
        '    failurePolicy: Deny',
        `    connectionInfo: {type: KubeConfigFile, kubeConfigFile: ${kubeconfig}}`,
        '    matchConditions:',
        '    - expression: has(request.resourceAttributes)',
        "    - expression: request.resourceAttributes.namespace == 'team-a'",
        '    - expression: "!(\'system:masters\' in request.groups)"',
      ].join('\n'),
      naming,
    );
    const w = config.authorizers[0]!.webhook!;
    const { authorizer } = hook({ failurePolicy: w.failurePolicy, matchConditions: w.matchConditions });
    answer = () => ({ allowed: true });
    expect((await authorizer.authorize(getPod())).decision).toBe('allow');
    expect(reviews).toHaveLength(1);
    expect(await authorizer.authorize({ ...getPod(), namespace: 'team-b' })).toEqual({ decision: 'noOpinion' });
    expect(await authorizer.authorize(healthz)).toEqual({ decision: 'noOpinion' });
    expect(reviews).toHaveLength(1);
    // `request.resourceAttributes` is absent for a URL: the second condition errors, but the first is false — skipped.
    const erroring = parseAuthorizationConfig(
      [
        'apiVersion: apiserver.config.k8s.io/v1',
        'kind: AuthorizationConfiguration',
        'authorizers:',
        '- {type: Webhook, name: guard, webhook: {timeout: 2s, subjectAccessReviewVersion: v1, matchConditionSubjectAccessReviewVersion: v1, failurePolicy: Deny,',
        `   connectionInfo: {type: KubeConfigFile, kubeConfigFile: ${kubeconfig}}, matchConditions: [{expression: "request.resourceAttributes.namespace == 'x'"}]}}`,
      ].join('\n'),
      naming,
    );
    const strict = hook({ failurePolicy: 'Deny', matchConditions: erroring.authorizers[0]!.webhook!.matchConditions }).authorizer;
    const d = await strict.authorize(healthz);
    expect(d.decision).toBe('deny');
    expect(d.decision === 'deny' && d.reason).toMatch(/^webhook failed: match condition: /);
  });
});

describe('AuthorizationConfiguration validation', () => {
  const base = (authorizers: string) => `apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n${authorizers}`;
  const errors = (text: string): string[] => {
    try {
      parseAuthorizationConfig(text, naming);
    } catch (err) {
      return (err as { errors: string[] }).errors;
    }
    throw new Error('expected the configuration to be refused');
  };
  const webhook = (fields: Record<string, unknown>) =>
    JSON.stringify({
      timeout: '3s',
      subjectAccessReviewVersion: 'v1',
      matchConditionSubjectAccessReviewVersion: 'v1',
      failurePolicy: 'NoOpinion',
      connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: kubeconfig },
      ...fields,
    });

  test('a valid file, in order, with defaults', () => {
    const c = parseAuthorizationConfig(
      base(`- {type: Node, name: node}\n- {type: RBAC, name: rbac}\n- {type: Webhook, name: hook, webhook: ${webhook({})}}`),
      naming,
    );
    expect(c.authorizers.map((a) => [a.type, a.name])).toEqual([
      ['Node', 'node'],
      ['RBAC', 'rbac'],
      ['Webhook', 'hook'],
    ]);
    expect(c.authorizers[2]!.webhook).toMatchObject({ timeoutMs: 3000, authorizedTtlMs: 300_000, unauthorizedTtlMs: 30_000, failurePolicy: 'NoOpinion' });
    expect(parseAuthorizationConfig(base('- {type: RBAC, name: rbac}').replace('/v1', '/v1beta1'), naming).authorizers).toHaveLength(1);
  });

  test.each([
    [
      'no authorizers',
      'apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers: []',
      'authorizers: Required value: at least one authorization mode must be defined',
    ],
    ['wrong apiVersion', base('- {type: RBAC, name: rbac}').replace('/v1', '/v2'), 'apiVersion: Unsupported value: "apiserver.config.k8s.io/v2"'],
    ['missing type', base('- {name: x}'), 'authorizers[0].type: Required value'],
    ['unknown type', base('- {type: Magic, name: x}'), 'authorizers[0].type: Unsupported value: "Magic"'],
    ['RBAC twice', base('- {type: RBAC, name: a}\n- {type: RBAC, name: b}'), 'authorizers[1].type: Duplicate value: "RBAC"'],
    ['missing name', base('- {type: RBAC}'), 'authorizers[0].name: Required value'],
    ['bad name', base('- {type: RBAC, name: Not_Valid}'), 'authorizers[0].name: Invalid value: "Not_Valid": a lowercase RFC 1123 subdomain'],
    [
      'duplicate name',
      base(`- {type: Webhook, name: a, webhook: ${webhook({})}}\n- {type: Webhook, name: a, webhook: ${webhook({})}}`),
      'authorizers[1].name: Duplicate value: "a"',
    ],
    ['webhook missing', base('- {type: Webhook, name: a}'), 'authorizers[0].webhook: Required value: required when type=Webhook'],
    [
      'webhook on RBAC',
      base(`- {type: RBAC, name: a, webhook: ${webhook({})}}`),
      'authorizers[0].webhook: Invalid value: "non-null": non-null webhook config is only allowed when type=Webhook',
    ],
    [
      'timeout too long',
      base(`- {type: Webhook, name: a, webhook: ${webhook({ timeout: '45s' })}}`),
      'authorizers[0].webhook.timeout: Invalid value: "45s": must be no more than 30s',
    ],
    ['no timeout', base(`- {type: Webhook, name: a, webhook: ${webhook({ timeout: undefined })}}`), 'authorizers[0].webhook.timeout: Required value'],
    [
      'bad SAR version',
      base(`- {type: Webhook, name: a, webhook: ${webhook({ subjectAccessReviewVersion: 'v2' })}}`),
      'authorizers[0].webhook.subjectAccessReviewVersion: Unsupported value: "v2": supported values: "v1", "v1beta1"',
    ],
    [
      'bad match version',
      base(`- {type: Webhook, name: a, webhook: ${webhook({ matchConditionSubjectAccessReviewVersion: 'v1beta1' })}}`),
      'authorizers[0].webhook.matchConditionSubjectAccessReviewVersion: Unsupported value: "v1beta1"',
    ],
    [
      'bad failure policy',
      base(`- {type: Webhook, name: a, webhook: ${webhook({ failurePolicy: 'Allow' })}}`),
      'authorizers[0].webhook.failurePolicy: Unsupported value: "Allow": supported values: "NoOpinion", "Deny"',
    ],
    [
      'relative kubeconfig',
      base(`- {type: Webhook, name: a, webhook: ${webhook({ connectionInfo: { type: 'KubeConfigFile', kubeConfigFile: 'hook.yaml' } })}}`),
      'authorizers[0].webhook.connectionInfo.kubeConfigFile: Invalid value: "hook.yaml": must be an absolute path',
    ],
    [
      'in-cluster',
      base(`- {type: Webhook, name: a, webhook: ${webhook({ connectionInfo: { type: 'InClusterConfig' } })}}`),
      'authorizers[0].webhook.connectionInfo.type: Invalid value: "InClusterConfig"',
    ],
    [
      'bad CEL',
      base(`- {type: Webhook, name: a, webhook: ${webhook({ matchConditions: [{ expression: 'request.user ==' }] })}}`),
      'authorizers[0].webhook.matchConditions[0].expression: Invalid value: "request.user ==": compilation failed',
    ],
    [
      'duplicate CEL',
      base(`- {type: Webhook, name: a, webhook: ${webhook({ matchConditions: [{ expression: 'true' }, { expression: 'true' }] })}}`),
      'authorizers[0].webhook.matchConditions[1].expression: Duplicate value: "true"',
    ],
    [
      '65 conditions',
      base(`- {type: Webhook, name: a, webhook: ${webhook({ matchConditions: Array.from({ length: 65 }, (_, i) => ({ expression: `${i} == ${i}` })) })}}`),
      'authorizers[0].webhook.matchConditions: Too many: 65: must have at most 64 items',
    ],
  ])('%s', (_name, text, message) => {
    expect(errors(text).some((e) => e.startsWith(message))).toBe(true);
  });
});

describe('the server chain from --authorization-config', () => {
  const noCore = {} as CoreApi;
  const configFile = () => path.join(dir, 'authz-config.yaml');
  const write = (authorizers: string) =>
    fs.writeFile(configFile(), `apiVersion: apiserver.config.k8s.io/v1\nkind: AuthorizationConfiguration\nauthorizers:\n${authorizers}`);
  const serverConfig = (args: string[]): ServerConfig => {
    const r = parseFlags(['--vendor', 'kubernetes', ...args]);
    if (r.kind !== 'config') throw new Error(JSON.stringify(r));
    return r.config;
  };

  test('both --authorization-config and --authorization-mode refuse to start, naming both', async () => {
    await write('- {type: AlwaysAllow, name: all}');
    expect(parseFlags(['--authorization-config', configFile(), '--authorization-mode', 'RBAC'])).toEqual({
      kind: 'error',
      error: {
        flag: '--authorization-config',
        message: '--authorization-config can not be specified when --authorization-mode or --authorization-webhook-* flags are defined',
      },
    });
    await write('- {type: Webhook, name: a}');
    const r = parseFlags(['--authorization-config', configFile()]);
    expect(r.kind === 'error' && r.error.message).toContain('authorizers[0].webhook: Required value');
  });

  test("the file's order is the chain's; a bad edit keeps the last good chain; a good one replaces it", async () => {
    const hookEntry = `- {type: Webhook, name: guard, webhook: {timeout: 1s, subjectAccessReviewVersion: v1, matchConditionSubjectAccessReviewVersion: v1, failurePolicy: Deny, connectionInfo: {type: KubeConfigFile, kubeConfigFile: ${kubeconfig}}, matchConditions: [{expression: "request.user != 'ops'"}]}}`;
    await write(`${hookEntry}\n- {type: AlwaysAllow, name: rest}`);
    const logs: string[] = [];
    const clock = new ManualClock(0);
    const authz = buildAuthorizers(
      serverConfig(['--authorization-config', configFile()]),
      noCore,
      buildFeatureGates({}).gates,
      { user: { username: 'system:apiserver', groups: [] } },
      (m) => logs.push(m),
      clock,
    );
    try {
      expect(authz.authorizers.map((a) => a.name)).toEqual([undefined, 'guard', 'rest']);
      answer = () => ({ allowed: false, denied: true, reason: 'no' });
      expect((await authorizeAll(authz.authorizers, getPod())).decision).toBe('deny');
      // ops is not matched by the webhook: the next authorizer allows.
      expect((await authorizeAll(authz.authorizers, getPod({ ...alice, username: 'ops' }))).decision).toBe('allow');
      // system:masters never reaches the webhook.
      expect((await authorizeAll(authz.authorizers, getPod({ ...alice, groups: ['system:masters'] }))).decision).toBe('allow');

      await fs.writeFile(configFile(), 'authorizers: [{type: Webhook}]');
      authz.reloadNow();
      expect(authz.authorizers.map((a) => a.name)).toEqual([undefined, 'guard', 'rest']);
      expect(authz.reload).toMatchObject({ successes: 1, failures: 1 });
      expect(logs.join('\n')).toContain('is not valid, keeping the last good configuration');

      await write('- {type: AlwaysDeny, name: closed}');
      authz.reloadNow();
      expect(authz.authorizers.map((a) => a.name)).toEqual([undefined, 'closed']);
      expect(authz.reload).toMatchObject({ successes: 2, failures: 1 });
      expect((await authorizeAll(authz.authorizers, getPod({ ...alice, username: 'ops' }))).decision).toBe('deny');
    } finally {
      authz.stop();
    }
  });
});
