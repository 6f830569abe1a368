/**
 * The certificate controllers, as upstream's controller manager runs them:
 *
 * - `csrsigning`: an approved request (not denied, not failed, not yet issued) for one of the
 *   built-in signers is checked against that signer's rules and signed with the cluster CA, or
 *   marked Failed (`SignerValidationFailure`) with the reason. The certificate is valid from 5
 *   minutes back for `--cluster-signing-duration` (1 year), or the request's
 *   `expirationSeconds` when shorter; a certificate of 8 hours or less is not backdated at its end.
 * - `csrapproving`: a kubelet client request (`<key domain>/kube-apiserver-client-kubelet`,
 *   subject `system:node:<name>` in `system:nodes`, client usages only) is approved when a
 *   SubjectAccessReview lets its requestor create `certificatesigningrequests/selfnodeclient`
 *   (its own node's certificate) or `certificatesigningrequests/nodeclient`.
 * - `csrcleaner`: every hour, requests pending for 24 hours, denied or failed for an hour,
 *   issued an hour after approval, or whose certificate has expired, are deleted.
 */
import { X509Certificate } from 'node:crypto';
import {
  type ApiObject,
  type RequestContext,
  type ResourceTarget,
  followResource,
  type InformerChange,
  type InformerView,
  builtinSigners,
  parseCertificateRequest,
  pemBlocks,
  type CertificateSigningRequest,
  type CsrCondition,
  type ParsedCsr,
} from '../core';
import { rfc3339 } from '../clock';
import type { Naming } from '../naming';
import { StatusError } from '../status';
import { WorkQueue } from './work-queue';
import type { ApiControllerOptions } from './options';

/** What the signer asks of the CA: the request, its validity and usages; answers the certificate as PEM. */
export type CsrSign = (signing: { requestDer: Uint8Array; notBefore: Date; notAfter: Date; usages: readonly string[] }) => Promise<string>;

/** Upstream's `--cluster-signing-duration` default: a year. */
export const CLUSTER_SIGNING_DURATION_MS = 8760 * 3600_000;
const BACKDATE_MS = 5 * 60_000;
const SHORT_MS = 8 * 3600_000;
const CLEANER_INTERVAL_MS = 3600_000;
const APPROVED_EXPIRATION_MS = 3600_000;
const DENIED_EXPIRATION_MS = 3600_000;
const PENDING_EXPIRATION_MS = 24 * 3600_000;

export type CertificateControllerOptions = ApiControllerOptions;

const target = (naming: Naming, name?: string, subresource?: string): ResourceTarget => ({
  group: naming.groups.certificates,
  version: 'v1',
  resource: 'certificatesigningrequests',
  ...(name !== undefined ? { name } : {}),
  ...(subresource ? { subresource } : {}),
});

const conditions = (csr: CertificateSigningRequest): CsrCondition[] => csr.status?.conditions ?? [];
const has = (csr: CertificateSigningRequest, type: string) => conditions(csr).some((c) => c.type === type);

/** Go's %v of a sorted string list: `[client auth digital signature]`. */
const goList = (items: readonly string[]) => `[${[...items].sort().join(' ')}]`;
/** The same members, repeats in `a` aside (upstream compares usage sets). */
const sameSet = (a: readonly string[], b: readonly string[]) => new Set(a).size === b.length && b.every((x) => a.includes(x)) && a.every((x) => b.includes(x));

const KUBELET_CLIENT_USAGES = ['client auth', 'digital signature', 'key encipherment'];
const KUBELET_CLIENT_USAGES_NO_RSA = ['client auth', 'digital signature'];
const KUBELET_SERVING_USAGES = ['digital signature', 'key encipherment', 'server auth'];
const KUBELET_SERVING_USAGES_NO_RSA = ['digital signature', 'server auth'];

/** upstream's ValidateKubeletClientCSR. */
export function kubeletClientProblem(req: ParsedCsr, usages: readonly string[]): string | undefined {
  if (req.organizations.length !== 1 || req.organizations[0] !== 'system:nodes') return 'subject organization is not system:nodes';
  if (req.dnsNames.length > 0) return 'DNS subjectAltNames are not allowed';
  if (req.emails.length > 0) return 'Email subjectAltNames are not allowed';
  if (req.ipAddresses.length > 0) return 'IP subjectAltNames are not allowed';
  if (req.uris.length > 0) return 'URI subjectAltNames are not allowed';
  if (!req.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  if (!sameSet(usages, KUBELET_CLIENT_USAGES) && !sameSet(usages, KUBELET_CLIENT_USAGES_NO_RSA)) return `usages did not match ${goList(KUBELET_CLIENT_USAGES)}`;
  return undefined;
}

/** upstream's ValidateKubeletServingCSR. */
function kubeletServingProblem(req: ParsedCsr, usages: readonly string[]): string | undefined {
  if (req.organizations.length !== 1 || req.organizations[0] !== 'system:nodes') return 'subject organization is not system:nodes';
  if (req.dnsNames.length === 0 && req.ipAddresses.length === 0) return 'DNS or IP subjectAltName is required';
  if (req.emails.length > 0) return 'Email subjectAltNames are not allowed';
  if (req.uris.length > 0) return 'URI subjectAltNames are not allowed';
  if (!sameSet(usages, KUBELET_SERVING_USAGES) && !sameSet(usages, KUBELET_SERVING_USAGES_NO_RSA))
    return `usages did not match ${goList(KUBELET_SERVING_USAGES)}`;
  if (!req.commonName.startsWith('system:node:')) return 'subject common name does not begin with system:node:';
  return undefined;
}

/** upstream's validAPIServerClientUsages. */
function apiServerClientProblem(usages: readonly string[]): string | undefined {
  let clientAuth = false;
  for (const u of usages) {
    if (u === 'client auth') clientAuth = true;
    else if (u !== 'digital signature' && u !== 'key encipherment') return `invalid usage for client certificate: ${u}`;
  }
  return clientAuth ? undefined : 'missing required usage for client certificate: client auth';
}

/** Watches requests and queues each change by name. */
abstract class CsrController {
  protected readonly informer: InformerView;
  protected readonly queue: WorkQueue<string>;
  protected readonly ctx: RequestContext;

  constructor(
    protected readonly options: CertificateControllerOptions,
    private readonly label: string,
  ) {
    this.ctx = { user: options.user, userAgent: `keelson-controller-manager/${label}` };
    this.queue = new WorkQueue<string>(
      (name) => name,
      (name) => this.sync(name),
      { name: 'certificate', metrics: options.queueMetrics },
    );
    this.informer = followResource(options, target(options.naming), this.ctx, (c?: InformerChange) => {
      if (c) this.queue.add(c.object.metadata!.name!);
      else for (const csr of this.informer.objects.values()) this.queue.add(csr.metadata!.name!);
    });
  }

  start(): void {
    this.queue.startWhen(this.informer.synced, (err) => this.options.log?.(`${this.label}: informer failed to start: ${err.message}`));
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  stop(): void {
    this.queue.stop();
    this.informer.stop();
  }

  protected get(name: string): CertificateSigningRequest | undefined {
    return this.informer.objects.get(`/${name}`) as CertificateSigningRequest | undefined;
  }

  protected abstract sync(name: string): Promise<void>;

  /** Write through a subresource, leaving alone a request gone or changed meanwhile (its next event brings it back). */
  protected async write(csr: CertificateSigningRequest, subresource: 'status' | 'approval'): Promise<void> {
    try {
      await this.options.core.update(target(this.options.naming, csr.metadata!.name!, subresource), csr as ApiObject, {}, this.ctx);
    } catch (err) {
      if (StatusError.is(err, 'Conflict') || StatusError.is(err, 'NotFound')) return;
      throw err;
    }
  }
}

export interface CsrSigningOptions extends CertificateControllerOptions {
  sign: CsrSign;
  /** `--cluster-signing-duration` in milliseconds. */
  durationMs?: number;
}

export class CsrSigningController extends CsrController {
  constructor(private readonly signing: CsrSigningOptions) {
    super(signing, 'csrsigning');
  }

  protected async sync(name: string): Promise<void> {
    const csr = this.get(name);
    if (!csr || csr.status?.certificate || !has(csr, 'Approved') || has(csr, 'Denied') || has(csr, 'Failed')) return;
    const signers = builtinSigners(this.options.naming);
    const signerName = csr.spec?.signerName ?? '';
    if (![signers.kubeApiserverClient, signers.kubeApiserverClientKubelet, signers.kubeletServing, signers.legacyUnknown].includes(signerName)) return;
    const request = parseCertificateRequest(Buffer.from(csr.spec?.request ?? '', 'base64'));
    const usages = csr.spec?.usages ?? [];
    const problem =
      signerName === signers.kubeApiserverClient
        ? apiServerClientProblem(usages)
        : signerName === signers.kubeApiserverClientKubelet
          ? kubeletClientProblem(request, usages)
          : signerName === signers.kubeletServing
            ? kubeletServingProblem(request, usages)
            : undefined;
    const now = this.options.clock.now();
    const next: CertificateSigningRequest = { ...csr, status: { ...csr.status } };
    if (problem) {
      next.status!.conditions = [
        ...conditions(csr),
        { type: 'Failed', status: 'True', reason: 'SignerValidationFailure', message: problem, lastUpdateTime: rfc3339(now) },
      ];
      await this.write(next, 'status');
      return;
    }
    const maxMs = this.signing.durationMs ?? CLUSTER_SIGNING_DURATION_MS;
    const requested = csr.spec?.expirationSeconds;
    const ttl = requested !== undefined ? Math.min(maxMs, Math.max(requested, 600) * 1000) : maxMs;
    const notBefore = new Date(now - BACKDATE_MS);
    const notAfter = new Date(ttl < SHORT_MS ? now + ttl : notBefore.getTime() + ttl);
    let pem: string;
    try {
      pem = await this.signing.sign({ requestDer: request.der, notBefore, notAfter, usages });
    } catch (err) {
      this.options.log?.(`csrsigning: signing ${name}: ${(err as Error).message}`);
      return;
    }
    next.status!.certificate = Buffer.from(pem).toString('base64');
    await this.write(next, 'status');
  }
}

export class CsrApprovingController extends CsrController {
  constructor(options: CertificateControllerOptions) {
    super(options, 'csrapproving');
  }

  protected async sync(name: string): Promise<void> {
    const csr = this.get(name);
    if (!csr || csr.status?.certificate || has(csr, 'Approved') || has(csr, 'Denied')) return;
    if (csr.spec?.signerName !== builtinSigners(this.options.naming).kubeApiserverClientKubelet) return;
    let request: ParsedCsr;
    try {
      request = parseCertificateRequest(Buffer.from(csr.spec?.request ?? '', 'base64'));
    } catch {
      return;
    }
    if (kubeletClientProblem(request, csr.spec?.usages ?? [])) return;
    const tries: Array<[string, string]> = [];
    if (csr.spec?.username === request.commonName) tries.push(['selfnodeclient', 'Auto approving self kubelet client certificate after SubjectAccessReview.']);
    tries.push(['nodeclient', 'Auto approving kubelet client certificate after SubjectAccessReview.']);
    for (const [subresource, message] of tries) {
      if (!(await this.allowed(csr, subresource))) continue;
      const now = rfc3339(this.options.clock.now());
      const approved: CertificateSigningRequest = {
        ...csr,
        status: { ...csr.status, conditions: [...conditions(csr), { type: 'Approved', status: 'True', reason: 'AutoApproved', message, lastUpdateTime: now }] },
      };
      await this.write(approved, 'approval');
      return;
    }
  }

  /** A SubjectAccessReview for the requestor: may it create `certificatesigningrequests/<subresource>`? */
  private async allowed(csr: CertificateSigningRequest, subresource: string): Promise<boolean> {
    const group = this.options.naming.groups.authorization;
    const spec = csr.spec ?? {};
    const review = await this.options.core.create(
      { group, version: 'v1', resource: 'subjectaccessreviews' },
      {
        apiVersion: `${group}/v1`,
        kind: 'SubjectAccessReview',
        spec: {
          user: spec.username,
          ...(spec.uid ? { uid: spec.uid } : {}),
          groups: spec.groups ?? [],
          ...(spec.extra ? { extra: spec.extra } : {}),
          resourceAttributes: {
            group: this.options.naming.groups.certificates,
            version: '*',
            resource: 'certificatesigningrequests',
            subresource,
            verb: 'create',
          },
        },
      },
      {},
      this.ctx,
    );
    return (review.object as { status?: { allowed?: boolean } }).status?.allowed === true;
  }
}

export class CsrCleaner {
  private readonly informer: InformerView;
  private readonly ctx: RequestContext;
  private cancel?: () => void;
  private running?: Promise<void>;

  constructor(private readonly options: CertificateControllerOptions) {
    this.ctx = { user: options.user, userAgent: 'keelson-controller-manager/csrcleaner' };
    this.informer = followResource(options, target(options.naming), this.ctx, () => {});
  }

  start(): void {
    void this.informer.synced.then(
      () => {
        this.running = this.sweep();
        this.cancel = this.options.clock.setInterval(() => (this.running = this.sweep()), CLEANER_INTERVAL_MS);
      },
      (err: Error) => this.options.log?.(`csrcleaner: informer failed to start: ${err.message}`),
    );
  }

  /** The sweep under way, if any. */
  async idle(): Promise<void> {
    await this.running;
  }

  stop(): void {
    this.cancel?.();
    this.informer.stop();
  }

  /** One pass over every request (upstream polls hourly). */
  async sweep(): Promise<void> {
    const now = this.options.clock.now();
    for (const obj of [...this.informer.objects.values()]) {
      const csr = obj as CertificateSigningRequest;
      if (!expired(csr, now)) continue;
      try {
        await this.options.core.delete(target(this.options.naming, csr.metadata!.name!), {}, this.ctx);
      } catch (err) {
        if (!StatusError.is(err, 'NotFound')) this.options.log?.(`csrcleaner: deleting ${csr.metadata!.name}: ${(err as Error).message}`);
      }
    }
  }
}

/** Whether the cleaner deletes `csr` at `now` (upstream's deadlines). */
export function expired(csr: CertificateSigningRequest, now: number): boolean {
  const olderThan = (time: string | undefined, ms: number) => time !== undefined && Date.parse(time) + ms < now;
  const issued = !!csr.status?.certificate;
  for (const c of conditions(csr)) {
    if (c.type === 'Approved' && issued && olderThan(c.lastUpdateTime, APPROVED_EXPIRATION_MS)) return true;
    if (c.type === 'Denied' && olderThan(c.lastUpdateTime, DENIED_EXPIRATION_MS)) return true;
    if (c.type === 'Failed' && olderThan(c.lastUpdateTime, DENIED_EXPIRATION_MS)) return true;
  }
  if (!has(csr, 'Approved') && !has(csr, 'Denied') && olderThan(csr.metadata?.creationTimestamp ?? undefined, PENDING_EXPIRATION_MS)) return true;
  if (issued && has(csr, 'Approved')) {
    const block = pemBlocks(Buffer.from(csr.status!.certificate!, 'base64').toString('latin1')).find((b) => b.type === 'CERTIFICATE');
    try {
      if (block && Date.parse(new X509Certificate(block.der).validTo) < now) return true;
    } catch {
      // Not a certificate: nothing to expire.
    }
  }
  return false;
}
