/** The entry point as a process: refusing bad flags, --help, and a clean SIGTERM. */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { startServerProcess } from '../gateway/support/server-process';

const ROOT = path.resolve(__dirname, '../..');

function runMain(args: string[]) {
  return spawnSync(process.execPath, ['-r', '@swc-node/register', 'src/server/main.ts', ...args], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 });
}

describe('main', () => {
  it('refuses to start on an unknown flag, naming it, with exit code 1', () => {
    const r = runMain(['--secure-prot', '1']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('Error: unknown flag: --secure-prot');
  });

  it('refuses unreadable TLS files', () => {
    const r = runMain(['--tls-cert-file', '/nonexistent.crt', '--tls-private-key-file', '/nonexistent.key']);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('--tls-cert-file: cannot read "/nonexistent.crt"');
  });

  it('prints the flags for --help and exits 0', () => {
    const r = runMain(['--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('--bind-address');
  });

  it('logs the port, the kubeconfig and a kubectl command, and exits 0 on SIGTERM', async () => {
    const server = await startServerProcess([]);
    const out = server.output();
    expect(out).toMatch(new RegExp(`serving platform API on https://127\\.0\\.0\\.1:${server.port} \\(port ${server.port}\\)`));
    expect(out).toContain(`admin kubeconfig: ${server.kubeconfig}`);
    expect(out).toContain(`try: kubectl --kubeconfig ${server.kubeconfig} get namespaces`);
    // The default profile says which kubectl commands need upstream's names.
    expect(out).toContain(
      "its generator commands (create namespace|configmap|secret|role|rolebinding|clusterrole|clusterrolebinding|token) and auth can-i send upstream group names or upstream's protobuf: start with --vendor kubernetes for those",
    );
    expect(await server.stop()).toBe(0);
  });
});
