/** startServer in process on the embedded store: restart reuses the PKI and follows the port. */
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { startServer } from '../../src/server';
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
});
