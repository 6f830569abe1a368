/**
 * Step 4: authentication. The request's credentials — the client certificate the TLS layer
 * verified, the token of `Authorization: Bearer <token>`, and a front proxy's `X-Remote-*`
 * headers (docs/FRONT-PROXY.md) — go to the server's authenticator
 * chain (src/authn). Credentials that no method accepts are a 401 with upstream's bare
 * `Unauthorized` Status (the reason goes to the log only); none at all is `system:anonymous`
 * unless anonymous requests are disabled.
 */
import { type AuthenticationResult, type Authenticator, type Credentials, createAuthenticator } from '../../authn';
import { unauthorized } from '../../status';
import { type Exchange, type GatewayRequest, type Handler, type Step, rejectingThrows } from '../types';

export { ANONYMOUS_USER, AUTHENTICATED_GROUP, UNAUTHENTICATED_GROUP, anonymousUser } from '../../authn';

/** Client certificates and anonymous requests: the chain when nothing else is configured. */
export const DEFAULT_AUTHENTICATOR: Authenticator = createAuthenticator({ certificates: true, tokens: [], anonymous: true });

/** Upstream's bearer token rule: `Bearer` (any case), a space, a non-empty token; other schemes are not tokens. */
export function bearerTokenOf(header: string | undefined): string | undefined {
  const value = header?.trim();
  if (!value) return undefined;
  const parts = value.split(' ');
  if (parts.length < 2 || parts[0]!.toLowerCase() !== 'bearer') return undefined;
  return parts[1] === '' ? undefined : parts[1];
}

export function credentialsOf(request: GatewayRequest): Credentials {
  // The headers, for the front proxy's request-header method (which removes what it read).
  const credentials: Credentials = { path: request.path, headers: request };
  if (request.peerCertificate) credentials.certificate = request.peerCertificate;
  const token = bearerTokenOf(request.headers.authorization);
  if (token !== undefined) credentials.token = token;
  return credentials;
}

export interface AuthenticationStepOptions {
  authenticator?: Authenticator;
  /** Where a refusal's reason goes (never to the client). */
  onRejected?: (reason: string) => void;
}

export function authenticationStep(options: AuthenticationStepOptions = {}): Step {
  const authenticator = options.authenticator ?? DEFAULT_AUTHENTICATOR;
  const proceed = (exchange: Exchange, next: Handler, result: AuthenticationResult): Promise<void> | void => {
    if (result.outcome !== 'authenticated') {
      options.onRejected?.(result.outcome === 'rejected' ? result.reason : 'no opinion');
      throw unauthorized();
    }
    exchange.user = result.user;
    return next(exchange);
  };
  // A request the authenticator answers at once (a client certificate) goes on with no promise
  // of this step's own.
  return (next) =>
    rejectingThrows((exchange) => {
      const result = authenticator.authenticate(credentialsOf(exchange.request));
      if (result instanceof Promise) return result.then((r) => proceed(exchange, next, r));
      return proceed(exchange, next, result);
    });
}
