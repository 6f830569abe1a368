/**
 * certificates/v1 CertificateSigningRequest over a real core (embedded store): the requestor
 * recorded at create, upstream's validation messages, what the main resource, `/approval` and
 * `/status` may each change, and the three certificates admission plugins.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCore, type ApiObject, type Core, type RequestContext } from '../../../src/core';
import { csrCondition, type CertificateSigningRequest } from '../../../src/core/resources/certificatesigningrequests';
import { createStore } from '../../../src/store';
import { createNaming } from '../../../src/naming';
import { statusOf as refusal } from '../../support/status';
import { csrTarget, makeCsr, type TestCsr } from '../../support/csr';
import { ManualClock } from '../../../src/clock';
import { certificateApproval, certificateSigning, certificateSubjectRestriction } from '../../../src/core/admission/certificates';

const alice: RequestContext = { user: { username: 'alice', uid: 'u-1', groups: ['dev', 'system:authenticated'], extra: { scopes: ['a'] } } };
const approver: RequestContext = { user: { username: 'approver', groups: ['approvers'] } };
const csrs = csrTarget;
const SIGNER = 'kubernetes.io/kube-apiserver-client';

function body(name: string, csr: TestCsr, spec: Record<string, unknown> = {}): ApiObject {
  return {
    apiVersion: 'certificates.k8s.io/v1',
    kind: 'CertificateSigningRequest',
    metadata: { name },
    spec: { request: csr.request, signerName: SIGNER, usages: ['client auth'], ...spec },
  };
}

/** The field errors of a refused write, as `field: message` lines. */
async function causes(write: Promise<unknown>): Promise<string[]> {
  const { status } = await refusal(write);
  expect(status.reason).toBe('Invalid');
  return (status.details?.causes ?? []).map((c) => `${c.field}: ${c.message}`);
}

describe('CertificateSigningRequest', () => {
  let dir: string;
  let core: Core;
  let jane: TestCsr;
  const clock = new ManualClock(Date.parse('2026-11-27T10:00:00Z'));
  const asked: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-csr-'));
    core = createCore({
      store: createStore({ kind: 'embedded', dataDir: dir }),
      naming: createNaming('kubernetes'),
      clock,
      admissionPlugins: ['CertificateApproval', 'CertificateSigning', 'CertificateSubjectRestriction'],
      // Only `approvers` may approve, and only kube-apiserver-client requests; nobody may sign.
      authorizeSigner: async (user, verb, signerName) => {
        asked.push(`${user.username} ${verb} ${signerName}`);
        return verb === 'approve' && user.groups.includes('approvers') && signerName === SIGNER;
      },
    });
    await core.ready();
    jane = await makeCsr('CN=jane, O=dev');
  });
  afterAll(async () => {
    await core.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('records who asked, whatever the body says, and starts with an empty status', async () => {
    const created = (
      await core.create(
        csrs(),
        {
          ...body('who', jane, { username: 'mallory', groups: ['system:masters'] }),
          status: { certificate: 'Zm9v', conditions: [{ type: 'Approved', status: 'True' }] },
        },
        {},
        alice,
      )
    ).object as CertificateSigningRequest;
    expect(created.spec).toEqual({
      request: jane.request,
      signerName: SIGNER,
      usages: ['client auth'],
      username: 'alice',
      uid: 'u-1',
      groups: ['dev', 'system:authenticated'],
      extra: { scopes: ['a'] },
    });
    expect(created.status ?? {}).toEqual({});
    expect(csrCondition(created)).toBe('Pending');
    // The main resource changes neither spec nor status.
    const updated = (
      await core.update(
        csrs('who'),
        {
          ...created,
          spec: { ...created.spec, usages: ['server auth'] },
          status: { conditions: [{ type: 'Approved', status: 'True' }] },
          metadata: { ...created.metadata, labels: { a: 'b' } },
        },
        {},
        alice,
      )
    ).object as CertificateSigningRequest;
    expect(updated.spec?.usages).toEqual(['client auth']);
    expect(updated.status ?? {}).toEqual({});
    expect(updated.metadata?.labels).toEqual({ a: 'b' });
  });

  it('refuses a request that is not a signed PKCS#10 PEM, with upstream’s messages', async () => {
    const notPem = Buffer.from('hello').toString('base64');
    expect(
      await causes(core.create(csrs(), { ...body('bad-pem', jane), spec: { request: notPem, signerName: SIGNER, usages: ['client auth'] } }, {}, alice)),
    ).toEqual(['spec.request: Invalid value: []byte{0x68, 0x65, 0x6c, 0x6c, 0x6f}: PEM block type must be CERTIFICATE REQUEST']);
    // A request whose signature does not match (one byte of the signed part changed).
    const der = Buffer.from(jane.pem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
    der[40] ^= 1;
    const tampered = `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString('base64')}\n-----END CERTIFICATE REQUEST-----\n`;
    const messages = await causes(core.create(csrs(), body('bad-sig', { ...jane, request: Buffer.from(tampered).toString('base64') }), {}, alice));
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(
      /^spec\.request: Invalid value: \[\]byte\{0x2d, 0x2d, .*\}: (x509: ECDSA verification failure|x509: malformed certificate request)$/,
    );
  });

  it('checks usages, the signer name and the requested duration', async () => {
    expect(await causes(core.create(csrs(), body('no-usages', jane, { usages: [] }), {}, alice))).toEqual(['spec.usages: Required value']);
    const odd = await causes(core.create(csrs(), body('odd', jane, { usages: ['client auth', 'magic', 'client auth'], expirationSeconds: 599 }), {}, alice));
    expect(odd[0]).toMatch(/^spec\.usages\[1\]: Unsupported value: "magic": supported values: "any", "cert sign", "client auth", /);
    expect(odd.slice(1)).toEqual([
      'spec.usages[2]: Duplicate value: "client auth"',
      'spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)',
    ]);
    expect(await causes(core.create(csrs(), body('legacy', jane, { signerName: 'kubernetes.io/legacy-unknown' }), {}, alice))).toEqual([
      'spec.signerName: Invalid value: "kubernetes.io/legacy-unknown": the legacy signerName is not allowed via this API version',
    ]);
    expect(await causes(core.create(csrs(), body('no-slash', jane, { signerName: 'example' }), {}, alice))).toEqual([
      'spec.signerName: Invalid value: "example": must be a fully qualified domain and path of the form \'example.com/signer-name\'',
    ]);
    expect(await causes(core.create(csrs(), body('one-label', jane, { signerName: 'example/Signer' }), {}, alice))).toEqual([
      'spec.signerName: Invalid value: "example": should be a domain with at least two segments separated by dots',
      expect.stringMatching(/^spec\.signerName: Invalid value: "Signer": validating label "Signer": a lowercase RFC 1123 subdomain must consist of/),
    ]);
    expect(await causes(core.create(csrs(), body('no-signer', jane, { signerName: '' }), {}, alice))).toEqual(['spec.signerName: Required value']);
  });

  it('/approval adds Approved or Denied (stamped with the time), never both, never takes one back; only a permitted approver may', async () => {
    const created = (await core.create(csrs(), body('approve-me', jane), {}, alice)).object as CertificateSigningRequest;
    const approved = { ...created, status: { conditions: [{ type: 'Approved', status: 'True', reason: 'ByHand', message: 'ok' }] } };
    const refused = (await refusal(core.update(csrs('approve-me', 'approval'), approved, {}, alice))).status;
    expect(refused).toMatchObject({
      code: 403,
      reason: 'Forbidden',
      message: `certificatesigningrequests.certificates.k8s.io "approve-me" is forbidden: user not permitted to approve requests with signerName "${SIGNER}"`,
    });
    const done = (await core.update(csrs('approve-me', 'approval'), approved, {}, approver)).object as CertificateSigningRequest;
    expect(done.status?.conditions).toEqual([
      { type: 'Approved', status: 'True', reason: 'ByHand', message: 'ok', lastUpdateTime: '2026-11-27T10:00:00Z', lastTransitionTime: '2026-11-27T10:00:00Z' },
    ]);
    expect(csrCondition(done)).toBe('Approved');
    expect(asked).toContain(`approver approve ${SIGNER}`);
    // Taking it back, or denying as well.
    expect(await causes(core.update(csrs('approve-me', 'approval'), { ...done, status: { conditions: [] } }, {}, approver))).toEqual([
      'status.conditions: Forbidden: updates may not remove a condition of type "Approved"',
    ]);
    expect(
      await causes(
        core.update(
          csrs('approve-me', 'approval'),
          { ...done, status: { conditions: [...done.status!.conditions!, { type: 'Denied', status: 'True' }] } },
          {},
          approver,
        ),
      ),
    ).toEqual(['status.conditions[1].type: Invalid value: "Denied": Approved and Denied conditions are mutually exclusive']);
    expect(
      await causes(
        core.update(
          csrs('approve-me', 'approval'),
          { ...created, metadata: done.metadata, status: { conditions: [{ type: 'Approved', status: 'False' }] } },
          {},
          approver,
        ),
      ),
    ).toEqual(['status.conditions[0].status: Unsupported value: "False": supported values: "True"']);
  });

  it('/status sets the certificate once, and may not touch the approval; signing needs the sign permission', async () => {
    const created = (await core.create(csrs(), body('sign-me', jane), {}, alice)).object as CertificateSigningRequest;
    const approved = (
      await core.update(csrs('sign-me', 'approval'), { ...created, status: { conditions: [{ type: 'Approved', status: 'True' }] } }, {}, approver)
    ).object as CertificateSigningRequest;
    expect(
      await causes(
        core.update(
          csrs('sign-me', 'status'),
          { ...approved, status: { conditions: [...approved.status!.conditions!, { type: 'Denied', status: 'True' }] } },
          {},
          approver,
        ),
      ),
    ).toContain('status.conditions: Forbidden: updates may not add a condition of type "Denied"');
    const notACert = Buffer.from(jane.pem).toString('base64');
    expect(await causes(core.update(csrs('sign-me', 'status'), { ...approved, status: { ...approved.status, certificate: notACert } }, {}, approver))).toEqual([
      'status.certificate: Invalid value: "<certificate data>": only CERTIFICATE PEM blocks are allowed, found "CERTIFICATE REQUEST"',
    ]);
    // A well-formed certificate, but this user may not sign.
    const cert = Buffer.from(SELF_SIGNED).toString('base64');
    const forbidden = (await refusal(core.update(csrs('sign-me', 'status'), { ...approved, status: { ...approved.status, certificate: cert } }, {}, approver)))
      .status;
    expect(forbidden.message).toBe(
      `certificatesigningrequests.certificates.k8s.io "sign-me" is forbidden: user not permitted to sign requests with signerName "${SIGNER}"`,
    );
    // A Failed condition needs no signing permission.
    const failed = (
      await core.update(
        csrs('sign-me', 'status'),
        { ...approved, status: { ...approved.status, conditions: [...approved.status!.conditions!, { type: 'Failed', status: 'True', reason: 'Nope' }] } },
        {},
        approver,
      )
    ).object as CertificateSigningRequest;
    expect(csrCondition(failed)).toBe('Approved,Failed');
    // The main resource may not set the certificate either (it is kept as stored).
    const kept = (await core.update(csrs('sign-me'), { ...failed, status: { ...failed.status, certificate: cert } }, {}, alice))
      .object as CertificateSigningRequest;
    expect(kept.status?.certificate).toBeUndefined();
  });

  it('CertificateSubjectRestriction: no system:masters client certificates from the API server’s client signer', async () => {
    const masters = await makeCsr('CN=root, O=system:masters');
    const refused = (await refusal(core.create(csrs(), body('masters', masters), {}, alice))).status;
    expect(refused).toMatchObject({
      code: 403,
      message: `certificatesigningrequests.certificates.k8s.io "masters" is forbidden: use of ${SIGNER} signer with system:masters group is not allowed`,
    });
    // Another signer may be asked.
    await expect(core.create(csrs(), body('masters-elsewhere', masters, { signerName: 'example.com/internal' }), {}, alice)).resolves.toBeDefined();
  });

  it('lists by signer name (field selector)', async () => {
    const list = await core.list(csrs(), { fieldSelector: 'spec.signerName=example.com/internal' }, alice);
    expect(list.items.map((i) => i.metadata?.name)).toEqual(['masters-elsewhere']);
  });
});

test('the certificates plugins answer every other write synchronously (the chain stays synchronous)', () => {
  const naming = createNaming('kubernetes');
  const write = {
    operation: 'UPDATE',
    group: '',
    version: 'v1',
    kind: 'Pod',
    resource: 'pods',
    subresource: 'status',
    namespace: 'default',
    name: 'p',
    dryRun: false,
    user: alice.user,
  } as const;
  for (const plugin of [certificateApproval(naming, async () => true), certificateSigning(naming, async () => true), certificateSubjectRestriction(naming)]) {
    expect(plugin.validate!(write)).toBeUndefined();
  }
});

/** A self-signed P-256 certificate (CN=test), for /status writes. */
const SELF_SIGNED = `-----BEGIN CERTIFICATE-----
MIIBczCCARmgAwIBAgIUBrcLuszetnXuyAEzVVlzYFpJY/MwCgYIKoZIzj0EAwIw
DzENMAsGA1UEAwwEdGVzdDAeFw0yNjExMjcxOTE0NDJaFw0zNjExMjQxOTE0NDJa
MA8xDTALBgNVBAMMBHRlc3QwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAARLtM1S
TyJvWSFwTnvAZG0EeUNXaAUKxD4u8ajnkt2kBFTGY9FKZvPXakgo6DzwOiWhlsP6
jOVhsri4vl9eKynlo1MwUTAdBgNVHQ4EFgQUMYZRftJ7GjQBi+DtbMDuHTDovyIw
HwYDVR0jBBgwFoAUMYZRftJ7GjQBi+DtbMDuHTDovyIwDwYDVR0TAQH/BAUwAwEB
/zAKBggqhkjOPQQDAgNIADBFAiBhR767U8Q1usU9oMh0/JUQIEOxWhRD3M06oUA6
LFymXwIhAM+YGuFBiw6/8/PjqUrwpXyXoF1321cJVeq4u4C+Ygys
-----END CERTIFICATE-----
`;
