/** startServer in process on the embedded store: restart reuses the PKI and follows the port. */
import { X509Certificate } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { startServer } from '../../src/server';
import { ManualClock } from '../../src/clock';
import { parseFlags } from '../../src/server/flags';
import { httpsRequest } from '../gateway/support/https-client';

async function kubeconfigServer(file: string): Promise<string> {
  return YAML.parse(await readFile(file, 'utf8')).clusters[0].cluster.server;
}

describe('startServer', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-start-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('serves, writes admin.kubeconfig for the chosen port, and reuses the PKI on restart', async () => {
    const parsed = parseFlags(['--secure-port', '0', '--data-dir', dir, '--vendor', 'kubernetes']);
    if (parsed.kind !== 'config') throw new Error('flags');
    const first = await startServer(parsed.config);
    expect(first.url).toBe(`https://127.0.0.1:${first.port}`);
    expect(await kubeconfigServer(first.kubeconfigPath)).toBe(first.url);
    const ca = await readFile(path.join(dir, 'ca.crt'), 'utf8');
    const tls = { ca, cert: await readFile(path.join(dir, 'admin.crt'), 'utf8'), key: await readFile(path.join(dir, 'admin.key'), 'utf8') };
    const list = await httpsRequest(`${first.url}/api/v1/namespaces`, tls);
    expect(JSON.parse(list.body).items.map((n: { metadata: { name: string } }) => n.metadata.name)).toEqual(
      expect.arrayContaining(['default', 'kube-system', 'kube-public', 'kube-node-lease']),
    );
    await first.close();
    await first.close();

    const second = await startServer(parsed.config);
    expect(second.port).not.toBe(first.port);
    expect(await kubeconfigServer(second.kubeconfigPath)).toBe(second.url);
    expect(await readFile(path.join(dir, 'ca.crt'), 'utf8')).toBe(ca);
    const kc = YAML.parse(await readFile(second.kubeconfigPath, 'utf8'));
    const clientCert = new X509Certificate(Buffer.from(kc.users[0].user['client-certificate-data'], 'base64').toString());
    expect(clientCert.subject).toBe('CN=admin\nO=system:masters');
    expect((await httpsRequest(`${second.url}/readyz`, tls)).body).toBe('ok');
    await second.close();
  });

  it('removes events --event-ttl after their last write, on the injected clock', async () => {
    const eventsDir = await mkdtemp(path.join(os.tmpdir(), 'keelson-start-ttl-'));
    const parsed = parseFlags(['--secure-port', '0', '--data-dir', eventsDir, '--vendor', 'kubernetes', '--event-ttl', '10m', '--simulated-nodes', '0']);
    if (parsed.kind !== 'config') throw new Error('flags');
    const clock = new ManualClock(Date.now());
    const server = await startServer(parsed.config, { clock, inMemoryStore: true });
    try {
      const tls = {
        ca: await readFile(path.join(eventsDir, 'ca.crt'), 'utf8'),
        cert: await readFile(path.join(eventsDir, 'admin.crt'), 'utf8'),
        key: await readFile(path.join(eventsDir, 'admin.key'), 'utf8'),
      };
      const url = `${server.url}/api/v1/namespaces/default/events`;
      const body = JSON.stringify({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'pulled.1' },
        involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' },
        reason: 'Pulled',
        source: { component: 'kubelet' },
      });
      expect((await httpsRequest(url, tls, { method: 'POST', headers: { 'content-type': 'application/json' }, body })).status).toBe(201);
      // Real time for the expiry's watch and sweeps inside the server, which offers no event to wait on.
      const settle = () => new Promise((resolve) => setTimeout(resolve, 50));
      await settle();
      for (let minute = 0; minute < 9; minute++) {
        clock.advance(60_000);
        await settle();
      }
      expect((await httpsRequest(`${url}/pulled.1`, tls)).status).toBe(200);
      let status = 200;
      for (let minute = 0; status === 200 && minute < 5; minute++) {
        clock.advance(60_000);
        await settle();
        status = (await httpsRequest(`${url}/pulled.1`, tls)).status;
      }
      expect(status).toBe(404);
    } finally {
      await server.close();
      await rm(eventsDir, { recursive: true, force: true });
    }
  });

  it('a PKI that cannot be written fails the start and lets go of the store it opened meanwhile', async () => {
    // The store and the core start while the PKI is made: its failure must close them.
    const brokenDir = await mkdtemp(path.join(os.tmpdir(), 'keelson-start-pki-'));
    try {
      await mkdir(path.join(brokenDir, 'ca.crt'));
      const parsed = parseFlags(['--secure-port', '0', '--data-dir', brokenDir, '--vendor', 'kubernetes', '--simulated-nodes', '0']);
      if (parsed.kind !== 'config') throw new Error('flags');
      await expect(startServer(parsed.config)).rejects.toThrow(/EISDIR/);
      await rm(path.join(brokenDir, 'ca.crt'), { recursive: true });
      // The embedded store's lock was let go: the same data dir starts.
      const server = await startServer(parsed.config);
      expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:/);
      await server.close();
    } finally {
      await rm(brokenDir, { recursive: true, force: true });
    }
  });
});
