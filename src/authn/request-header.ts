/**
 * Front-proxy authentication (`--requestheader-*`), as upstream's request-header authenticator:
 * an authenticating proxy in front of the server (another API server's aggregator, or any proxy
 * that logs its users in) names the end user in headers — `X-Remote-User`, `X-Remote-Group`,
 * `X-Remote-Extra-<key>` by convention — and proves it is the proxy with a client certificate
 * signed by the front-proxy CA (`--requestheader-client-ca-file`), never the ordinary client CA,
 * whose common name is one of `--requestheader-allowed-names` when that list is set.
 *
 * Upstream's order and outcomes: no client certificate is no opinion (headers alone are never
 * believed, and the rest of the chain carries on); a certificate the front-proxy CA did not sign,
 * or one whose name is not allowed, is refused by this method (the chain goes on, and a request
 * no other method accepts is a 401); a good certificate without a user header is no opinion.
 * Once the headers name a user they are removed from the request, so that nothing after
 * authentication (impersonation, the handlers, a proxy onwards) reads them. The gRPC door has no
 * headers, so the method never speaks for its calls.
 */
import { X509Certificate } from 'node:crypto';
import type { UserInfo } from '../core';
import { type Clock, systemClock } from '../clock';
import { pathUnescape } from '../util/go-url';
import { parseCaBundle } from './peer-certificate';
import { type AuthenticationResult, type Credentials, NO_OPINION, type PeerCertificate, type RequestHeaders, rejected } from './types';
import { allowsClientAuth } from './x509';

export interface RequestHeaderOptions {
  /** `--requestheader-client-ca-file`'s PEM bundle: the CAs that sign the front proxy's certificate. */
  clientCa: string;
  /**
   * The client CA bundle (the x509 method's), when the TLS layer trusts both bundles: a
   * certificate a front-proxy CA signed and none of these did is left to this method. Read when
   * first needed (a server's generated CA is made while it starts).
   */
  x509ClientCa?: () => string;
  /** `--requestheader-allowed-names`: the common names a front proxy's certificate may have; empty, any. */
  allowedNames: readonly string[];
  /** `--requestheader-username-headers`: the first of them with a value names the user. */
  usernameHeaders: readonly string[];
  /** `--requestheader-uid-headers` (gate RemoteRequestHeaderUID): the first with a value is the user's uid. */
  uidHeaders: readonly string[];
  /** `--requestheader-group-headers`: every value of every one is a group. */
  groupHeaders: readonly string[];
  /** `--requestheader-extra-headers-prefix`: a header that starts with one is an extra value, its key the rest of the name. */
  extraHeaderPrefixes: readonly string[];
  clock?: Clock;
}

/** The request-header method, first in the chain (`chain.ts`). */
export interface RequestHeaderAuthenticator {
  /**
   * Whether a front-proxy CA signed this certificate and no client CA did. Where the TLS layer
   * trusts the front-proxy CA beside the client CA (so that clients offer their front-proxy
   * certificate), the x509 method asks, and leaves such a certificate alone, as upstream's x509
   * authenticator, which checks against the client CA only, refuses it.
   */
  frontProxyOnly(cert: PeerCertificate): boolean;
  authenticate(credentials: Credentials): AuthenticationResult;
}

/** What a certificate's signature and names say, worked out once per certificate object (one per connection). */
interface CertificateCheck {
  signed: boolean;
  /** Signed by a client CA of `x509ClientCa` too. */
  signedByClientCa: boolean;
  notBefore: number;
  notAfter: number;
}

export function requestHeaderAuthenticator(options: RequestHeaderOptions): RequestHeaderAuthenticator {
  const cas = parseCaBundle(options.clientCa);
  if (cas.length === 0) throw new Error('the front-proxy CA bundle holds no PEM certificate');
  let clientCas: X509Certificate[] | undefined;
  const clock = options.clock ?? systemClock;
  const allowed = new Set(options.allowedNames);
  // Node gives header names in lower case; Go matches them without regard to case.
  const lower = (names: readonly string[]) => names.map((n) => n.toLowerCase());
  const usernameHeaders = lower(options.usernameHeaders);
  const uidHeaders = lower(options.uidHeaders);
  const groupHeaders = lower(options.groupHeaders);
  const extraPrefixes = lower(options.extraHeaderPrefixes);
  const checks = new WeakMap<PeerCertificate, CertificateCheck>();

  const checkOf = (cert: PeerCertificate): CertificateCheck => {
    let check = checks.get(cert);
    if (!check) {
      check = { signed: false, signedByClientCa: false, notBefore: 0, notAfter: 0 };
      if (cert.der) {
        try {
          const leaf = new X509Certificate(cert.der);
          const signedBy = (ca: X509Certificate) => leaf.checkIssued(ca) && leaf.verify(ca.publicKey);
          check = {
            signed: cas.some(signedBy),
            signedByClientCa: (clientCas ??= options.x509ClientCa ? parseCaBundle(options.x509ClientCa()) : []).some(signedBy),
            notBefore: Date.parse(leaf.validFrom),
            notAfter: Date.parse(leaf.validTo),
          };
        } catch {
          // Unparseable: signed by nobody.
        }
      }
      checks.set(cert, check);
    }
    return check;
  };

  /** Upstream's x509 verifier in front of the header reader: why the certificate may not speak for users, or undefined. */
  const refusal = (cert: PeerCertificate): string | undefined => {
    const check = checkOf(cert);
    if (!check.signed) return 'x509: certificate signed by unknown authority';
    const now = clock.now();
    if (now < check.notBefore || now > check.notAfter) return 'x509: certificate has expired or is not yet valid';
    if (!allowsClientAuth(cert)) return 'x509: certificate specifies an incompatible key usage';
    if (allowed.size > 0 && !allowed.has(cert.commonName)) return `x509: subject with cn=${cert.commonName} is not in the allowed list`;
    return undefined;
  };

  return {
    frontProxyOnly(cert) {
      const check = checkOf(cert);
      return check.signed && !check.signedByClientCa;
    },
    authenticate(credentials) {
      const cert = credentials.certificate;
      if (!cert) return NO_OPINION;
      const reason = refusal(cert);
      if (reason) return rejected(`requestheader: ${reason}`);
      const request = credentials.headers;
      if (!request) return NO_OPINION;
      const username = firstValue(request, usernameHeaders);
      if (!username) return NO_OPINION;
      const user: UserInfo = { username, groups: allValues(request, groupHeaders) };
      const uid = firstValue(request, uidHeaders);
      if (uid) user.uid = uid;
      const extra = extraOf(request, extraPrefixes);
      if (extra) user.extra = extra;
      clearHeaders(request, [...usernameHeaders, ...uidHeaders, ...groupHeaders], extraPrefixes);
      return { outcome: 'authenticated', user };
    },
  };
}

function valuesOf(request: RequestHeaders, name: string): readonly string[] {
  if (request.headerValues) return request.headerValues(name);
  const joined = request.headers[name];
  return joined === undefined ? [] : [joined];
}

/** Go's `Header.Get` over the names in turn: the first value of the first header that has a non-empty one. */
function firstValue(request: RequestHeaders, names: readonly string[]): string {
  for (const name of names) {
    const value = valuesOf(request, name)[0];
    if (value) return value;
  }
  return '';
}

/** Every non-empty value of every one of the headers. */
function allValues(request: RequestHeaders, names: readonly string[]): string[] {
  const values: string[] = [];
  for (const name of names) for (const v of valuesOf(request, name)) if (v) values.push(v);
  return values;
}

/** The names of the headers sent that start with `prefix` (both lower-case). */
function namesWithPrefix(request: RequestHeaders, prefix: string): string[] {
  return Object.keys(request.headers).filter((name) => name.startsWith(prefix));
}

/**
 * The extra values, prefix by prefix (upstream's order within a key's values): the key is the
 * rest of the header's name in lower case, percent-decoded as a URL path segment (so a key
 * holding `/` or upper case travels as `%2F`, `%41`); a malformed escape leaves the key as sent.
 */
function extraOf(request: RequestHeaders, prefixes: readonly string[]): Record<string, string[]> | undefined {
  let extra: Record<string, string[]> | undefined;
  for (const prefix of prefixes) {
    for (const name of namesWithPrefix(request, prefix)) {
      const key = unescapeExtraKey(name.slice(prefix.length));
      extra ??= {};
      (extra[key] ??= []).push(...valuesOf(request, name));
    }
  }
  return extra;
}

export function unescapeExtraKey(encoded: string): string {
  try {
    return pathUnescape(encoded);
  } catch {
    return encoded;
  }
}

/** Upstream's ClearAuthenticationHeaders: the headers the user came from, gone from the request. */
function clearHeaders(request: RequestHeaders, names: readonly string[], prefixes: readonly string[]): void {
  if (!request.removeHeader) return;
  for (const name of names) request.removeHeader(name);
  for (const prefix of prefixes) for (const name of namesWithPrefix(request, prefix)) request.removeHeader(name);
}
