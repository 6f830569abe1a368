/**
 * The HTTPS call to one webhook: the URL (a `url` client config, or a Service's resolved
 * address), the CA bundle, the client credentials configured for that host, and the timeout,
 * which client-go also sends as `?timeout=` so the webhook may honour it. Failures are worded as
 * client-go's (`Post "<url>": context deadline exceeded`), for upstream's
 * `failed calling webhook` messages.
 */
import https from 'node:https';
import tls from 'node:tls';
import type { Clock } from '../../../clock';
import type { WebhookClientConfig, WebhookCredentialResolver } from './types';

/** The webhook answered, with an HTTP status other than 2xx (`code`, which its metrics report). */
export class WebhookAnswerError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

export interface WebhookCall {
  config: WebhookClientConfig;
  body: string;
  timeoutMs: number;
  /** The time the timeout runs on (the core's clock). */
  clock: Clock;
  credentials?: WebhookCredentialResolver;
  /**
   * Where a Service reference leads (core/services/resolver.ts); required for `service` configs.
   * Asked when connecting, as upstream's dialer asks its resolver: a failure reads as the POST's.
   */
  resolveService?: (service: { namespace: string; name: string; port: number }) => Promise<{ host: string; port: number }>;
  signal?: AbortSignal;
}

/**
 * Connections are kept alive between calls, as client-go's transport keeps them: a TLS
 * handshake per write would cost more than the rest of the write. Node's agent pools
 * connections per CA, client certificate and server name, so webhooks never share one wrongly.
 */
const agent = new https.Agent({ keepAlive: true, keepAliveMsecs: 30_000, maxFreeSockets: 64 });

/** Go's duration form of whole seconds, as client-go writes `?timeout=`. */
function goSeconds(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  return `${m}m${s % 60}s`;
}

interface Target {
  /** The URL as the call names it: a Service's by its DNS name, `https://<name>.<namespace>.svc:<port><path>`. */
  url: URL;
  /** For a Service: the name its certificate must carry, and how to find where to connect. */
  service?: { serverName: string; port: number; resolve: () => Promise<{ host: string; port: number }> };
}

function target(call: WebhookCall): Target {
  const { config } = call;
  if (config.url) return { url: new URL(config.url) };
  const svc = config.service;
  if (!svc || !call.resolveService) throw new Error('webhook has no url and its service cannot be resolved');
  const resolveService = call.resolveService;
  const namespace = svc.namespace ?? '';
  const name = svc.name ?? '';
  const port = svc.port ?? 443;
  const serverName = `${name}.${namespace}.svc`;
  const path = svc.path ?? '/';
  return {
    url: new URL(`https://${serverName}:${port}${path.startsWith('/') ? path : `/${path}`}`),
    service: { serverName, port, resolve: () => resolveService({ namespace, name, port }) },
  };
}

/** POST the review; resolves the decoded JSON answer, rejects with client-go's wording. */
export async function callWebhook(call: WebhookCall): Promise<unknown> {
  const { url, service } = target(call);
  url.searchParams.set('timeout', goSeconds(call.timeoutMs));
  // Go prints a Service's port even when it is 443.
  const shown = `${service ? `https://${service.serverName}:${service.port}` : url.origin}${url.pathname}${url.search}`;
  let connect: { host: string; port: number } | undefined;
  if (service) {
    try {
      connect = await service.resolve();
    } catch (err) {
      const detail = err instanceof Error ? err.message : String(err);
      throw new Error(`Post "${shown}": ${detail}`);
    }
  }
  const serverName = service?.serverName;
  const ca = call.config.caBundle ? Buffer.from(call.config.caBundle, 'base64').toString('utf8') : undefined;
  const creds = call.credentials?.(url.host, url.hostname);
  const headers: Record<string, string | number> = {
    'Content-Type': 'application/json',
    Accept: 'application/json, */*',
    'User-Agent': 'kube-apiserver-admission',
    'Content-Length': Buffer.byteLength(call.body),
  };
  if (creds?.token) headers.Authorization = `Bearer ${creds.token}`;
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (message: string) => {
      if (settled) return;
      settled = true;
      cancelTimer();
      req.destroy();
      reject(new Error(`Post "${shown}": ${message}`));
    };
    // A Service's address is dialled; the request still names the Service's host (Go's Host header).
    const req = https.request(url, {
      method: 'POST',
      headers: connect ? { ...headers, Host: url.host } : headers,
      ...(connect ? { hostname: connect.host, host: connect.host, port: connect.port } : {}),
      ...(ca ? { ca } : {}),
      ...(creds?.cert ? { cert: creds.cert, key: creds.key } : {}),
      ...(serverName ? { servername: serverName } : {}),
      ...(serverName ? { checkServerIdentity: (_host: string, cert: tls.PeerCertificate) => tls.checkServerIdentity(serverName, cert) } : {}),
      agent,
    });
    const cancelTimer = call.clock.setTimeout(() => fail('context deadline exceeded'), call.timeoutMs);
    call.signal?.addEventListener('abort', () => fail('context canceled'), { once: true });
    req.on('error', (err) => fail(err.message));
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('error', (err) => fail(err.message));
      res.on('end', () => {
        if (settled) return;
        const text = Buffer.concat(chunks).toString('utf8');
        const code = res.statusCode ?? 0;
        if (code < 200 || code > 299) {
          settled = true;
          cancelTimer();
          let message = text.trim();
          try {
            const status = JSON.parse(text) as { kind?: string; message?: string };
            if (status.kind === 'Status' && status.message) message = status.message;
          } catch {
            // not JSON: the body itself is the detail.
          }
          reject(
            new WebhookAnswerError(
              code,
              message
                ? `an error on the server ("${message.slice(0, 1024)}") has prevented the request from succeeding`
                : `the server responded with the status code ${code} but did not return more information`,
            ),
          );
          return;
        }
        settled = true;
        cancelTimer();
        try {
          resolve(JSON.parse(text));
        } catch (err) {
          reject(new Error(`Post "${shown}": ${(err as Error).message}`));
        }
      });
    });
    req.end(call.body);
  });
}
