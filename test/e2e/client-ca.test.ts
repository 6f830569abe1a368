/**
 * `--client-ca-file` naming a CA of the operator's own: every credential the server writes under
 * `--data-dir` still works (admin.kubeconfig with kubectl, controller-manager.kubeconfig for an
 * out-of-process controller manager whose scheduler and node register), a certificate of the
 * operator's CA authenticates, one of a third CA is refused 401, and csrsigning still issues
 * certificates that authenticate. The same through the library's `startServer({ flags })`.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { ensurePki, signClientCertificate } from '../../src/server/pki';
import { startServer as startLibraryServer } from '../../src/library';
import { renderKubeconfig } from '../../src/server/kubeconfig';
import { startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { httpsRequest } from '../gateway/support/https-client';
import { makeCsr } from '../support/csr';
import { KUBECTL, kubectlFor } from './support/kubectl';
import { eventually, type EventuallyOptions } from '../support/eventually';

/** kubectl calls against a real server take a while: look less often, for longer. */
const POLL: EventuallyOptions = { timeoutMs: 60_000, intervalMs: 250 };

const run = promisify(execFile);

interface Ca {
  cert: string;
  key: string;
  certFile: string;
}

let dir: string;
let operatorCa: Ca;
let thirdCa: Ca;
const processes: ServerProcess[] = [];

/** A CA of its own in `dir/<name>` (made as the server makes its own). */
async function makeCa(name: string): Promise<Ca> {
  const dataDir = path.join(dir, name);
  await ensurePki({ dataDir, extraServingNames: [], skipServing: true, log: () => {} });
  const read = (f: string) => readFile(path.join(dataDir, f), 'utf8');
  return { cert: await read('ca.crt'), key: await read('ca.key'), certFile: path.join(dataDir, 'ca.crt') };
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-client-ca-'));
  [operatorCa, thirdCa] = await Promise.all([makeCa('operator'), makeCa('third')]);
});

afterAll(async () => {
  for (const p of processes) await p.stop().catch(() => undefined);
  await rm(dir, { recursive: true, force: true });
});

/** `GET /apis/authentication…/selfsubjectreviews` as the holder of `cert`: the status and, if 201, the user name. */
async function whoAmI(url: string, serverCa: string, cert: { cert: string; key: string }): Promise<{ status: number; username?: string }> {
  const res = await httpsRequest(
    `${url}/apis/authentication.k8s.io/v1/selfsubjectreviews`,
    { ca: serverCa, ...cert },
    {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
    },
  );
  return res.status === 201 ? { status: res.status, username: JSON.parse(res.body).status.userInfo.username } : { status: res.status };
}

test('a server process with a foreign --client-ca-file accepts its own credentials, the foreign CA, and no other', async () => {
  const server = await startServerProcess([
    '--vendor',
    'kubernetes',
    '--client-ca-file',
    operatorCa.certFile,
    '--anonymous-auth=false',
    '--controllers',
    '*,-replicaset',
  ]);
  processes.push(server);
  const kubectl = kubectlFor(() => server);
  // admin.kubeconfig, as the server wrote it.
  expect(await kubectl('get', 'ns', 'default', '-o', 'name')).toBe('namespace/default\n');
  const serverCa = await readFile(path.join(server.dataDir, 'ca.crt'), 'utf8');

  const alice = await signClientCertificate(operatorCa.cert, operatorCa.key, 'alice', ['devs']);
  expect(await whoAmI(server.url, serverCa, alice)).toEqual({ status: 201, username: 'alice' });
  const mallory = await signClientCertificate(thirdCa.cert, thirdCa.key, 'mallory', ['system:masters']);
  const refused = await whoAmI(server.url, serverCa, mallory);
  expect(refused.status).toBe(401);

  // kubectl with a kubeconfig of the operator's CA, and of the third.
  for (const [name, cert, expected] of [
    ['alice', alice, /^ATTRIBUTE\s+VALUE\nUsername\s+alice\nGroups\s+\[devs system:authenticated\]\n$/],
    ['mallory', mallory, null],
  ] as const) {
    const file = path.join(dir, `${name}.kubeconfig`);
    await writeFile(
      file,
      renderKubeconfig({
        server: server.url,
        certificateAuthority: serverCa,
        clientCertificate: cert.cert,
        clientKey: cert.key,
        userName: name,
        contextName: name,
      }),
    );
    const result = await run(KUBECTL, ['--kubeconfig', file, 'auth', 'whoami'], { timeout: 30_000 }).then(
      (r) => ({ code: 0, out: r.stdout }),
      (err: { stderr: string }) => ({ code: 1, out: err.stderr }),
    );
    if (expected) expect(result).toMatchObject({ code: 0, out: expect.stringMatching(expected) });
    else expect(result).toEqual({ code: 1, out: 'error: You must be logged in to the server (Unauthorized)\n' });
  }

  // The in-process simulated node still registers and heartbeats.
  await eventually(async () => /keelson-node-0\s+Ready/.test(await kubectl('get', 'nodes')), POLL);

  // csrsigning still signs (with the generated CA), and what it signs authenticates.
  const csr = await makeCsr('CN=bob, O=reviewers');
  const csrFile = path.join(dir, 'bob.yaml');
  await writeFile(
    csrFile,
    [
      'apiVersion: certificates.k8s.io/v1',
      'kind: CertificateSigningRequest',
      'metadata:',
      '  name: bob',
      'spec:',
      `  request: ${csr.request}`,
      '  signerName: kubernetes.io/kube-apiserver-client',
      '  usages: [client auth]',
    ].join('\n'),
  );
  await kubectl('create', '-f', csrFile);
  await kubectl('certificate', 'approve', 'bob');
  let issued = '';
  await eventually(async () => !!(issued = await kubectl('get', 'csr', 'bob', '-o', 'jsonpath={.status.certificate}')), POLL);
  expect(await whoAmI(server.url, serverCa, { cert: Buffer.from(issued, 'base64').toString('utf8'), key: csr.keyPem })).toEqual({
    status: 201,
    username: 'bob',
  });
});

test('an out-of-process controller manager runs against a core with a foreign --client-ca-file', async () => {
  const core = await startServerProcess([
    '--vendor',
    'kubernetes',
    '--client-ca-file',
    operatorCa.certFile,
    '--anonymous-auth=false',
    '--grpc-port',
    '0',
    '--controllers=',
    '--simulated-nodes',
    '0',
    '--authorization-mode',
    'Node,RBAC',
  ]);
  processes.push(core);
  const grpcAddress = /serving the core over gRPC on (\S+)/.exec(core.output())![1]!;
  const controllers = await startServerProcess(
    [
      '--vendor',
      'kubernetes',
      '--controllers-only',
      '--core-address',
      grpcAddress,
      '--kubeconfig',
      path.join(core.dataDir, 'controller-manager.kubeconfig'),
      '--use-service-account-credentials',
      '--cluster-signing-cert-file',
      path.join(core.dataDir, 'ca.crt'),
      '--cluster-signing-key-file',
      path.join(core.dataDir, 'ca.key'),
    ],
    { noGateway: true },
  );
  processes.push(controllers);
  const kubectl = kubectlFor(() => core);
  // The scheduler's and the node's certificates are signed with the cluster CA; the node registers.
  await eventually(async () => /keelson-node-0\s+Ready/.test(await kubectl('get', 'nodes')), { ...POLL, timeoutMs: 20_000 }).catch(() => {
    throw new Error(`no node:\n${controllers.output()}\n---\n${core.output()}`);
  });
  // The controllers act (each as its service account, whose token the controller manager's credential
  // requested): root-ca-cert-publisher writes its ConfigMap.
  await eventually(
    async () => (await kubectl('get', 'configmap', '-n', 'default', 'kube-root-ca.crt', '-o', 'name').catch(() => '')).includes('kube-root-ca.crt'),
    POLL,
  );
  expect(controllers.output()).not.toMatch(/Unauthorized|UNAUTHENTICATED/);
});

test('startServer({ flags }) with a foreign --client-ca-file: the admin kubeconfig, newUser and the foreign CA work, a third CA does not', async () => {
  const server = await startLibraryServer({ flags: ['--client-ca-file', operatorCa.certFile, '--anonymous-auth=false'] });
  try {
    const api = (kubeconfig: string) => {
      const kc = new k8s.KubeConfig();
      kc.loadFromString(kubeconfig);
      return kc.makeApiClient(k8s.CoreV1Api);
    };
    expect((await api(server.kubeconfig).readNamespace({ name: 'default' })).metadata?.name).toBe('default');
    const dev = await server.newUser('dev', ['devs']);
    await expect(api(dev.kubeconfig).listNamespacedPod({ namespace: 'default' })).rejects.toMatchObject({ code: 403 });
    const alice = await signClientCertificate(operatorCa.cert, operatorCa.key, 'alice', []);
    expect(await whoAmI(server.url, server.ca, alice)).toEqual({ status: 201, username: 'alice' });
    expect((await whoAmI(server.url, server.ca, await signClientCertificate(thirdCa.cert, thirdCa.key, 'mallory', []))).status).toBe(401);
  } finally {
    await server.stop();
  }
});
