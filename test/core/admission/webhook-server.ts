/**
 * A real HTTPS admission webhook for tests, on a loopback port: it records every
 * AdmissionReview it receives and answers with what the test's handler returns for it.
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { createTestPki, type TestPki } from '../../grpc/fixtures/certs';

export interface ReceivedReview {
  path: string;
  /** The `timeout` query parameter client-go sends. */
  timeout: string | null;
  /** The client certificate's subject CN, when one was presented. */
  clientCn?: string;
  authorization?: string;
  review: { apiVersion: string; kind: string; request: Record<string, any> };
}

/** What a handler answers: a response (uid filled in), raw JSON, an HTTP error, or nothing for a while. */
export type Answer = { response: Record<string, unknown> } | { raw: unknown } | { httpStatus: number; body: string } | { delayMs: number; then?: Answer };

export type Handler = (review: ReceivedReview) => Answer;

export interface TestWebhook {
  pki: TestPki;
  url(path: string): string;
  /** The loopback port it listens on (a Service reference's `port`). */
  port: number;
  caBundle: string;
  received: ReceivedReview[];
  /** Requests received on `path`. */
  on(path: string): ReceivedReview[];
  handle(path: string, handler: Handler): void;
  close(): Promise<void>;
}

/** allowed: true, with a JSON patch (array of operations) when given. */
export function allow(patch?: unknown[]): Answer {
  return { response: { allowed: true, ...(patch ? { patchType: 'JSONPatch', patch: Buffer.from(JSON.stringify(patch)).toString('base64') } : {}) } };
}

export function deny(status: Record<string, unknown> = {}): Answer {
  return { response: { allowed: false, status } };
}

/**
 * `serverNames`: the DNS names its serving certificate carries instead of 127.0.0.1 and
 * localhost (a Service reference's `<name>.<namespace>.svc`).
 */
export async function startWebhook(options: { requireClientCert?: boolean; serverNames?: readonly string[] } = {}): Promise<TestWebhook> {
  const pki = await createTestPki('keelson-webhook-ca');
  const serving = options.serverNames ? await pki.issueServer(`CN=${options.serverNames[0]}`, options.serverNames) : pki.server;
  const handlers = new Map<string, Handler>();
  const received: ReceivedReview[] = [];
  const server = https.createServer(
    { key: serving.key, cert: serving.cert, ca: pki.ca, requestCert: true, rejectUnauthorized: options.requireClientCert ?? false },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const url = new URL(req.url ?? '/', 'https://webhook');
        const peer = (req.socket as import('node:tls').TLSSocket).getPeerCertificate?.();
        const review = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
        const rec: ReceivedReview = {
          path: url.pathname,
          timeout: url.searchParams.get('timeout'),
          ...(peer?.subject?.CN ? { clientCn: String(peer.subject.CN) } : {}),
          ...(req.headers.authorization ? { authorization: req.headers.authorization } : {}),
          review,
        };
        received.push(rec);
        const handler = handlers.get(url.pathname) ?? (() => allow());
        const send = (answer: Answer): void => {
          if ('delayMs' in answer) {
            const timer = setTimeout(() => {
              if (!res.destroyed) send(answer.then ?? allow());
            }, answer.delayMs);
            // A caller that gave up closed the connection: the answer is not owed any more.
            res.on('close', () => clearTimeout(timer));
            return;
          }
          if ('httpStatus' in answer) {
            res.writeHead(answer.httpStatus, { 'Content-Type': 'text/plain' }).end(answer.body);
            return;
          }
          const body =
            'raw' in answer
              ? answer.raw
              : { apiVersion: review.apiVersion, kind: 'AdmissionReview', response: { uid: review.request?.uid, ...answer.response } };
          res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));
        };
        send(handler(rec));
      });
    },
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    pki,
    url: (p) => `https://127.0.0.1:${port}${p}`,
    port,
    caBundle: Buffer.from(pki.ca).toString('base64'),
    received,
    on: (p) => received.filter((r) => r.path === p),
    handle: (p, h) => void handlers.set(p, h),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
