/**
 * How the aggregator reaches an extension API server: the APIService's Service resolved to a
 * host and port, TLS verified against its `caBundle` for the name `<service>.<namespace>.svc`
 * (or not verified at all with `insecureSkipTLSVerify`), presenting the proxy client
 * certificate (`--proxy-client-cert-file`/`--proxy-client-key-file`), as upstream's
 * BuildTransportConfig does.
 */
import type * as https from 'node:https';
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
