import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { readKubeconfigCredentials, renderKubeconfig, serverUrl, writeKubeconfig } from '../../src/server/kubeconfig';

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
    const render = (port: number) =>
      renderKubeconfig({ server: serverUrl('127.0.0.1', port), certificateAuthority: 'CA', clientCertificate: 'C', clientKey: 'K' });
    expect(await writeKubeconfig(file, render(6443))).toBe(true);
    expect(await writeKubeconfig(file, render(6443))).toBe(false);
    expect(await writeKubeconfig(file, render(7443))).toBe(true);
    expect(await readFile(file, 'utf8')).toContain('https://127.0.0.1:7443');
    await rm(dir, { recursive: true, force: true });
  });
});

describe('reading a kubeconfig', () => {
  it("takes the current context's CA and client certificate, inline or from files, or its token", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-kubeconfig-'));
    const inline = path.join(dir, 'inline.kubeconfig');
    await writeFile(
      inline,
      renderKubeconfig({
        server: 'https://127.0.0.1:1',
        certificateAuthority: 'CA',
        clientCertificate: 'CERT',
        clientKey: 'KEY',
        userName: 'u',
        contextName: 'u@c',
      }),
    );
    expect(await readKubeconfigCredentials(inline)).toEqual({
      server: 'https://127.0.0.1:1',
      certificateAuthority: 'CA',
      clientCertificate: 'CERT',
      clientKey: 'KEY',
    });

    await writeFile(path.join(dir, 'ca.crt'), 'FILE-CA');
    await writeFile(path.join(dir, 'token'), 'tok\n');
    const files = path.join(dir, 'files.kubeconfig');
    const doc = (user: Record<string, unknown>, current = 'b') => ({
      clusters: [{ name: 'c', cluster: { server: 'https://x', 'certificate-authority': 'ca.crt' } }],
      users: [{ name: 'tok', user }],
      contexts: [
        { name: 'a', context: { cluster: 'nope', user: 'tok' } },
        { name: 'b', context: { cluster: 'c', user: 'tok' } },
      ],
      'current-context': current,
    });
    await writeFile(files, YAML.stringify(doc({ tokenFile: 'token' })));
    expect(await readKubeconfigCredentials(files)).toEqual({ server: 'https://x', certificateAuthority: 'FILE-CA', token: 'tok' });

    await writeFile(files, YAML.stringify(doc({ token: 't' }, 'a')));
    await expect(readKubeconfigCredentials(files)).rejects.toThrow(/no cluster named "nope"/);
    await writeFile(files, YAML.stringify(doc({})));
    await expect(readKubeconfigCredentials(files)).rejects.toThrow(/user "tok" has neither a client certificate nor a token/);
    await writeFile(files, YAML.stringify(doc({ 'client-certificate': 'ca.crt' })));
    await expect(readKubeconfigCredentials(files)).rejects.toThrow(/needs both client-certificate and client-key/);
    await expect(readKubeconfigCredentials(path.join(dir, 'missing'))).rejects.toThrow(/ENOENT/);
    await rm(dir, { recursive: true, force: true });
  });
});
