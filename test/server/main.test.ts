/** The entry point as a process: refusing bad flags, --help, and a clean SIGTERM. */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
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

  it('starts without loading grpc-js or jose: no gRPC door asked for, no token checked yet', () => {
    // Each costs ~30 ms of the start, grpc-js ~4 MB of RSS too (docs/BENCHMARKS.md, "What the mechanisms save").
    // The entry point runs until it says it is serving; the packages asked for by then are listed.
    const dataDir = mkdtempSync(path.join(tmpdir(), 'keelson-main-'));
    try {
      const script = `
        const Module = require('node:module');
        const asked = new Set();
        const load = Module._load;
        Module._load = function (request, ...rest) { asked.add(request); return load.call(this, request, ...rest); };
        const write = process.stdout.write.bind(process.stdout);
        process.stdout.write = process.stderr.write = (chunk) => {
          if (String(chunk).includes('serving ')) {
            write(JSON.stringify({ asked: [...asked].filter((m) => !m.startsWith('.') && !m.startsWith('/')) }));
            process.exit(0);
          }
          return true;
        };
        process.argv = [process.execPath, 'main', '--data-dir', ${JSON.stringify(dataDir)}, '--secure-port', '0'];
        require('./src/server/main.ts');`;
      const r = spawnSync(process.execPath, ['-r', '@swc-node/register', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 60_000 });
      expect(r.status).toBe(0);
      const { asked } = JSON.parse(r.stdout) as { asked: string[] };
      // The start did load packages (the check sees them), just not these two.
      expect(asked).toEqual(expect.arrayContaining(['express', 'prom-client']));
      expect(asked).not.toContain('@grpc/grpc-js');
      expect(asked).not.toContain('jose');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});
