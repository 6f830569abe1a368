/**
 * Service-account issuer discovery, as upstream serves it (ServiceAccountIssuerDiscovery, GA
 * since 1.21): the service-account token issuer described as an OpenID Connect provider, so
 * that a relying party outside the cluster (a cloud's workload identity federation, another
 * cluster) can check the tokens TokenRequest signs without calling the API.
 *
 * - `GET /.well-known/openid-configuration`: the provider document — `issuer` (the first
 *   `--service-account-issuer`), `jwks_uri` (`--service-account-jwks-uri`, else
 *   `https://<server address>/openid/v1/jwks`), `response_types_supported` `["id_token"]`,
 *   `subject_types_supported` `["public"]`, and the keys' algorithms, sorted.
 * - `GET /openid/v1/jwks` (`application/jwk-set+json`): the public keys that verify tokens
 *   (`--service-account-key-file`), each with `use` `sig`, its `alg` and its key ID.
 *
 * Both are rendered once and answered with `Cache-Control: public, max-age=3600`. The bootstrap
 * policy lets every service account read them (`system:service-account-issuer-discovery`).
 *
 * Like upstream, the endpoints are served only when the issuer is an https URL without query or
 * fragment and the JWKS URI is https; otherwise the server says why in its log and they are not
 * found.
 */
import type { KeyObject } from 'node:crypto';
import { goJsonString } from '../codecs/go-strings';
import { algorithmOf, keyIdOf, publicHalf } from './service-account';

export const OPENID_CONFIGURATION_PATH = '/.well-known/openid-configuration';
export const JWKS_PATH = '/openid/v1/jwks';
export const JWKS_MEDIA_TYPE = 'application/jwk-set+json';
/** Upstream's: the documents change only when the keys do (a restart). */
export const DISCOVERY_CACHE_CONTROL = 'public, max-age=3600';

/** The two documents, rendered. */
export interface IssuerDiscovery {
  readonly configuration: Buffer;
  readonly keySet: Buffer;
}

export interface IssuerDiscoveryOptions {
  /** The issuer tokens are signed as (the first `--service-account-issuer`). */
  issuer: string;
  /** `--service-account-jwks-uri`. */
  jwksUri?: string;
  /** The keys that verify tokens (`--service-account-key-file`, else the signing key's public half). */
  keys: readonly KeyObject[];
}

/** Why the documents cannot be served; the message says it for the server log. */
export class IssuerDiscoveryUnavailable extends Error {}

/**
 * The discovery documents for `externalAddress` (`host:port` clients reach the server at), or
 * IssuerDiscoveryUnavailable when upstream would not serve them.
 */
export function renderIssuerDiscovery(options: IssuerDiscoveryOptions, externalAddress: string): IssuerDiscovery {
  const issuer = httpsUrl(options.issuer, 'issuer URL');
  // An empty query or fragment (`https://issuer/?`) is none, as upstream reads the parsed URL.
  if (issuer.search !== '') throw new IssuerDiscoveryUnavailable(`the issuer URL may not have a query: ${options.issuer}`);
  if (issuer.hash !== '') throw new IssuerDiscoveryUnavailable(`the issuer URL may not have a fragment: ${options.issuer}`);
  let jwksUri = options.jwksUri;
  if (jwksUri === undefined || jwksUri === '') {
    if (externalAddress === '') throw new IssuerDiscoveryUnavailable('no JWKS URI: neither --service-account-jwks-uri nor an external address is set');
    jwksUri = `https://${externalAddress}${JWKS_PATH}`;
  }
  const jwks = httpsUrl(jwksUri, 'JWKS URI');
  if (jwks.host === '') throw new IssuerDiscoveryUnavailable(`the JWKS URI has no host: ${jwksUri}`);
  if (options.keys.length === 0) throw new IssuerDiscoveryUnavailable('no keys verify service account tokens');

  let keys: string[];
  let algorithms: string[];
  try {
    keys = options.keys.map(jwkText);
    algorithms = [...new Set(options.keys.map(algorithmOf))].sort();
  } catch (err) {
    // A key of a kind upstream cannot sign service-account tokens with (Ed25519, an odd curve).
    throw new IssuerDiscoveryUnavailable(`a key cannot be described: ${(err as Error).message}`);
  }
  const configuration =
    `{"issuer":${goJsonString(options.issuer)},"jwks_uri":${goJsonString(jwksUri)},` +
    `"response_types_supported":["id_token"],"subject_types_supported":["public"],` +
    `"id_token_signing_alg_values_supported":[${algorithms.map(goJsonString).join(',')}]}`;
  return { configuration: Buffer.from(configuration, 'utf8'), keySet: Buffer.from(`{"keys":[${keys.join(',')}]}`, 'utf8') };
}

function httpsUrl(text: string, what: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new IssuerDiscoveryUnavailable(`the ${what} is not a URL: ${text}`);
  }
  if (url.protocol !== 'https:') throw new IssuerDiscoveryUnavailable(`the ${what} must use the https scheme: ${text}`);
  return url;
}

/**
 * A public key as a JWK, its members in the order upstream's JOSE library writes them: use,
 * kty, kid, crv, alg, then the key's numbers (x, y for EC; n, e for RSA).
 */
function jwkText(key: KeyObject): string {
  const publicKey = publicHalf(key);
  const jwk = publicKey.export({ format: 'jwk' });
  const members: Array<[string, string | undefined]> = [
    ['use', 'sig'],
    ['kty', jwk.kty],
    ['kid', keyIdOf(publicKey)],
    ['crv', jwk.crv],
    ['alg', algorithmOf(publicKey)],
    ['x', jwk.x],
    ['y', jwk.y],
    ['n', jwk.n],
    ['e', jwk.e],
  ];
  return `{${members
    .filter((m): m is [string, string] => m[1] !== undefined && m[1] !== '')
    .map(([name, value]) => `${goJsonString(name)}:${goJsonString(value)}`)
    .join(',')}}`;
}

/**
 * The documents for the server, rendered on first use (the address clients reach the server at
 * is known once it listens) and again only if that address changes. When they cannot be served,
 * `log` hears why, once, and the answer is undefined (the paths are then not found).
 */
export function issuerDiscoveryProvider(
  options: IssuerDiscoveryOptions,
  log: (message: string) => void,
): (externalAddress: string) => IssuerDiscovery | undefined {
  let last: { address: string; rendered: IssuerDiscovery | undefined } | undefined;
  return (externalAddress) => {
    if (last?.address === externalAddress) return last.rendered;
    let rendered: IssuerDiscovery | undefined;
    try {
      rendered = renderIssuerDiscovery(options, externalAddress);
    } catch (err) {
      if (!(err instanceof IssuerDiscoveryUnavailable)) throw err;
      log(`service account issuer discovery is off (${OPENID_CONFIGURATION_PATH} and ${JWKS_PATH} are not served): ${err.message}`);
    }
    last = { address: externalAddress, rendered };
    return rendered;
  };
}
