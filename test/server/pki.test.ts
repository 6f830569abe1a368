import 'reflect-metadata';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import path from 'node:path';
import { ensurePki, servingNames, signClientCertificate } from '../../src/server/pki';

const run = promisify(execFile);

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-pki-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('PKI', () => {
  it('makes a CA, a serving certificate for loopback names and an admin client certificate', async () => {
    const pki = await ensurePki({ dataDir: dir, extraServingNames: ['10.1.2.3', '0.0.0.0'] });
    const ca = new X509Certificate(pki.caCert);
    const serving = new X509Certificate(pki.servingCert);
    const admin = new X509Certificate(pki.adminCert);
    expect(ca.ca).toBe(true);
    expect(serving.verify(ca.publicKey)).toBe(true);
    expect(admin.verify(ca.publicKey)).toBe(true);
    expect(serving.subjectAltName).toBe('IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, DNS:localhost, IP Address:10.1.2.3');
    expect(admin.subject).toBe('CN=admin\nO=system:masters');
    expect(admin.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(serving.keyUsage).toEqual(['1.3.6.1.5.5.7.3.1']);
    expect(serving.checkPrivateKey(createPrivateKey(pki.servingKey))).toBe(true);
    expect(admin.checkPrivateKey(createPrivateKey(pki.adminKey))).toBe(true);
    for (const f of ['ca.crt', 'ca.key', 'serving.crt', 'serving.key', 'admin.crt', 'admin.key']) expect((await stat(path.join(dir, f))).isFile()).toBe(true);
    expect((await stat(path.join(dir, 'ca.key'))).mode & 0o777).toBe(0o600);
  });

  it('reuses everything on a later start', async () => {
    const first = await ensurePki({ dataDir: dir });
    const lines: string[] = [];
    const second = await ensurePki({ dataDir: dir, log: (l) => lines.push(l) });
    expect(second).toEqual(first);
    expect(lines).toEqual([]);
  });

  it('remakes the serving certificate when a needed name is missing, keeping the CA', async () => {
    const first = await ensurePki({ dataDir: dir });
    const second = await ensurePki({ dataDir: dir, extraServingNames: ['192.168.7.7'] });
    expect(second.caCert).toBe(first.caCert);
    expect(second.adminCert).toBe(first.adminCert);
    expect(second.servingCert).not.toBe(first.servingCert);
    expect(new X509Certificate(second.servingCert).subjectAltName).toContain('192.168.7.7');
  });

  it('remakes leaves close to expiry, and everything when the CA is unreadable', async () => {
    const first = await ensurePki({ dataDir: dir });
    const later = await ensurePki({ dataDir: dir, now: () => new Date(Date.now() + 340 * 24 * 3600 * 1000) });
    expect(later.caCert).toBe(first.caCert);
    expect(later.adminCert).not.toBe(first.adminCert);
    await writeFile(path.join(dir, 'ca.key'), 'garbage');
    const fresh = await ensurePki({ dataDir: dir });
    expect(fresh.caCert).not.toBe(first.caCert);
    expect(new X509Certificate(fresh.adminCert).verify(new X509Certificate(fresh.caCert).publicKey)).toBe(true);
    expect(await readFile(path.join(dir, 'ca.crt'), 'utf8')).toBe(fresh.caCert);
  });

  it('can skip the serving certificate when one was given on the command line', async () => {
    const pki = await ensurePki({ dataDir: dir, skipServing: true });
    expect(pki.servingCert).toBe('');
    await expect(stat(path.join(dir, 'serving.crt'))).rejects.toThrow();
  });

  it("makes the controller manager's client certificate, and signs client certificates with a CA given as PEM", async () => {
    const pki = await ensurePki({ dataDir: dir });
    const ca = new X509Certificate(pki.caCert);
    const manager = new X509Certificate(pki.controllerManagerCert);
    expect(manager.subject).toBe('CN=system:kube-controller-manager');
    expect(manager.verify(ca.publicKey)).toBe(true);
    const caKey = await readFile(path.join(dir, 'ca.key'), 'utf8');
    const node = await signClientCertificate(pki.caCert, caKey, 'system:node:n1', ['system:nodes']);
    const cert = new X509Certificate(node.cert);
    expect(cert.subject).toBe('CN=system:node:n1\nO=system:nodes');
    expect(cert.verify(ca.publicKey)).toBe(true);
    expect(cert.keyUsage).toEqual(['1.3.6.1.5.5.7.3.2']);
    expect(cert.checkPrivateKey(createPrivateKey(node.key))).toBe(true);
    await expect(signClientCertificate(pki.caCert, 'not a key', 'u', [])).rejects.toThrow(/the signing CA is not a PEM certificate and PKCS#8 P-256 key/);
  });

  it("makes certificates in a worker thread: the X.509 library never loads in the server's own", async () => {
    // The compiled tree, as `npm start` runs it (from the TypeScript sources the job runs in
    // the calling thread). A fresh process makes a whole PKI, and afterwards no module of
    // @peculiar/x509 is in its module cache (it costs ~16 MB of RSS once loaded).
    const root = path.resolve(__dirname, '../..');
    const { stdout: built } = await run(process.execPath, [path.join(root, 'tools/build.js')], { cwd: root });
    const pkiModule = path.join(built.trim(), 'src/server/pki.js');
    const script = `require(${JSON.stringify(pkiModule)}).ensurePki({ dataDir: ${JSON.stringify(dir)} }).then((pki) => process.stdout.write(JSON.stringify({ loaded: Object.keys(require.cache).filter((m) => m.includes('@peculiar')), ca: pki.caCert })))`;
    const { stdout } = await run(process.execPath, ['-e', script], { cwd: root });
    const out = JSON.parse(stdout) as { loaded: string[]; ca: string };
    expect(out.loaded).toEqual([]);
    expect(out.ca).toBe(await readFile(path.join(dir, 'ca.crt'), 'utf8'));
    const ca = new X509Certificate(out.ca);
    for (const leaf of ['serving', 'admin', 'gateway', 'controller-manager']) {
      expect(new X509Certificate(await readFile(path.join(dir, `${leaf}.crt`), 'utf8')).verify(ca.publicKey)).toBe(true);
    }
  }, 60_000);

  it('lists serving names without wildcard addresses or duplicates', () => {
    expect(servingNames(['0.0.0.0', '::', '127.0.0.1', '0:0:0:0:0:0:0:1', 'fd00::1'])).toEqual(['127.0.0.1', '::1', 'localhost', 'fd00::1']);
  });
});
