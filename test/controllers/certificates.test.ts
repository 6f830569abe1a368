/**
 * The certificate controllers over a real core (embedded store) and a real P-256 CA:
 * csrsigning issues approved requests with upstream's validity and usages or marks them
 * Failed with the signer's reason, csrapproving approves a node's own client certificate
 * after a SubjectAccessReview, and csrcleaner's deadlines.
 */
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCore, type ApiObject, type Core, type RequestContext } from '../../src/core';
import type { CertificateSigningRequest } from '../../src/core/resources/certificatesigningrequests';
import { CsrApprovingController, CsrSigningController } from '../../src/controllers';
import { expired } from '../../src/controllers/certificates';
import { accessReviewHandlers } from '../../src/authz/access-review';
import { caSigner } from '../../src/server/certificates';
import { createStore } from '../../src/store';
import { createNaming } from '../../src/naming';
import { ManualClock } from '../../src/clock';
import { csrTarget, makeCsr } from '../support/csr';
import { eventually } from '../support/eventually';

const naming = createNaming('kubernetes');
const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };
const node: RequestContext = { user: { username: 'system:node:n1', groups: ['system:nodes', 'system:authenticated'] } };
const controller = { username: 'system:kube-controller-manager', groups: ['system:masters'] };
const csrs = csrTarget;

describe('certificate controllers', () => {
  let dir: string;
  let core: Core;
  let ca: X509Certificate;
  let signing: CsrSigningController;
  let approving: CsrApprovingController;
  const clock = new ManualClock(Math.floor(Date.now() / 1000) * 1000);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-csr-controllers-'));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:P-256',
        '-nodes',
        '-subj',
        '/CN=test-ca',
        '-days',
        '3650',
        '-keyout',
        join(dir, 'ca.key'),
        '-out',
        join(dir, 'ca.crt'),
      ],
      { stdio: 'ignore' },
    );
    const caPem = readFileSync(join(dir, 'ca.crt'), 'utf8');
    ca = new X509Certificate(caPem);
    // The SubjectAccessReviews csrapproving asks: nodes may create their own client certificates.
    const authorize = async (a: { user: { groups: string[] }; subresource: string }) =>
      a.user.groups.includes('system:nodes') && a.subresource === 'selfnodeclient' ? ({ decision: 'allow' } as const) : ({ decision: 'noOpinion' } as const);
    core = createCore({
      store: createStore({ kind: 'embedded', dataDir: join(dir, 'store') }),
      naming,
      clock,
      handlers: accessReviewHandlers(authorize as never, naming, () => ({ resourceRules: [], nonResourceRules: [], incomplete: false, errors: [] })),
    });
    await core.ready();
    const options = { core, naming, clock, user: controller };
    signing = new CsrSigningController({ ...options, sign: caSigner(caPem, join(dir, 'ca.key')) });
    approving = new CsrApprovingController(options);
    signing.start();
    approving.start();
  });
  afterAll(async () => {
    signing.stop();
    approving.stop();
    await core.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function settled(name: string, done: (csr: CertificateSigningRequest) => boolean): Promise<CertificateSigningRequest> {
    return eventually(
      async () => {
        await Promise.all([signing.idle(), approving.idle()]);
        const csr = (await core.get(csrs(name), {}, admin)) as CertificateSigningRequest;
        return done(csr) && csr;
      },
      { what: `${name} settled` },
    );
  }

  /**
   * Both controllers have heard of every change made so far and are done with it: a node's own
   * client request made now, which each of them acts on, is approved and issued (each one's watch
   * delivers in order), then their queues are idle.
   */
  async function caughtUp(marker: string): Promise<void> {
    await request(
      marker,
      'CN=system:node:n1, O=system:nodes',
      { signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['client auth', 'digital signature'] },
      node,
    );
    await settled(marker, (c) => !!c.status?.certificate);
    await Promise.all([signing.idle(), approving.idle()]);
  }

  async function request(name: string, subject: string, spec: Record<string, unknown>, ctx = admin, sans: { dns?: string[] } = {}): Promise<void> {
    const csr = await makeCsr(subject, sans);
    const body: ApiObject = {
      apiVersion: 'certificates.k8s.io/v1',
      kind: 'CertificateSigningRequest',
      metadata: { name },
      spec: { request: csr.request, ...spec },
    };
    await core.create(csrs(), body, {}, ctx);
  }

  async function approve(name: string): Promise<void> {
    const current = (await core.get(csrs(name), {}, admin)) as CertificateSigningRequest;
    await core.update(csrs(name, 'approval'), { ...current, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'Test' }] } }, {}, admin);
  }

  const certificateOf = (csr: CertificateSigningRequest) => new X509Certificate(Buffer.from(csr.status!.certificate!, 'base64').toString('utf8'));

  it('issues an approved client certificate, valid from 5 minutes back for the requested hour', async () => {
    await request('jane', 'CN=jane, O=dev', {
      signerName: 'kubernetes.io/kube-apiserver-client',
      usages: ['client auth', 'digital signature'],
      expirationSeconds: 3600,
    });
    await approve('jane');
    const csr = await settled('jane', (c) => !!c.status?.certificate);
    const cert = certificateOf(csr);
    expect(cert.checkIssued(ca)).toBe(true);
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.subject).toBe('CN=jane\nO=dev');
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(Date.parse(cert.validFrom)).toBe(clock.now() - 5 * 60_000);
    // Short-lived (under 8 hours): the end is not backdated.
    expect(Date.parse(cert.validTo)).toBe(clock.now() + 3600_000);
    expect(csr.status?.conditions?.map((c) => c.type)).toEqual(['Approved']);
  });

  it('a serving certificate keeps the request’s names; a default one is backdated at both ends for a year', async () => {
    await request(
      'n1-serving',
      'CN=system:node:n1, O=system:nodes',
      { signerName: 'kubernetes.io/kubelet-serving', usages: ['digital signature', 'server auth'] },
      admin,
      { dns: ['n1.example'] },
    );
    await approve('n1-serving');
    const cert = certificateOf(await settled('n1-serving', (c) => !!c.status?.certificate));
    expect(cert.subjectAltName).toBe('DNS:n1.example');
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(Date.parse(cert.validTo) - Date.parse(cert.validFrom)).toBe(8760 * 3600_000);
  });

  it('a request its signer does not allow is marked Failed with the reason, and not issued', async () => {
    await request('wrong-usage', 'CN=jane', { signerName: 'kubernetes.io/kube-apiserver-client', usages: ['server auth'] });
    await approve('wrong-usage');
    const csr = await settled('wrong-usage', (c) => (c.status?.conditions ?? []).some((x) => x.type === 'Failed'));
    expect(csr.status?.conditions?.[1]).toMatchObject({
      type: 'Failed',
      status: 'True',
      reason: 'SignerValidationFailure',
      message: 'invalid usage for client certificate: server auth',
    });
    expect(csr.status?.certificate).toBeUndefined();
    await request('not-a-node', 'CN=jane, O=dev', { signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['client auth', 'digital signature'] });
    await approve('not-a-node');
    const failed = await settled('not-a-node', (c) => (c.status?.conditions ?? []).some((x) => x.type === 'Failed'));
    expect(failed.status?.conditions?.[1]?.message).toBe('subject organization is not system:nodes');
  });

  it('requests for other signers, and pending ones, are left alone', async () => {
    await request('custom', 'CN=jane', { signerName: 'example.com/custom', usages: ['client auth'] });
    await approve('custom');
    await request('pending', 'CN=jane', { signerName: 'kubernetes.io/kube-apiserver-client', usages: ['client auth'] });
    await caughtUp('after-pending');
    expect(((await core.get(csrs('custom'), {}, admin)) as CertificateSigningRequest).status?.certificate).toBeUndefined();
    expect(((await core.get(csrs('pending'), {}, admin)) as CertificateSigningRequest).status?.conditions).toBeUndefined();
  });

  it('csrapproving approves a node’s own client certificate after a SubjectAccessReview, then it is issued', async () => {
    await request(
      'n1-client',
      'CN=system:node:n1, O=system:nodes',
      { signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['client auth', 'digital signature'] },
      node,
    );
    const csr = await settled('n1-client', (c) => !!c.status?.certificate);
    expect(csr.status?.conditions?.[0]).toMatchObject({
      type: 'Approved',
      status: 'True',
      reason: 'AutoApproved',
      message: 'Auto approving self kubelet client certificate after SubjectAccessReview.',
    });
    expect(certificateOf(csr).subject).toBe('CN=system:node:n1\nO=system:nodes');
    // Another node's name: the review does not allow it, so it stays pending.
    await request(
      'n2-client',
      'CN=system:node:n2, O=system:nodes',
      { signerName: 'kubernetes.io/kube-apiserver-client-kubelet', usages: ['client auth', 'digital signature'] },
      node,
    );
    await caughtUp('after-n2-client');
    expect(((await core.get(csrs('n2-client'), {}, admin)) as CertificateSigningRequest).status?.conditions).toBeUndefined();
  });
});

describe('csrcleaner deadlines', () => {
  const hour = 3600_000;
  const at = Date.parse('2026-11-27T12:00:00Z');
  const iso = (ms: number) => new Date(ms).toISOString().replace(/\.000Z$/, 'Z');
  const csr = (created: number, conditions: Array<{ type: string; at: number }> = [], certificate?: string): CertificateSigningRequest => ({
    metadata: { name: 'x', creationTimestamp: iso(created) },
    status: { conditions: conditions.map((c) => ({ type: c.type, status: 'True', lastUpdateTime: iso(c.at) })), ...(certificate ? { certificate } : {}) },
  });

  it('pending for a day, denied or failed for an hour, issued an hour after approval', () => {
    expect(expired(csr(at - 23 * hour), at)).toBe(false);
    expect(expired(csr(at - 25 * hour), at)).toBe(true);
    expect(expired(csr(at - 2 * hour, [{ type: 'Denied', at: at - 30 * 60_000 }]), at)).toBe(false);
    expect(expired(csr(at - 2 * hour, [{ type: 'Denied', at: at - 61 * 60_000 }]), at)).toBe(true);
    expect(
      expired(
        csr(at - 2 * hour, [
          { type: 'Approved', at: at - 2 * hour },
          { type: 'Failed', at: at - 2 * hour },
        ]),
        at,
      ),
    ).toBe(true);
    // Approved long ago but not issued: the signer may still be working on it.
    expect(expired(csr(at - 30 * hour, [{ type: 'Approved', at: at - 2 * hour }]), at)).toBe(false);
    expect(expired(csr(at - 2 * hour, [{ type: 'Approved', at: at - 2 * hour }], 'Zm9v'), at)).toBe(true);
  });
});
