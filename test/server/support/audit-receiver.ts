/**
 * A real HTTPS audit webhook for tests, on a loopback port: it asks for a client certificate
 * from its test CA, records every EventList POSTed to it, and answers with the next status the
 * test queued (200 once the queue is empty).
 */
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { createTestPki, type TestPki } from '../../grpc/fixtures/certs';
import { eventually } from '../../support/eventually';

export interface ReceivedBatch {
  clientCn?: string;
  contentType?: string;
  body: { kind: string; apiVersion: string; metadata: unknown; items: Array<Record<string, any>> };
}

export interface AuditReceiver {
  pki: TestPki;
  url: string;
  batches: ReceivedBatch[];
  /** Every item of every batch, in arrival order. */
  events(): Array<Record<string, any>>;
  /** Answer the next POSTs with these statuses, in order. */
  answer(...statuses: number[]): void;
  /** Resolves once `n` batches have arrived (real time; fails after `timeoutMs`). */
  waitForBatches(n: number, timeoutMs?: number): Promise<void>;
  /** A kubeconfig-format file naming this service and the test client certificate. */
  writeKubeconfig(dir: string): Promise<string>;
  close(): Promise<void>;
}

export async function startAuditReceiver(): Promise<AuditReceiver> {
  const pki = await createTestPki('keelson-audit-webhook-ca');
  const batches: ReceivedBatch[] = [];
  const statuses: number[] = [];
  const server = https.createServer({ key: pki.server.key, cert: pki.server.cert, ca: pki.ca, requestCert: true, rejectUnauthorized: true }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      batches.push({
        ...(peer?.subject?.CN ? { clientCn: String(peer.subject.CN) } : {}),
        ...(req.headers['content-type'] ? { contentType: req.headers['content-type'] } : {}),
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
      });
      const status = statuses.shift() ?? 200;
      res.writeHead(status, { 'Content-Type': 'text/plain' }).end(status === 200 ? '' : 'receiver refused');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/audit`;
  return {
    pki,
    url,
    batches,
    events: () => batches.flatMap((b) => b.body.items),
    answer: (...s) => void statuses.push(...s),
    async waitForBatches(n, timeoutMs = 10_000) {
      await eventually(() => batches.length >= n, { what: `${n} batches`, timeoutMs, intervalMs: 10 });
    },
    async writeKubeconfig(dir) {
      const b64 = (s: string) => Buffer.from(s).toString('base64');
      const file = path.join(dir, 'audit-webhook.kubeconfig');
      await writeFile(
        file,
        [
          'apiVersion: v1',
          'kind: Config',
          'clusters:',
          '- name: audit',
          '  cluster:',
          `    server: ${url}`,
          `    certificate-authority-data: ${b64(pki.ca)}`,
          'users:',
          '- name: apiserver',
          '  user:',
          `    client-certificate-data: ${b64(pki.client.cert)}`,
          `    client-key-data: ${b64(pki.client.key)}`,
          'contexts:',
          '- name: default',
          '  context: {cluster: audit, user: apiserver}',
          'current-context: default',
        ].join('\n'),
      );
      return file;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
