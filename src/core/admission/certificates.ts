/**
 * The certificates admission plugins, as upstream's (plugin/pkg/admission/certificates), all on
 * by default:
 *
 * - CertificateApproval: a write to a CertificateSigningRequest's `/approval` needs the `approve`
 *   verb on the `signers` resource of the certificates group, named by the stored request's
 *   signerName or its domain's wildcard (`example.com/*`);
 * - CertificateSigning: a write to `/status` that changes the certificate needs `sign` on it;
 * - CertificateSubjectRestriction: a request for the `<key domain>/kube-apiserver-client`
 *   signer may not ask for the `system:masters` group (its subject's Organization).
 */
import type { UserInfo } from '../api';
import type { Naming } from '../../naming';
import { forbidden } from '../../status';
import { builtinSigners, parseCertificateRequest, type CertificateSigningRequest } from '../resources/certificatesigningrequests';
import type { AdmissionAttributes, AdmissionPlugin } from './types';

/** Whether `user` may `verb` (approve, sign) requests for `signerName` (the `signers` resource). */
export type SignerAuthorizer = (user: UserInfo, verb: 'approve' | 'sign', signerName: string) => Promise<boolean>;

const isCsr = (a: AdmissionAttributes, naming: Naming) => a.group === naming.groups.certificates && a.resource === 'certificatesigningrequests';

/**
 * A plugin that, for an UPDATE of a request's `subresource` that `touches` it, requires `verb` on
 * the stored request's signer (an update cannot change the signer). Synchronous for every other
 * write: an async validate would make the whole phase async.
 */
function signerPermission(
  name: string,
  subresource: string,
  verb: 'approve' | 'sign',
  touches: (next: CertificateSigningRequest | undefined, old: CertificateSigningRequest | undefined) => boolean,
  naming: Naming,
  authorizeSigner: SignerAuthorizer | undefined,
): AdmissionPlugin {
  return {
    name,
    validate(a) {
      if (!isCsr(a, naming) || a.subresource !== subresource || a.operation !== 'UPDATE' || !authorizeSigner) return;
      const old = a.oldObject as CertificateSigningRequest | undefined;
      if (!touches(a.object as CertificateSigningRequest | undefined, old)) return;
      const signerName = old?.spec?.signerName ?? '';
      return authorizeSigner(a.user, verb, signerName).then((allowed) => {
        if (!allowed)
          throw forbidden(
            { group: a.group, resource: a.resource },
            a.name,
            `user not permitted to ${verb} requests with signerName ${JSON.stringify(signerName)}`,
          );
      });
    },
  };
}

export function certificateApproval(naming: Naming, authorizeSigner: SignerAuthorizer | undefined): AdmissionPlugin {
  return signerPermission('CertificateApproval', 'approval', 'approve', () => true, naming, authorizeSigner);
}

/** Only a write that changes the certificate is signing. */
export function certificateSigning(naming: Naming, authorizeSigner: SignerAuthorizer | undefined): AdmissionPlugin {
  return signerPermission(
    'CertificateSigning',
    'status',
    'sign',
    (next, old) => (old?.status?.certificate ?? '') !== (next?.status?.certificate ?? ''),
    naming,
    authorizeSigner,
  );
}

export function certificateSubjectRestriction(naming: Naming): AdmissionPlugin {
  return {
    name: 'CertificateSubjectRestriction',
    validate(a) {
      if (!isCsr(a, naming) || a.subresource !== '' || a.operation !== 'CREATE') return;
      const csr = a.object as CertificateSigningRequest | undefined;
      const signer = builtinSigners(naming).kubeApiserverClient;
      if (csr?.spec?.signerName !== signer) return;
      let organizations: string[];
      try {
        organizations = parseCertificateRequest(Buffer.from(csr.spec.request ?? '', 'base64')).organizations;
      } catch (err) {
        throw forbidden({ group: a.group, resource: a.resource }, a.name, `failed to parse CSR: ${(err as Error).message}`);
      }
      if (organizations.includes('system:masters')) {
        throw forbidden({ group: a.group, resource: a.resource }, a.name, `use of ${signer} signer with system:masters group is not allowed`);
      }
    },
  };
}
