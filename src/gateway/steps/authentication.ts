/**
 * Step 2: authentication. A client certificate that verified against the cluster CA names the
 * user (subject CN) and groups (each O), plus `system:authenticated`; no certificate means
 * anonymous. A certificate that is presented but does not verify is a 401, never anonymous:
 * upstream wraps its authenticators in a fail-on-error union before the anonymous one
 * (docs/API.md, "Authentication and authorization").
 */
import type { UserInfo } from '../../core/api';
import { unauthorized } from '../../status';
import type { PeerCertificate, Step } from '../types';

export const ANONYMOUS_USER = 'system:anonymous';
export const UNAUTHENTICATED_GROUP = 'system:unauthenticated';
export const AUTHENTICATED_GROUP = 'system:authenticated';

/** id-kp-clientAuth, which upstream's x509 authenticator requires when the certificate restricts its usages. */
const CLIENT_AUTH_OID = '1.3.6.1.5.5.7.3.2';
const ANY_EXTENDED_KEY_USAGE_OID = '2.5.29.37.0';

export type AuthenticationResult =
  | { outcome: 'authenticated'; user: UserInfo }
  | { outcome: 'anonymous'; user: UserInfo }
  | { outcome: 'rejected'; reason: string };

export function anonymousUser(): UserInfo {
  return { username: ANONYMOUS_USER, groups: [UNAUTHENTICATED_GROUP] };
}

export function authenticateCertificate(cert: PeerCertificate | undefined): AuthenticationResult {
  if (!cert) return { outcome: 'anonymous', user: anonymousUser() };
  if (!cert.verified) return { outcome: 'rejected', reason: cert.verifyError ?? 'certificate did not verify' };
  const usages = cert.extKeyUsage;
  if (usages && !usages.includes(CLIENT_AUTH_OID) && !usages.includes(ANY_EXTENDED_KEY_USAGE_OID)) {
    return { outcome: 'rejected', reason: 'certificate is not valid for client authentication' };
  }
  if (!cert.commonName) return { outcome: 'rejected', reason: 'certificate has no common name' };
  const groups = [...cert.organizations];
  if (!groups.includes(AUTHENTICATED_GROUP)) groups.push(AUTHENTICATED_GROUP);
  return { outcome: 'authenticated', user: { username: cert.commonName, groups } };
}

export const authenticationStep: Step = (next) => async (exchange) => {
  const result = authenticateCertificate(exchange.request.peerCertificate);
  if (result.outcome === 'rejected') throw unauthorized();
  exchange.user = result.user;
  return next(exchange);
};
