/**
 * Endpoints and EndpointSlices through the running server with its controllers and a simulated
 * node: unmodified kubectl 1.32 lists `svc,endpoints,endpointslices` with upstream's columns, the
 * endpoints carrying the pods' IPs on the targeted container port.
 */
import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { eventually } from '../support/eventually';
import { kubectlRows } from './support/kubectl';

const run = promisify(execFile);

const MANIFEST = `apiVersion: v1
kind: Service
metadata: {name: web, namespace: eps}
spec:
  clusterIP: 10.0.0.50
  selector: {app: web}
  ports:
  - {name: http, port: 80, targetPort: http}
`;

describe('kubectl get svc,endpoints,endpointslices', () => {
  let server: ServerProcess;
  const kubectl = async (...args: string[]) =>
    (await run('/usr/bin/kubectl', ['--kubeconfig', server.kubeconfig, '-n', 'eps', ...args], { timeout: 30_000 })).stdout;

  beforeAll(async () => {
    server = await startServerProcess(['--vendor', 'kubernetes', '--simulated-nodes', '1']);
    await run('/usr/bin/kubectl', ['--kubeconfig', server.kubeconfig, 'create', 'namespace', 'eps']);
    const child = spawn('/usr/bin/kubectl', ['--kubeconfig', server.kubeconfig, 'create', '-f', '-']);
    child.stdin.end(MANIFEST);
    await new Promise((resolve) => child.on('exit', resolve));
    for (const name of ['web-a', 'web-b']) {
      await kubectl(
        'run',
        name,
        '--image=nginx:1.27',
        '--labels=app=web',
        '--overrides',
        JSON.stringify({ spec: { containers: [{ name, image: 'nginx:1.27', ports: [{ name: 'http', containerPort: 8080 }] }] } }),
      );
    }
  }, 120_000);
  afterAll(async () => {
    await server?.stop();
  });

  it("prints upstream's columns for each, the endpoints on the pods' IPs and the named container port", async () => {
    const ips = await eventually(
      async () => {
        const out = (await kubectl('get', 'pods', '-o', 'jsonpath={.items[*].status.podIP}')).trim().split(/\s+/).filter(Boolean);
        return out.length === 2 ? out.sort() : undefined;
      },
      { timeoutMs: 60_000 },
    );
    await eventually(async () => (await kubectl('get', 'endpoints', 'web', '-o', 'jsonpath={.subsets[*].addresses[*].ip}')).trim().split(/\s+/).length === 2, {
      timeoutMs: 60_000,
    });
    await eventually(
      async () => (await kubectl('get', 'endpointslices', '-o', 'jsonpath={.items[*].endpoints[*].addresses[0]}')).trim().split(/\s+/).length === 2,
      {
        timeoutMs: 60_000,
      },
    );
    const out = kubectlRows(await kubectl('get', 'svc,endpoints,endpointslices'));
    const endpointsCell = ips.map((ip) => `${ip}:8080`).join(',');
    expect(out[0]).toBe('NAME | TYPE | CLUSTER-IP | EXTERNAL-IP | PORT(S) | AGE');
    expect(out[1]).toBe('service/web | ClusterIP | 10.0.0.50 | <none> | 80/TCP | <age>');
    expect(out[2]).toBe('');
    expect(out[3]).toBe('NAME | ENDPOINTS | AGE');
    expect(out[4]).toBe(`endpoints/web | ${endpointsCell} | <age>`);
    expect(out[5]).toBe('');
    expect(out[6]).toBe('NAME | ADDRESSTYPE | PORTS | ENDPOINTS | AGE');
    expect(out[7]).toMatch(
      new RegExp(`^endpointslice\\.discovery\\.k8s\\.io/web-[a-z0-9]{5} \\| IPv4 \\| 8080 \\| ${ips.join(',').replace(/\./g, '\\.')} \\| <age>$`),
    );
    expect(out).toHaveLength(8);
  }, 120_000);
});
