/**
 * The request authenticator, as upstream composes it: the front proxy's request headers first
 * (`--requestheader-client-ca-file`), then the client certificate, then each bearer-token
 * method in turn; the first that authenticates decides. Credentials that were
 * presented but that no method accepts are a 401 — never anonymous. A request that presents
 * none is `system:anonymous` in `system:unauthenticated`, or a 401 with `--anonymous-auth=false`.
 * Every authenticated user is also in `system:authenticated`.
 */
import { authenticateCertificate } from './x509';
import { anonymousUser, withAuthenticatedGroup } from './users';
import type { RequestHeaderAuthenticator } from './request-header';
import type { AuthenticationResult, Authenticator, Credentials, PeerCertificate, TokenAuthenticator } from './types';

export interface AuthenticatorOptions {
  /** The front proxy's request headers (`request-header.ts`), tried first; absent: not configured. */
  requestHeader?: RequestHeaderAuthenticator;
  /** Verify client certificates (`--client-ca-file`); the TLS layer did the chain check. */
  certificates: boolean;
  /** Bearer-token methods, tried in order. */
  tokens: readonly TokenAuthenticator[];
  /** `--anonymous-auth` (default true). */
  anonymous: boolean;
  /** With anonymous access: only these paths (the structured configuration's `anonymous.conditions`). */
  anonymousPaths?: readonly string[];
}

/** A certificate a front-proxy CA signed, and no client CA: not the x509 method's (upstream's x509 authenticator trusts the client CA only). */
const FRONT_PROXY_CERTIFICATE: AuthenticationResult = { outcome: 'rejected', reason: 'x509: certificate signed by unknown authority' };

export function createAuthenticator(options: AuthenticatorOptions): Authenticator {
  const { requestHeader } = options;
  /**
   * A certificate's answer, worked out once per certificate object: the TLS door hands the same
   * object to every request of a connection (its chain was verified at the handshake), and the
   * answer depends on nothing else. The user is frozen, as it is shared by those requests.
   */
  const certificateResults = new WeakMap<PeerCertificate, AuthenticationResult>();
  const certificateResult = (cert: PeerCertificate): AuthenticationResult => {
    let result = certificateResults.get(cert);
    if (!result) {
      result = requestHeader?.frontProxyOnly(cert) ? FRONT_PROXY_CERTIFICATE : authenticateCertificate(cert);
      if (result.outcome === 'authenticated') {
        const user = withAuthenticatedGroup(result.user);
        Object.freeze(user.groups);
        result = { ...result, user: Object.freeze(user) };
      }
      certificateResults.set(cert, result);
    }
    return result;
  };
  /** The front proxy's answer, when configured: a user named by its headers, or why its certificate may not name one. */
  const fromFrontProxy = (credentials: Credentials): AuthenticationResult | undefined => {
    if (!requestHeader || !credentials.certificate) return undefined;
    const result = requestHeader.authenticate(credentials);
    if (result.outcome === 'authenticated') return { ...result, user: withAuthenticatedGroup(result.user) };
    return result.outcome === 'rejected' ? result : undefined;
  };
  const walk = async (credentials: Credentials, frontProxy: AuthenticationResult | undefined): Promise<AuthenticationResult> => {
    const reasons: string[] = [];
    if (frontProxy?.outcome === 'rejected') reasons.push(frontProxy.reason);
    if (credentials.certificate && options.certificates) {
      const result = certificateResult(credentials.certificate);
      if (result.outcome === 'authenticated') return result;
      if (result.outcome === 'rejected') reasons.push(result.reason);
    }
    if (credentials.token !== undefined) {
      for (const method of options.tokens) {
        const result = await method.authenticateToken(credentials.token);
        if (result.outcome === 'authenticated') return { ...result, user: withAuthenticatedGroup(result.user) };
        if (result.outcome === 'rejected') reasons.push(`${method.name}: ${result.reason}`);
      }
      reasons.push('invalid bearer token');
    }
    if (reasons.length > 0) return { outcome: 'rejected', reason: reasons.join('; ') };
    // A certificate nobody is configured to check is ignored, as upstream without a client CA.
    const allowed = options.anonymous && (!options.anonymousPaths || (credentials.path !== undefined && options.anonymousPaths.includes(credentials.path)));
    return allowed ? { outcome: 'authenticated', user: anonymousUser() } : { outcome: 'rejected', reason: 'anonymous requests are disabled' };
  };
  return {
    // A front proxy's user and a verified client certificate (nearly every caller of the HTTPS
    // door) are answered at once; everything else goes through the whole chain.
    authenticate(credentials: Credentials): AuthenticationResult | Promise<AuthenticationResult> {
      const frontProxy = fromFrontProxy(credentials);
      if (frontProxy?.outcome === 'authenticated') return frontProxy;
      if (credentials.certificate && options.certificates) {
        const result = certificateResult(credentials.certificate);
        if (result.outcome === 'authenticated') return result;
      }
      return walk(credentials, frontProxy);
    },
  };
}
