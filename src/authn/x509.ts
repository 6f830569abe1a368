/**
 * Client certificates (`--client-ca-file`), as upstream's x509 authenticator: a certificate
 * whose chain verified against the client CA names the user by its subject's common name and a
 * group per organization. A certificate presented that does not verify, that may not be used
 * for client authentication, or that has no common name is refused.
 */
import type { AuthenticationResult, PeerCertificate } from './types';
import { NO_OPINION, rejected } from './types';

/** id-kp-clientAuth, which upstream requires when the certificate restricts its usages. */
const CLIENT_AUTH_OID = '1.3.6.1.5.5.7.3.2';
const ANY_EXTENDED_KEY_USAGE_OID = '2.5.29.37.0';

/** Whether the certificate may authenticate a client: no extended key usages, or clientAuth or any among them. */
export function allowsClientAuth(cert: PeerCertificate): boolean {
  const usages = cert.extKeyUsage;
  return !usages || usages.includes(CLIENT_AUTH_OID) || usages.includes(ANY_EXTENDED_KEY_USAGE_OID);
}

export function authenticateCertificate(cert: PeerCertificate | undefined): AuthenticationResult {
  if (!cert) return NO_OPINION;
  if (!cert.verified) return rejected(`x509: ${cert.verifyError ?? 'certificate did not verify'}`);
  if (!allowsClientAuth(cert)) return rejected('x509: certificate specifies an incompatible key usage');
  if (!cert.commonName) return rejected('x509: certificate has no common name');
  return { outcome: 'authenticated', user: { username: cert.commonName, groups: [...cert.organizations] } };
}
