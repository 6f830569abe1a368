/**
 * A real TLS server (the server's own PKI, a loopback port) whose requests wait for the test:
 * each response is held until the test takes it with `hold` and answers it as it likes. For
 * tests of the gateway's response adapter over a real socket.
 */
import https from 'node:https';
import type { ServerResponse } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { type Pki, ensurePki } from '../../src/server/pki';
import { closeServer, listenOnLoopback } from './loopback-server';

export interface HeldResponses {
  readonly pki: Pki;
  readonly port: number;
  /** The next `n` responses, once that many requests have arrived. */
  hold(n: number): Promise<ServerResponse[]>;
  close(): Promise<void>;
}

export async function startHeldResponses(prefix: string): Promise<HeldResponses> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  const pki = await ensurePki({ dataDir: dir });
  const held: ServerResponse[] = [];
  let arrived: (() => void) | undefined;
  const server = https.createServer({ key: pki.servingKey, cert: pki.servingCert }, (_req, res) => {
    held.push(res);
    arrived?.();
  });
  const port = await listenOnLoopback(server);
  return {
    pki,
    port,
    async hold(n) {
      while (held.length < n) await new Promise<void>((resolve) => (arrived = resolve));
      return held.splice(0, n);
    },
    async close() {
      closeServer(server);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
