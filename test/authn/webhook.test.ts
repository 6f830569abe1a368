/**
 * Webhook token authentication against a TokenReview service served over mutual TLS by the test,
 * configured through a kubeconfig-format file: authenticated, refused, malformed answers, a
 * webhook that is down, the requested TokenReview version, and the decision cache (TTL on the
 * injected clock, tokens never kept in clear).
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { readWebhookConfig, webhookTokenAuthenticator, type WebhookOptions } from '../../src/authn';
import { ManualClock } from '../../src/clock';
import { createTestPki, type TestPki } from '../grpc/fixtures/certs';

let pki: TestPki;
let server: https.Server;
let url: string;
let dir: string;
const reviews: Array<{ apiVersion: string; token: string; peer: string }> = [];
let answer: (token: string) => unknown = () => ({});

beforeAll(async () => {
  pki = await createTestPki();
  server = https.createServer({ key: pki.server.key, cert: pki.server.cert, ca: pki.ca, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { apiVersion: string; spec: { token: string } };
      const peer = String((req.socket as import('node:tls').TLSSocket).getPeerCertificate().subject?.CN ?? '');
      reviews.push({ apiVersion: review.apiVersion, token: review.spec.token, peer });
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'TokenReview', status: answer(review.spec.token) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/authenticate`;
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-webhook-'));
  await fs.writeFile(path.join(dir, 'ca.crt'), pki.ca);
  await fs.writeFile(path.join(dir, 'client.crt'), pki.client.cert);
  await fs.writeFile(path.join(dir, 'client.key'), pki.client.key);
  await fs.writeFile(
    path.join(dir, 'webhook.kubeconfig'),
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      `- name: authn\n  cluster:\n    server: ${url}\n    certificate-authority: ca.crt`,
      'users:',
      '- name: apiserver\n  user:\n    client-certificate: client.crt\n    client-key: client.key',
      'contexts:',
      '- name: webhook\n  context: {cluster: authn, user: apiserver}',
      'current-context: webhook',
    ].join('\n'),
  );
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await fs.rm(dir, { recursive: true, force: true });
});

function authenticator(extra: Partial<WebhookOptions> = {}) {
  return webhookTokenAuthenticator({
    client: readWebhookConfig(path.join(dir, 'webhook.kubeconfig')),
    apiVersion: 'authentication.k8s.io/v1beta1',
    cacheTtlMs: 120_000,
    clock: new ManualClock(0),
    ...extra,
  });
}

beforeEach(() => {
  reviews.length = 0;
  answer = (token) =>
    token === 'good'
      ? { authenticated: true, user: { username: 'carol', uid: 'u-3', groups: ['ops'], extra: { scope: ['a'] } } }
      : { authenticated: false, error: 'unknown token' };
});

describe('webhook token authentication', () => {
  it('posts a TokenReview (v1beta1 by default) over mutual TLS and takes the user it answers', async () => {
    expect(await authenticator().authenticateToken('good')).toEqual({
      outcome: 'authenticated',
      user: { username: 'carol', uid: 'u-3', groups: ['ops'], extra: { scope: ['a'] } },
    });
    expect(reviews).toEqual([{ apiVersion: 'authentication.k8s.io/v1beta1', token: 'good', peer: 'keelson-gateway' }]);
    await authenticator({ apiVersion: 'authentication.k8s.io/v1' }).authenticateToken('good');
    expect(reviews[1]!.apiVersion).toBe('authentication.k8s.io/v1');
  });

  it('refuses what the webhook does not authenticate, and malformed answers', async () => {
    expect(await authenticator().authenticateToken('bad')).toEqual({ outcome: 'rejected', reason: 'webhook: unknown token' });
    answer = () => ({ authenticated: true, user: {} });
    expect((await authenticator().authenticateToken('good')).outcome).toBe('rejected');
  });

  it('caches decisions for the TTL, then asks again', async () => {
    const clock = new ManualClock(0);
    const a = authenticator({ clock, cacheTtlMs: 60_000 });
    await a.authenticateToken('good');
    await a.authenticateToken('good');
    await a.authenticateToken('bad');
    await a.authenticateToken('bad');
    expect(reviews.map((r) => r.token)).toEqual(['good', 'bad']);
    clock.advance(60_001);
    await a.authenticateToken('good');
    expect(reviews.map((r) => r.token)).toEqual(['good', 'bad', 'good']);
  });

  it('refuses while the webhook is unreachable, without caching the failure', async () => {
    const down = webhookTokenAuthenticator({
      client: { server: 'https://127.0.0.1:1/authenticate', ca: pki.ca },
      apiVersion: 'authentication.k8s.io/v1beta1',
      cacheTtlMs: 60_000,
      clock: new ManualClock(0),
    });
    expect((await down.authenticateToken('good')).outcome).toBe('rejected');
  });
});
