/**
 * A real HTTPS conversion webhook for tests (issue 53), on a loopback port with a CA made for
 * it: it converts the test's Widget between v1 (`spec.color`) and v2 (`spec.paint.color`) and
 * records every ConversionReview; `mode` makes it misbehave (hang, wrong uid, count or kind).
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { createTestPki } from '../grpc/fixtures/certs';

export type ConversionMode = 'ok' | 'hang' | 'wrong-uid' | 'wrong-count' | 'wrong-kind' | 'fail';

export interface ReceivedConversion {
  apiVersion: string;
  request: { uid: string; desiredAPIVersion: string; objects: Record<string, any>[] };
}

export interface ConversionWebhook {
  url: string;
  /** The loopback port it listens on (a Service reference's `port`). */
  port: number;
  caBundle: string;
  received: ReceivedConversion[];
  mode: ConversionMode;
  close(): Promise<void>;
}

/** v1 `spec.color` ⇄ v2 `spec.paint.color`; everything else is kept. */
export function convertWidget(obj: Record<string, any>, to: string): Record<string, any> {
  const out = JSON.parse(JSON.stringify(obj));
  const spec = out.spec ?? {};
  if (to.endsWith('/v2') && 'color' in spec) {
    spec.paint = { color: spec.color };
    delete spec.color;
  } else if (to.endsWith('/v1') && spec.paint) {
    spec.color = spec.paint.color;
    delete spec.paint;
  }
  out.apiVersion = to;
  return out;
}

/**
 * `serverNames`: the DNS names its serving certificate carries instead of 127.0.0.1 and
 * localhost (a Service reference's `<name>.<namespace>.svc`).
 */
export async function startConversionWebhook(options: { serverNames?: readonly string[] } = {}): Promise<ConversionWebhook> {
  const pki = await createTestPki('keelson-conversion-ca');
  const serving = options.serverNames ? await pki.issueServer(`CN=${options.serverNames[0]}`, options.serverNames) : pki.server;
  const received: ReceivedConversion[] = [];
  const hook: ConversionWebhook = { url: '', port: 0, caBundle: Buffer.from(pki.ca).toString('base64'), received, mode: 'ok', close: async () => {} };
  const server = https.createServer({ key: serving.key, cert: serving.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const review = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ReceivedConversion;
      received.push(review);
      if (hook.mode === 'hang') return; // never answered; the caller gives up
      const { uid, desiredAPIVersion, objects } = review.request;
      let convertedObjects = objects.map((o) => convertWidget(o, desiredAPIVersion));
      if (hook.mode === 'wrong-count') convertedObjects = [...convertedObjects, convertedObjects[0]!];
      if (hook.mode === 'wrong-kind') convertedObjects = convertedObjects.map((o) => ({ ...o, kind: 'Gadget' }));
      const response = {
        uid: hook.mode === 'wrong-uid' ? 'not-the-uid' : uid,
        result: hook.mode === 'fail' ? { status: 'Failure', message: 'cannot convert this widget' } : { status: 'Success' },
        convertedObjects,
      };
      res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ apiVersion: review.apiVersion, kind: 'ConversionReview', response }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  hook.port = (server.address() as AddressInfo).port;
  hook.url = `https://127.0.0.1:${hook.port}/convert`;
  hook.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return hook;
}
