import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { renderKubeconfig, serverUrl, writeKubeconfig } from '../../src/server/kubeconfig';

describe('admin kubeconfig', () => {
  it('points at loopback for wildcard bind addresses and brackets IPv6', () => {
    expect(serverUrl('127.0.0.1', 6443)).toBe('https://127.0.0.1:6443');
    expect(serverUrl('0.0.0.0', 1)).toBe('https://127.0.0.1:1');
    expect(serverUrl('::', 2)).toBe('https://[::1]:2');
    expect(serverUrl('fd00::5', 3)).toBe('https://[fd00::5]:3');
  });

  it('holds the cluster, the admin credential and a current context', () => {
    const doc = YAML.parse(renderKubeconfig({ server: 'https://127.0.0.1:6443', certificateAuthority: 'CA', clientCertificate: 'CERT', clientKey: 'KEY' }));
    expect(doc).toEqual({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'keelson', cluster: { server: 'https://127.0.0.1:6443', 'certificate-authority-data': 'Q0E=' } }],
      users: [{ name: 'admin', user: { 'client-certificate-data': 'Q0VSVA==', 'client-key-data': 'S0VZ' } }],
      contexts: [{ name: 'admin@keelson', context: { cluster: 'keelson', user: 'admin' } }],
      'current-context': 'admin@keelson',
      preferences: {},
    });
  });

  it('is rewritten only when its content changes (e.g. the port)', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-kc-'));
    const file = path.join(dir, 'admin.kubeconfig');
    const render = (port: number) => renderKubeconfig({ server: serverUrl('127.0.0.1', port), certificateAuthority: 'CA', clientCertificate: 'C', clientKey: 'K' });
    expect(await writeKubeconfig(file, render(6443))).toBe(true);
    expect(await writeKubeconfig(file, render(6443))).toBe(false);
    expect(await writeKubeconfig(file, render(7443))).toBe(true);
    expect(await readFile(file, 'utf8')).toContain('https://127.0.0.1:7443');
    await rm(dir, { recursive: true, force: true });
  });
});
