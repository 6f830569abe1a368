/**
 * The gateway's only listener: HTTPS with client certificates requested but not required
 * (anonymous requests are allowed and authorized as such), verified against the cluster CA.
 * Verification failures do not abort the handshake; the authentication step answers 401.
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { RequestListener } from 'node:http';
import { whenEndsWritten } from './express-adapter';

export interface TlsMaterial {
  /** PEM serving certificate (chain). */
  cert: string;
  /** PEM private key of the serving certificate. */
  key: string;
  /** PEM CA certificate(s) that client certificates must chain to. */
  clientCa: string;
}

export interface HttpsListenOptions {
  tls: TlsMaterial;
  host: string;
  /** 0 picks a free port. */
  port: number;
  listener: RequestListener;
  /** Ends open watches and waits (at most the given milliseconds) for the requests in flight. */
  drain?: (timeoutMs: number) => Promise<void>;
}

/** Upstream's default request timeout: no request that is not a watch should take longer. */
const DRAIN_TIMEOUT_MS = 60_000;

export interface RunningServer {
  readonly port: number;
  readonly host: string;
  /**
   * Stop accepting connections, end open watches, let the requests in flight answer (at most
   * `drainTimeoutMs`, default 60 s), then close every connection and wait until the server closed.
   */
  close(drainTimeoutMs?: number): Promise<void>;
}

export async function listenHttps(options: HttpsListenOptions): Promise<RunningServer> {
  const server = https.createServer(
    {
      cert: options.tls.cert,
      key: options.tls.key,
      ca: options.tls.clientCa,
      requestCert: true,
      rejectUnauthorized: false,
      minVersion: 'TLSv1.2',
    },
    options.listener,
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  let closing: Promise<void> | undefined;
  return {
    port: address.port,
    host: options.host,
    close(drainTimeoutMs = DRAIN_TIMEOUT_MS) {
      closing ??= (async () => {
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await options.drain?.(drainTimeoutMs);
        await whenEndsWritten();
        server.closeAllConnections();
        await closed;
      })();
      return closing;
    },
  };
}
