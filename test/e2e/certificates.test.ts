/**
 * CertificateSigningRequests with unmodified kubectl against a real server: an administrator
 * issues a client certificate for a new user (create, approve, read the certificate) and that
 * user is then who the server says; approving needs `approve` on the signer (or its domain's
 * wildcard); denial; and the system:masters restriction.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { KUBECTL, kubectlFor } from './support/kubectl';
import { makeCsr } from '../support/csr';
import { eventually } from '../support/eventually';

const run = promisify(execFile);
let server: ServerProcess;
let kubectl: (...args: string[]) => Promise<string>;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-csr-e2e-'));
  await writeFile(path.join(dir, 'tokens.csv'), 'carol-token,carol,c-1,reviewers\n');
  server = await startServerProcess([
    '--vendor',
    'kubernetes',
    '--controllers',
    '*,-replicaset',
    '--simulated-nodes',
    '0',
    '--token-auth-file',
    path.join(dir, 'tokens.csv'),
  ]);
  kubectl = kubectlFor(() => server);
});

afterAll(async () => {
  await server?.stop();
});

/** kubectl as another user: a kubeconfig with the server's CA and that user's credentials. */
async function kubectlAs(name: string, user: string[]): Promise<(...args: string[]) => Promise<{ stdout: string; stderr: string; code: number }>> {
  const file = path.join(dir, `${name}.kubeconfig`);
  await run(KUBECTL, [
    '--kubeconfig',
    file,
    'config',
    'set-cluster',
    'k',
    `--server=${server.url}`,
    `--certificate-authority=${path.join(server.dataDir, 'ca.crt')}`,
    '--embed-certs',
  ]);
  await run(KUBECTL, [
    '--kubeconfig',
    file,
    'config',
    'set-credentials',
    name,
    ...user,
    ...(user.some((u) => u.startsWith('--client-')) ? ['--embed-certs'] : []),
  ]);
  await run(KUBECTL, ['--kubeconfig', file, 'config', 'set-context', 'k', '--cluster=k', `--user=${name}`]);
  await run(KUBECTL, ['--kubeconfig', file, 'config', 'use-context', 'k']);
  return async (...args) => {
    try {
      const { stdout, stderr } = await run(KUBECTL, ['--kubeconfig', file, ...args], { timeout: 30_000 });
      return { stdout, stderr, code: 0 };
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; code?: number };
      return { stdout: e.stdout ?? '', stderr: e.stderr ?? '', code: e.code ?? 1 };
    }
  };
}

async function createCsr(name: string, subject: string, signerName = 'kubernetes.io/kube-apiserver-client'): Promise<string> {
  const csr = await makeCsr(subject);
  const file = path.join(dir, `${name}.yaml`);
  await writeFile(
    file,
    [
      'apiVersion: certificates.k8s.io/v1',
      'kind: CertificateSigningRequest',
      'metadata:',
      `  name: ${name}`,
      'spec:',
      `  request: ${csr.request}`,
      `  signerName: ${signerName}`,
      '  expirationSeconds: 86400',
      '  usages: [client auth]',
    ].join('\n'),
  );
  await writeFile(path.join(dir, `${name}.key`), csr.keyPem);
  return file;
}

async function issued(name: string): Promise<string> {
  const b64 = await eventually(() => kubectl('get', 'csr', name, '-o', 'jsonpath={.status.certificate}'), {
    what: `${name} to be issued`,
    timeoutMs: 15_000,
    intervalMs: 100,
  });
  return Buffer.from(b64, 'base64').toString('utf8');
}

test('an administrator issues a client certificate for a new user, who then is that user', async () => {
  await kubectl('create', '-f', await createCsr('jane', 'CN=jane, O=dev, O=qa'));
  expect(await kubectl('get', 'csr', 'jane')).toMatch(
    /^NAME\s+AGE\s+SIGNERNAME\s+REQUESTOR\s+REQUESTEDDURATION\s+CONDITION\njane\s+\S+\s+kubernetes\.io\/kube-apiserver-client\s+admin\s+24h\s+Pending\n$/,
  );
  expect(await kubectl('certificate', 'approve', 'jane')).toBe('certificatesigningrequest.certificates.k8s.io/jane approved\n');
  const pem = await issued('jane');
  expect(await kubectl('get', 'csr', 'jane', '-o', 'custom-columns=C:.status.conditions[0].type,R:.status.conditions[0].reason')).toBe(
    'C          R\nApproved   KubectlApprove\n',
  );
  await writeFile(path.join(dir, 'jane.crt'), pem);
  const jane = await kubectlAs('jane', [`--client-certificate=${path.join(dir, 'jane.crt')}`, `--client-key=${path.join(dir, 'jane.key')}`]);
  const whoami = await jane('auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username} {.status.userInfo.groups}');
  expect(whoami).toEqual({ stdout: 'jane ["dev","qa","system:authenticated"]', stderr: '', code: 0 });
});

test('approving needs approve on the signer, by its name or its domain’s wildcard; denial sticks', async () => {
  // carol may read requests and write approvals, but not approve for any signer yet.
  await kubectl('create', 'clusterrole', 'csr-reviewer', '--verb=get,list,watch', '--resource=certificatesigningrequests');
  await kubectl('create', 'clusterrolebinding', 'csr-reviewer', '--clusterrole=csr-reviewer', '--group=reviewers');
  await kubectl('create', 'clusterrole', 'csr-approval', '--verb=update', '--resource=certificatesigningrequests/approval');
  await kubectl('create', 'clusterrolebinding', 'csr-approval', '--clusterrole=csr-approval', '--user=carol');
  const carol = await kubectlAs('carol', ['--token=carol-token']);
  await kubectl('create', '-f', await createCsr('bob', 'CN=bob'));
  const refused = await carol('certificate', 'approve', 'bob');
  expect(refused.code).not.toBe(0);
  expect(refused.stderr).toContain(
    'Error from server (Forbidden): certificatesigningrequests.certificates.k8s.io "bob" is forbidden: user not permitted to approve requests with signerName "kubernetes.io/kube-apiserver-client"',
  );
  // `signers` is no served resource (kubectl create clusterrole refuses it): the role as YAML.
  const role = path.join(dir, 'approve-signers.yaml');
  await writeFile(
    role,
    [
      'apiVersion: rbac.authorization.k8s.io/v1',
      'kind: ClusterRole',
      'metadata:',
      '  name: approve-kubernetes-signers',
      'rules:',
      '- apiGroups: [certificates.k8s.io]',
      '  resources: [signers]',
      '  resourceNames: ["kubernetes.io/*"]',
      '  verbs: [approve]',
    ].join('\n'),
  );
  await kubectl('apply', '-f', role);
  await kubectl('create', 'clusterrolebinding', 'approve-kubernetes-signers', '--clusterrole=approve-kubernetes-signers', '--user=carol');
  expect(await carol('certificate', 'deny', 'bob')).toMatchObject({ stdout: 'certificatesigningrequest.certificates.k8s.io/bob denied\n', code: 0 });
  expect(await kubectl('get', 'csr', 'bob', '-o', 'jsonpath={.status.conditions[0].type}')).toBe('Denied');
  // Denied stays denied (kubectl checks first; the server's refusal is in the type tests).
  expect((await carol('certificate', 'approve', 'bob')).stderr).toBe('error: certificate signing request "bob" is already Denied\n');
  expect(await kubectl('get', 'csr', 'bob', '-o', 'jsonpath={.status.certificate}')).toBe('');
});

test('no system:masters client certificate from the API server’s client signer', async () => {
  const file = await createCsr('root', 'CN=root, O=system:masters');
  await expect(kubectl('create', '-f', file)).rejects.toThrow(
    'Error from server (Forbidden): error when creating "' +
      file +
      '": certificatesigningrequests.certificates.k8s.io "root" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed',
  );
});
