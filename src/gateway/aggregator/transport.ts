/**
 * How the aggregator reaches an extension API server: the APIService's Service resolved to a
 * host and port, TLS verified against its `caBundle` for the name `<service>.<namespace>.svc`
 * (or not verified at all with `insecureSkipTLSVerify`), presenting the proxy client
 * certificate (`--proxy-client-cert-file`/`--proxy-client-key-file`), as upstream's
 * BuildTransportConfig does.
 */
import * as https from 'node:https';
import type { Clock } from '../../clock';
import type { APIService } from '../../core';
import { DEFAULT_SERVICE_PORT } from '../../core';

/** Where a Service reference leads (the service resolver's answer). */
export interface ResolvedService {
  host: string;
  port: number;
  /** The name the serving certificate must hold: `<service>.<namespace>.svc`. */
  serverName: string;
}

/** Turns a Service reference into an address; rejects with the reason when it cannot (no such Service, no port). */
export interface ServiceResolver {
  resolve(ref: { namespace: string; name: string; port: number }): Promise<ResolvedService>;
}

/** The certificate and key the aggregator presents to extension servers (PEM). */
export interface ProxyClientCertificate {
  cert: string | Buffer;
  key: string | Buffer;
}

/** The TLS options for one APIService (upstream's transport config from its spec). */
export function tlsOptionsFor(apiService: APIService, resolved: ResolvedService, client: ProxyClientCertificate | undefined): https.RequestOptions {
  const spec = apiService.spec ?? {};
  const options: https.RequestOptions = {
    host: resolved.host,
    port: resolved.port,
    servername: resolved.serverName,
    rejectUnauthorized: !spec.insecureSkipTLSVerify,
  };
  if (spec.caBundle) options.ca = Buffer.from(spec.caBundle, 'base64').toString('latin1');
  if (client) {
    options.cert = client.cert;
    options.key = client.key;
  }
  return options;
}

/** The Service reference of a remote APIService, its port defaulted. */
export function serviceRef(apiService: APIService): { namespace: string; name: string; port: number } {
  const service = apiService.spec?.service ?? {};
  return { namespace: service.namespace ?? '', name: service.name ?? '', port: service.port ?? DEFAULT_SERVICE_PORT };
}

/** Go's url.PathEscape: everything but unreserved characters and `$&+:=@` percent-encoded (upper-case hex). */
export function goPathEscape(value: string): string {
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    const c = String.fromCharCode(byte);
    if (/[A-Za-z0-9\-_.~$&+:=@]/.test(c)) out += c;
    else out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Headers naming the end user to the extension server (client-go's SetAuthProxyHeaders). */
export function authProxyHeaders(user: {
  username: string;
  groups?: readonly string[];
  extra?: Readonly<Record<string, readonly string[]>>;
}): [string, string][] {
  const headers: [string, string][] = [['X-Remote-User', user.username]];
  for (const group of user.groups ?? []) headers.push(['X-Remote-Group', group]);
  for (const [key, values] of Object.entries(user.extra ?? {})) {
    for (const value of values) headers.push([`X-Remote-Extra-${goPathEscape(key)}`, value]);
  }
  return headers;
}

/** What an extension server answered to one of the aggregator's own GETs. */
export interface FetchedDocument {
  status: number;
  contentType: string;
  body: Buffer;
}

/** Past this, a document fetched for discovery or OpenAPI is refused (it is held whole). */
export const FETCHED_DOCUMENT_LIMIT_BYTES = 32 * 1024 * 1024;

/**
 * One GET the aggregator makes for itself through an APIService's transport (upstream's
 * discovery manager and OpenAPI downloader call the proxy handler with their own user): TLS as
 * the proxy verifies it, the proxy client certificate, `user` in the identity headers, the
 * whole answer read (up to FETCHED_DOCUMENT_LIMIT_BYTES). Rejects when it cannot be reached or
 * does not answer within `timeoutMs` of the clock.
 */
export async function fetchFromAPIService(options: {
  apiService: APIService;
  resolver: ServiceResolver;
  proxyClient?: () => ProxyClientCertificate | undefined;
  clock: Clock;
  path: string;
  accept: string;
  user: { username: string; groups?: readonly string[] };
  timeoutMs: number;
}): Promise<FetchedDocument> {
  const resolved = await options.resolver.resolve(serviceRef(options.apiService));
  const headers: Record<string, string | string[]> = { Accept: options.accept };
  for (const [name, value] of authProxyHeaders(options.user)) {
    const had = headers[name];
    headers[name] = had === undefined ? value : ([] as string[]).concat(had, value);
  }
  return new Promise<FetchedDocument>((resolve, reject) => {
    const req = https.request(
      { ...tlsOptionsFor(options.apiService, resolved, options.proxyClient?.()), method: 'GET', path: options.path, headers, agent: false },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > FETCHED_DOCUMENT_LIMIT_BYTES) req.destroy(new Error(`the answer to ${options.path} is larger than ${FETCHED_DOCUMENT_LIMIT_BYTES} bytes`));
          else chunks.push(chunk);
        });
        res.on('end', () => {
          cancel();
          resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks) });
        });
        res.on('error', (err) => {
          cancel();
          reject(err);
        });
      },
    );
    const cancel = options.clock.setTimeout(() => req.destroy(new Error(`no answer to ${options.path} within ${options.timeoutMs} ms`)), options.timeoutMs);
    req.on('error', (err) => {
      cancel();
      reject(err);
    });
    req.end();
  });
}
