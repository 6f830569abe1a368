/**
 * OpenID Connect ID tokens (`--oidc-*`), as upstream's OIDC authenticator: the provider's
 * discovery document (`<issuer>/.well-known/openid-configuration`, https only, trusting
 * `--oidc-ca-file`) must name the same issuer; its JWKS is fetched in the background and
 * refreshed (periodically, and when a token names a key it does not know); each token is
 * checked locally — signature with an allowed algorithm, issuer, audience (the client id),
 * expiry, required claims — with no call to the provider per request. The username comes from
 * `--oidc-username-claim` (default `sub`; claims other than `email` are prefixed with
 * `<issuer>#` unless `--oidc-username-prefix` says otherwise, `-` for none; an `email` whose
 * `email_verified` is false is refused), groups from `--oidc-groups-claim` with its prefix.
 */
import https from 'node:https';
import type * as Jose from 'jose';
import { jose } from '../util/jose';
import type { Clock } from '../clock';
import { type AuthenticationResult, NO_OPINION, type TokenAuthenticator, claimedIssuer, rejected } from './types';

export interface OidcOptions {
  issuerUrl: string;
  /** The audience tokens must be for (`--oidc-client-id`); with `audiences`, any one of those. */
  clientId: string;
  audiences?: readonly string[];
  /** Where the discovery document is, when not under the issuer URL (structured configuration). */
  discoveryUrl?: string;
  /**
   * Turn verified claims into a user (structured configuration's CEL mappings); default the
   * `--oidc-*` claim and prefix rules.
   */
  mapClaims?: (claims: Record<string, unknown>) => AuthenticationResult;
  usernameClaim: string;
  /** undefined: upstream's default (the issuer and `#` for claims other than `email`); `-`: none. */
  usernamePrefix?: string;
  groupsClaim?: string;
  groupsPrefix?: string;
  requiredClaims: Readonly<Record<string, string>>;
  /** PEM CA bundle for the provider's TLS; default the system roots. */
  ca?: string;
  signingAlgs: readonly string[];
  clock: Clock;
  /** How often the keys are fetched again. */
  refreshMs?: number;
  log?: (message: string) => void;
}

export interface OidcAuthenticator extends TokenAuthenticator {
  /** Resolves once the keys were loaded the first time. */
  ready(): Promise<void>;
  close(): void;
}

function getJson(url: string, ca: string | undefined): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ...(ca ? { ca } : {}), timeout: 10_000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        if (res.statusCode !== 200) return reject(new Error(`${url}: HTTP ${res.statusCode}`));
        try {
          resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
        } catch (err) {
          reject(err);
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error(`${url}: timed out`)));
    req.on('error', reject);
  });
}

const DEFAULT_REFRESH_MS = 10 * 60_000;
/** A token naming an unknown key may trigger a refetch at most this often. */
const UNKNOWN_KEY_COOLDOWN_MS = 30_000;

export function oidcAuthenticator(options: OidcOptions): OidcAuthenticator {
  if (!options.issuerUrl.startsWith('https://')) throw new Error('--oidc-issuer-url must be an https URL');
  let keys: ReturnType<typeof Jose.createLocalJWKSet> | undefined;
  let keyIds = new Set<string>();
  let lastFetch = -Infinity;
  let stopped = false;
  let cancelTimer: (() => void) | undefined;
  const log = options.log ?? (() => {});

  async function load(): Promise<void> {
    lastFetch = options.clock.now();
    const discoveryUrl = options.discoveryUrl ?? `${options.issuerUrl.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const discovery = (await getJson(discoveryUrl, options.ca)) as { issuer?: unknown; jwks_uri?: unknown };
    if (discovery.issuer !== options.issuerUrl)
      throw new Error(`oidc: issuer did not match the issuer returned by provider, expected "${options.issuerUrl}" got "${String(discovery.issuer)}"`);
    if (typeof discovery.jwks_uri !== 'string' || !discovery.jwks_uri.startsWith('https://'))
      throw new Error('oidc: the discovery document has no https jwks_uri');
    const jwks = (await getJson(discovery.jwks_uri, options.ca)) as Jose.JSONWebKeySet;
    keys = jose().createLocalJWKSet(jwks);
    keyIds = new Set((jwks.keys ?? []).map((k) => k.kid ?? ''));
  }

  const schedule = () => {
    if (stopped) return;
    cancelTimer = options.clock.setTimeout(() => {
      load()
        .catch((err: unknown) => log(`oidc: refreshing keys failed: ${(err as Error).message}`))
        .finally(schedule);
    }, options.refreshMs ?? DEFAULT_REFRESH_MS);
  };
  const first = load().catch((err: unknown) => {
    log(`oidc: loading keys failed: ${(err as Error).message}`);
  });
  void first.then(schedule);

  const prefixed = (claim: string, value: string): string => {
    if (options.usernamePrefix === '-') return value;
    if (options.usernamePrefix !== undefined) return options.usernamePrefix + value;
    return claim === 'email' ? value : `${options.issuerUrl}#${value}`;
  };

  return {
    name: 'oidc',
    ready: () => first,
    close() {
      stopped = true;
      cancelTimer?.();
    },
    async authenticateToken(token: string): Promise<AuthenticationResult> {
      if (claimedIssuer(token) !== options.issuerUrl) return NO_OPINION;
      if (!keys) return rejected('oidc: authenticator not initialized');
      try {
        const kid = jose().decodeProtectedHeader(token).kid;
        if (kid && !keyIds.has(kid) && options.clock.now() - lastFetch > UNKNOWN_KEY_COOLDOWN_MS) await load().catch(() => undefined);
      } catch {
        return rejected('oidc: malformed token header');
      }
      let claims: Record<string, unknown>;
      try {
        claims = (
          await jose().jwtVerify(token, keys, {
            issuer: options.issuerUrl,
            audience: options.audiences ? [...options.audiences] : options.clientId,
            algorithms: [...options.signingAlgs],
            currentDate: new Date(options.clock.now()),
          })
        ).payload as Record<string, unknown>;
      } catch (err) {
        return rejected(`oidc: verify token: ${(err as Error).message}`);
      }
      if (options.mapClaims) return options.mapClaims(claims);
      for (const [claim, value] of Object.entries(options.requiredClaims)) {
        if (claims[claim] !== value)
          return rejected(`oidc: required claim ${claim} has value ${JSON.stringify(claims[claim])}, expected ${JSON.stringify(value)}`);
      }
      const username = claims[options.usernameClaim];
      if (typeof username !== 'string' || username === '') return rejected(`oidc: parse username claims "${options.usernameClaim}": claim not present`);
      if (options.usernameClaim === 'email' && claims.email_verified !== undefined && claims.email_verified !== true) {
        return rejected('oidc: email not verified');
      }
      let groups: string[] = [];
      if (options.groupsClaim && claims[options.groupsClaim] !== undefined) {
        const raw = claims[options.groupsClaim];
        if (typeof raw === 'string') groups = [raw];
        else if (Array.isArray(raw) && raw.every((g) => typeof g === 'string')) groups = raw as string[];
        else return rejected(`oidc: parse groups claim "${options.groupsClaim}": not a string or a list of strings`);
        groups = groups.map((g) => (options.groupsPrefix ?? '') + g);
      }
      return { outcome: 'authenticated', user: { username: prefixed(options.usernameClaim, username), groups } };
    },
  };
}
