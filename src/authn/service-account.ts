/**
 * Service-account tokens, as upstream issues and checks them: TokenRequest
 * (`serviceaccounts/<name>/token`, what `kubectl create token` calls) signs a JWT for the
 * account — `iss` the first `--service-account-issuer`, `aud` the requested audiences (default
 * `--api-audiences`), `sub` `system:serviceaccount:<ns>:<name>`, a lifetime of
 * `expirationSeconds` (default 1 hour, at least 10 minutes), the account's (and the bound
 * Pod's or Secret's) name and uid under the private claim of the naming profile's key domain.
 * The authenticator checks the signature against `--service-account-key-file` keys, the issuer,
 * the audience and the times, and with `--service-account-lookup` (the default) that the account
 * and the bound object still exist with the same uid, so deleting either revokes the token.
 */
import { randomUUID, type KeyObject, createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import { jose } from '../util/jose';
import type { ApiObject, CreateHandler } from '../core';
import type { Naming } from '../naming';
import { type Clock, rfc3339 } from '../clock';
import { badRequest, invalid } from '../status';
import { type AuthenticationResult, NO_OPINION, type TokenAuthenticator, claimedIssuer, rejected } from './types';

export const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';
const DEFAULT_EXPIRATION_SECONDS = 3600;
const MIN_EXPIRATION_SECONDS = 600;
const MAX_EXPIRATION_SECONDS = 2 ** 32;

/** How the issuer and the authenticator read objects (the watch cache); undefined when absent. */
export type ObjectReader = (resource: 'serviceaccounts' | 'pods' | 'secrets', namespace: string, name: string) => Promise<ApiObject | undefined>;

export interface ServiceAccountTokenOptions {
  naming: Naming;
  clock: Clock;
  /** `--service-account-issuer`: tokens of any are accepted; the first issues. */
  issuers: readonly string[];
  /** `--api-audiences`: a token must be for one of them; TokenRequest's default audiences. */
  apiAudiences: readonly string[];
  /** `--service-account-key-file` keys (public, or private ones used for their public half). */
  verifyingKeys: readonly KeyObject[];
  /** `--service-account-signing-key-file`; without it TokenRequest is not served. */
  signingKey?: KeyObject;
  /** `--service-account-lookup`: the account and the bound object must still exist. */
  lookup: boolean;
  objects: ObjectReader;
}

/** The keys of a PEM file: private keys give their public half for verification. */
export function keysOfPem(pem: string): { publicKeys: KeyObject[]; privateKey?: KeyObject } {
  const blocks = pem.match(/-----BEGIN [A-Z ]+-----[\s\S]+?-----END [A-Z ]+-----/g) ?? [];
  const publicKeys: KeyObject[] = [];
  let privateKey: KeyObject | undefined;
  for (const block of blocks) {
    if (/PRIVATE KEY/.test(block)) {
      const key = createPrivateKey(block);
      privateKey ??= key;
      publicKeys.push(createPublicKey(key));
    } else {
      publicKeys.push(createPublicKey(block));
    }
  }
  if (publicKeys.length === 0) throw new Error('no PEM keys found');
  return { publicKeys, ...(privateKey ? { privateKey } : {}) };
}

/** The JWS algorithm of a key, as upstream picks it: RS256 for RSA, ES256/384/512 by curve. */
export function algorithmOf(key: KeyObject): string {
  if (key.asymmetricKeyType === 'rsa') return 'RS256';
  const curve = key.asymmetricKeyDetails?.namedCurve;
  if (curve === 'prime256v1') return 'ES256';
  if (curve === 'secp384r1') return 'ES384';
  if (curve === 'secp521r1') return 'ES512';
  throw new Error(`unsupported service account key type ${key.asymmetricKeyType ?? '?'} ${curve ?? ''}`);
}

/**
 * A key's ID as upstream derives it for the tokens' `kid` header and the key set: the SHA-256 of
 * its DER-encoded SubjectPublicKeyInfo, base64url without padding. One-way, so that nobody takes
 * the ID for the key.
 */
export function keyIdOf(key: KeyObject): string {
  return createHash('sha256')
    .update(publicHalf(key).export({ type: 'spki', format: 'der' }))
    .digest('base64url');
}

/** A key's public half (itself when public). */
export function publicHalf(key: KeyObject): KeyObject {
  return key.type === 'private' ? createPublicKey(key) : key;
}

interface PrivateClaims {
  namespace?: string;
  serviceaccount?: { name?: string; uid?: string };
  pod?: { name?: string; uid?: string };
  secret?: { name?: string; uid?: string };
}

function stringList(value: unknown): string[] | undefined {
  return Array.isArray(value) && value.every((v) => typeof v === 'string') ? (value as string[]) : undefined;
}

/** TokenRequest: a token for the service account `parent`. */
export function tokenRequestHandler(options: ServiceAccountTokenOptions): CreateHandler {
  const signingKey = options.signingKey;
  if (!signingKey) throw new Error('TokenRequest needs a signing key');
  const alg = algorithmOf(signingKey);
  // Upstream names the signing key in every token, so that a relying party picks it from the
  // issuer's key set (service-account-discovery.ts).
  const kid = keyIdOf(signingKey);
  const claimKey = options.naming.keyDomain;
  return {
    async create(body, _writeOptions, _ctx, parent) {
      const sa = parent!;
      const namespace = sa.metadata?.namespace ?? '';
      const name = sa.metadata?.name ?? '';
      const spec = (typeof body.spec === 'object' && body.spec !== null ? body.spec : {}) as Record<string, unknown>;
      const seconds = spec.expirationSeconds === undefined || spec.expirationSeconds === null ? DEFAULT_EXPIRATION_SECONDS : spec.expirationSeconds;
      if (typeof seconds !== 'number' || !Number.isInteger(seconds)) throw badRequest('spec.expirationSeconds: must be an integer');
      const gk = { group: options.naming.groups.authentication, kind: 'TokenRequest' };
      if (seconds < MIN_EXPIRATION_SECONDS) {
        throw invalid(gk, name, [
          {
            field: 'spec.expirationSeconds',
            causeReason: 'FieldValueInvalid',
            causeMessage: `Invalid value: ${seconds}: may not specify a duration less than 10 minutes`,
            message: `spec.expirationSeconds: Invalid value: ${seconds}: may not specify a duration less than 10 minutes`,
          },
        ]);
      }
      if (seconds > MAX_EXPIRATION_SECONDS) {
        throw invalid(gk, name, [
          {
            field: 'spec.expirationSeconds',
            causeReason: 'FieldValueInvalid',
            causeMessage: `Invalid value: ${seconds}: may not specify a duration larger than 2^32 seconds`,
            message: `spec.expirationSeconds: Invalid value: ${seconds}: may not specify a duration larger than 2^32 seconds`,
          },
        ]);
      }
      const audiences = stringList(spec.audiences)?.length ? stringList(spec.audiences)! : [...options.apiAudiences];
      const claims: PrivateClaims = { namespace, serviceaccount: { name, uid: sa.metadata?.uid ?? '' } };
      const bound = spec.boundObjectRef as { kind?: unknown; name?: unknown; uid?: unknown } | undefined | null;
      if (bound) {
        const kind = bound.kind;
        if (kind !== 'Pod' && kind !== 'Secret') throw badRequest(`cannot bind token for object of kind ${String(kind)}`);
        const resource = kind === 'Pod' ? 'pods' : 'secrets';
        const target = await options.objects(resource, namespace, String(bound.name ?? ''));
        if (!target) throw badRequest(`${resource} "${String(bound.name ?? '')}" not found`);
        if (bound.uid && bound.uid !== target.metadata?.uid) {
          throw badRequest(
            `the UID in the bound object reference (${String(bound.uid)}) does not match the UID in record. The object might have been deleted and then recreated`,
          );
        }
        claims[kind === 'Pod' ? 'pod' : 'secret'] = { name: target.metadata?.name ?? '', uid: target.metadata?.uid ?? '' };
      }
      const now = Math.floor(options.clock.now() / 1000);
      const token = await new (jose().SignJWT)({ [claimKey]: claims })
        .setProtectedHeader({ alg, kid })
        .setIssuer(options.issuers[0]!)
        .setAudience(audiences)
        .setSubject(`${SERVICE_ACCOUNT_PREFIX}${namespace}:${name}`)
        .setIssuedAt(now)
        .setNotBefore(now)
        .setExpirationTime(now + seconds)
        .setJti(randomUUID())
        .sign(signingKey);
      return {
        ...body,
        metadata: { name, namespace, creationTimestamp: rfc3339(options.clock.now()) },
        spec: { ...spec, audiences, expirationSeconds: seconds, boundObjectRef: bound ?? null },
        status: { token, expirationTimestamp: rfc3339((now + seconds) * 1000) },
      };
    },
  };
}

/** The authenticator of service-account tokens. */
/** Verified signatures are remembered (by token hash) while the token is valid; the lookup still runs every time. */
const MAX_VERIFIED = 10_000;

export function serviceAccountAuthenticator(options: ServiceAccountTokenOptions): TokenAuthenticator {
  const issuers = new Set(options.issuers);
  const verified = new Map<string, { payload: Record<string, unknown>; expiresMs: number }>();
  const claimKey = options.naming.keyDomain;
  const extraKey = (name: string) => options.naming.key(name, 'authentication');
  return {
    name: 'service-account',
    async authenticateToken(token: string): Promise<AuthenticationResult> {
      // Only JWTs from our issuers are ours; anything else is another method's.
      const iss = claimedIssuer(token);
      if (iss === undefined || !issuers.has(iss)) return NO_OPINION;
      const hash = createHash('sha256').update(token).digest('base64');
      const remembered = verified.get(hash);
      let payload: Record<string, unknown> | undefined = remembered && remembered.expiresMs > options.clock.now() ? remembered.payload : undefined;
      let failure = 'invalid signature';
      for (const key of payload ? [] : options.verifyingKeys) {
        try {
          payload = (
            await jose().jwtVerify(token, key, {
              issuer: [...issuers],
              audience: [...options.apiAudiences],
              currentDate: new Date(options.clock.now()),
            })
          ).payload as Record<string, unknown>;
          break;
        } catch (err) {
          const code = (err as { code?: string }).code;
          if (code !== 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED' && code !== 'ERR_JOSE_NOT_SUPPORTED' && code !== 'ERR_JWS_INVALID') {
            return rejected(`service account token: ${(err as Error).message}`);
          }
          failure = (err as Error).message;
        }
      }
      if (!payload) return rejected(`service account token: ${failure}`);
      if (!remembered && typeof payload.exp === 'number') {
        if (verified.size >= MAX_VERIFIED) verified.delete(verified.keys().next().value!);
        verified.set(hash, { payload, expiresMs: payload.exp * 1000 });
      }
      const claims = (payload[claimKey] ?? {}) as PrivateClaims;
      const sub = typeof payload.sub === 'string' ? payload.sub : '';
      const namespace = claims.namespace ?? '';
      const name = claims.serviceaccount?.name ?? '';
      if (!namespace || !name || sub !== `${SERVICE_ACCOUNT_PREFIX}${namespace}:${name}`) return rejected('service account token: malformed claims');
      const uid = claims.serviceaccount?.uid ?? '';
      if (options.lookup) {
        const sa = await options.objects('serviceaccounts', namespace, name);
        if (!sa || sa.metadata?.deletionTimestamp) return rejected(`service account token: serviceaccount ${namespace}/${name} has been deleted`);
        if (sa.metadata?.uid !== uid) return rejected(`service account token: serviceaccount ${namespace}/${name} uid does not match the token's`);
        for (const [resource, ref] of [
          ['pods', claims.pod],
          ['secrets', claims.secret],
        ] as const) {
          if (!ref) continue;
          const bound = await options.objects(resource, namespace, ref.name ?? '');
          if (!bound || bound.metadata?.deletionTimestamp || bound.metadata?.uid !== ref.uid) {
            return rejected(`service account token: bound ${resource} ${namespace}/${ref.name ?? ''} has been deleted`);
          }
        }
      }
      const extra: Record<string, string[]> = {};
      if (claims.pod) {
        extra[extraKey('pod-name')] = [claims.pod.name ?? ''];
        extra[extraKey('pod-uid')] = [claims.pod.uid ?? ''];
      }
      if (typeof payload.jti === 'string') extra[extraKey('credential-id')] = [`JTI=${payload.jti}`];
      return {
        outcome: 'authenticated',
        user: {
          username: sub,
          uid,
          groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
          ...(Object.keys(extra).length ? { extra } : {}),
        },
        audiences: stringList(payload.aud) ?? (typeof payload.aud === 'string' ? [payload.aud] : []),
      };
    },
  };
}
