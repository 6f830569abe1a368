/**
 * Authentication: who is asking. Both doors hand the credentials a request presented — a client
 * certificate from the TLS layer, a bearer token from a header or gRPC metadata — to one
 * `Authenticator`, which answers with upstream's user attributes (username, uid, groups, extra)
 * or refuses. Each method is one module implementing a small interface; `chain.ts` combines them
 * as upstream's request authenticator union does.
 */
import { jose } from '../util/jose';
import type { UserInfo } from '../core';

/** What the TLS layer learned about the client certificate, if one was presented. */
export interface PeerCertificate {
  /** True when the chain verified against the client CA (and the dates are valid). */
  verified: boolean;
  /** Why verification failed, when it did. */
  verifyError?: string;
  commonName: string;
  organizations: string[];
  /** Extended key usage OIDs, when the certificate carries the extension. */
  extKeyUsage?: string[];
  /**
   * The certificate's DER bytes, for the methods that check it against a CA of their own (the
   * front proxy's, `request-header.ts`) rather than the client CA `verified` speaks for.
   */
  der?: Uint8Array;
}

/**
 * The headers of an HTTPS request, for the methods that read them (the front proxy's
 * `X-Remote-*`). The gRPC door has none to give.
 */
export interface RequestHeaders {
  /** Values by lower-case name, repeated headers joined with ", " (node's form). */
  readonly headers: Readonly<Record<string, string | undefined>>;
  /** Every value of the header `name` (lower-case), one per header line, in order (Go's `Header[name]`). */
  headerValues?(name: string): readonly string[];
  /** Forget the header `name`, so that nothing after authentication sees it. */
  removeHeader?(name: string): void;
}

/** The credentials of one request. */
export interface Credentials {
  certificate?: PeerCertificate;
  /** The token of `Authorization: Bearer <token>` (HTTPS) or the `authorization` metadata (gRPC). */
  token?: string;
  /** The request path, for anonymous access limited to some paths. */
  path?: string;
  /** The request's headers (HTTPS only), for the front proxy's request-header method. */
  headers?: RequestHeaders;
}

/**
 * One method's answer: a user; no opinion (the credential is not of its kind, e.g. a token
 * that is not a JWT); or a refusal (the credential is of its kind but invalid: expired, bad
 * signature, revoked). The reason of a refusal is for the server log, never for the client.
 */
export type AuthenticationResult =
  | { outcome: 'authenticated'; user: UserInfo; audiences?: string[] }
  | { outcome: 'noOpinion' }
  | { outcome: 'rejected'; reason: string };

/** A method that authenticates bearer tokens. */
export interface TokenAuthenticator {
  /** Upstream's name for the method, for logs and metrics. */
  readonly name: string;
  authenticateToken(token: string): AuthenticationResult | Promise<AuthenticationResult>;
}

/** The whole chain, as the doors call it. */
export interface Authenticator {
  /** An answer at once where the chain has one (a verified client certificate), else a promise of it. */
  authenticate(credentials: Credentials): AuthenticationResult | Promise<AuthenticationResult>;
}

export const NO_OPINION: AuthenticationResult = { outcome: 'noOpinion' };

/**
 * The issuer a token claims, read without verifying anything, or undefined when the token is not
 * a JWT (a compact JWS has three dot-separated parts; checked first, as cheaper than a failed decode).
 */
export function claimedIssuer(token: string): string | undefined {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] === '' || parts[1] === '') return undefined;
  try {
    const iss = (jose().decodeJwt(token) as Record<string, unknown>).iss;
    return typeof iss === 'string' ? iss : undefined;
  } catch {
    return undefined;
  }
}

export function rejected(reason: string): AuthenticationResult {
  return { outcome: 'rejected', reason };
}
