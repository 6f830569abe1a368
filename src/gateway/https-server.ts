/**
 * The gateway's only listener: HTTPS with client certificates requested but not required
 * (anonymous requests are allowed and authorized as such), verified against the cluster CA.
 * Verification failures do not abort the handshake; the authentication step answers 401.
 *
 * Requests start in batches: those that arrive in one turn of the event loop are handed to the
 * listener together when the turn's I/O is done (`startTogether`).
 */
import { atTurnEnd } from '../util/bulk-writes';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { IncomingMessage, RequestListener } from 'node:http';
import type { Duplex } from 'node:stream';

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
  /**
   * Requests that ask to switch protocols (`Connection: Upgrade`), with their connection and the
   * bytes read past their head (node's `upgrade` event). Absent: node serves them as any request.
   */
  upgrade?: (req: IncomingMessage, socket: Duplex, head: Buffer) => void;
  /** Ends open watches and waits (at most the given milliseconds) for the requests in flight. */
  drain?: (timeoutMs: number) => Promise<void>;
  /** Resolves once the responses the listener ended have been written (its ResponseEnds). */
  whenEndsWritten?: () => Promise<void>;
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
    startTogether(options.listener),
  );
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  // Upgraded connections are no longer the HTTP server's: closing it does not close them, and
  // it waits for them. Kept here to be closed last.
  const upgraded = new Set<Duplex>();
  const upgrade = options.upgrade;
  if (upgrade) {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      upgraded.add(socket);
      socket.once('close', () => upgraded.delete(socket));
      upgrade(req, socket, head);
    });
  }
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
        await options.whenEndsWritten?.();
        server.closeAllConnections();
        for (const socket of upgraded) socket.destroy();
        await closed;
      })();
      return closing;
    },
  };
}

/**
 * `listener`, called for the requests that arrive in one turn of the event loop one after the
 * other when the turn's I/O callbacks are done, instead of each as its socket is read.
 *
 * Why: node would run each request's pipeline up to its first wait (the body, the store) before
 * reading the next socket, so every request runs all of the server's code once, and little of it
 * is still in the processor's caches when the next one does. Started together, the requests
 * advance step by step (each `await` lets the others take the same step), and each step's code
 * runs for all of them back to back. Measured on creates from 64 clients: 1.18× the creates per
 * second on etcd and 1.30× on the embedded store, with ~19% less CPU per create; one client
 * alone sees no change (docs/BENCHMARKS.md, "What the mechanisms save"). A request waits at
 * most for the rest of the turn it arrived in; while large lists stream in write turns, whose
 * slice would run first, it starts at once (`atTurnEnd`, `util/bulk-writes.ts`).
 *
 * A listener that throws does not keep the rest of its batch from starting; the first error is
 * thrown again afterwards, uncaught, as node would have let it be. `schedule` waits for the end
 * of the turn (tests call a batch's start themselves).
 */
export function startTogether(listener: RequestListener, schedule: (start: () => void) => void = setImmediate): RequestListener {
  let arrived: Parameters<RequestListener>[] = [];
  const start = (): void => {
    const batch = arrived;
    arrived = [];
    let failed: { err: unknown } | undefined;
    for (const [req, res] of batch) {
      try {
        listener(req, res);
      } catch (err) {
        failed ??= { err };
      }
    }
    if (failed) throw failed.err;
  };
  return (req, res) => {
    arrived.push([req, res]);
    if (arrived.length === 1) atTurnEnd(start, schedule);
  };
}
