/**
 * Bootstrap tokens (`--enable-bootstrap-token-auth`), as upstream's bootstrap token
 * authenticator: a token `<id>.<secret>` (`[a-z0-9]{6}.[a-z0-9]{16}`) names the Secret
 * `bootstrap-token-<id>` in the system namespace, of type `bootstrap.<vendor>/token`, read from
 * the watch cache. It authenticates as `system:bootstrap:<id>` in `system:bootstrappers` plus the
 * secret's `auth-extra-groups` — while the secret is not being deleted, its `token-id` and
 * `token-secret` match, it has not expired and `usage-bootstrap-authentication` is `true`.
 * Anything else is no opinion, as upstream answers (the request then fails as unauthenticated).
 */
import { timingSafeEqual } from 'node:crypto';
import type { ApiObject } from '../core';
import type { Clock } from '../clock';
import { type AuthenticationResult, NO_OPINION, type TokenAuthenticator } from './types';

const TOKEN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const EXTRA_GROUP = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;
export const BOOTSTRAP_USER_PREFIX = 'system:bootstrap:';
export const BOOTSTRAP_GROUP = 'system:bootstrappers';

/** How the authenticator reads a Secret (the watch cache); undefined when it does not exist. */
export type SecretReader = (namespace: string, name: string) => Promise<ApiObject | undefined>;

export interface BootstrapTokenOptions {
  secrets: SecretReader;
  /** The system namespace (`kube-system` under the kubernetes profile). */
  namespace: string;
  /** The Secret type of bootstrap tokens under the naming profile. */
  secretType: string;
  clock: Clock;
}

/** A Secret's `data` value, decoded from base64 as text. */
export function secretData(secret: ApiObject, key: string): string | undefined {
  const data = secret.data;
  if (typeof data !== 'object' || data === null) return undefined;
  const value = (data as Record<string, unknown>)[key];
  return typeof value === 'string' ? Buffer.from(value, 'base64').toString('utf8') : undefined;
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The extra groups of a token secret, or undefined when one of them is not a bootstrappers group. */
function extraGroups(secret: ApiObject): string[] | undefined {
  const raw = secretData(secret, 'auth-extra-groups');
  if (!raw) return [];
  const groups = raw
    .split(',')
    .map((g) => g.trim())
    .filter((g) => g !== '');
  return groups.every((g) => EXTRA_GROUP.test(g)) ? groups : undefined;
}

export function bootstrapTokenAuthenticator(options: BootstrapTokenOptions): TokenAuthenticator {
  return {
    name: 'bootstrap-token',
    async authenticateToken(token: string): Promise<AuthenticationResult> {
      const match = TOKEN.exec(token);
      if (!match) return NO_OPINION;
      const [, id, tokenSecret] = match as unknown as [string, string, string];
      const secret = await options.secrets(options.namespace, `bootstrap-token-${id}`);
      if (!secret || secret.metadata?.deletionTimestamp || secret.type !== options.secretType) return NO_OPINION;
      const storedSecret = secretData(secret, 'token-secret');
      if (storedSecret === undefined || !sameSecret(storedSecret, tokenSecret)) return NO_OPINION;
      if (secretData(secret, 'token-id') !== id) return NO_OPINION;
      const expiration = secretData(secret, 'expiration');
      if (expiration !== undefined) {
        const at = Date.parse(expiration);
        if (Number.isNaN(at) || at <= options.clock.now()) return NO_OPINION;
      }
      if (secretData(secret, 'usage-bootstrap-authentication') !== 'true') return NO_OPINION;
      const extra = extraGroups(secret);
      if (!extra) return NO_OPINION;
      return { outcome: 'authenticated', user: { username: `${BOOTSTRAP_USER_PREFIX}${id}`, groups: [BOOTSTRAP_GROUP, ...extra] } };
    },
  };
}
