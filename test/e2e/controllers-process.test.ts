/**
 * The controllers, the scheduler and the simulated nodes in processes of their own
 * (`--controllers-only`), clients of a core that runs none, over its gRPC door: each identity is
 * authenticated and authorized by the core (the controller manager by its kubeconfig's
 * certificate, each controller by its service account's token, the scheduler and the node by
 * certificates signed with the cluster CA). A ReplicaSet scales 0 → 100 → 10 → 0 with correct
 * status; two such processes run one active set of controllers; the leader killed mid-scale is
 * replaced and the scale converges with no extra pods.
 */
import { X509Certificate } from 'node:crypto';
import https from 'node:https';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { makeCsr } from '../support/csr';
import { startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { kubectlFor } from './support/kubectl';
import { createReplicaSet } from './support/replicasets';
import { eventually, type EventuallyOptions } from '../support/eventually';

/** kubectl calls against a real server take a while: look less often, for longer. */
const POLL: EventuallyOptions = { timeoutMs: 60_000, intervalMs: 250 };

let core: ServerProcess;
let grpcAddress: string;
const processes: ServerProcess[] = [];
let kubectl: (...args: string[]) => Promise<string>;

beforeAll(async () => {
  core = await startServerProcess([
    '--vendor',
    'kubernetes',
    '--grpc-port',
    '0',
    '--controllers=',
    '--simulated-nodes',
    '0',
    '--authorization-mode',
    'Node,RBAC',
  ]);
  grpcAddress = /serving the core over gRPC on (\S+)/.exec(core.output())![1]!;
  kubectl = kubectlFor(() => core);
});

afterAll(async () => {
  for (const p of processes) await p.stop().catch(() => undefined);
  await core?.stop();
});

async function startControllers(): Promise<ServerProcess> {
  const dir = core.dataDir;
  const p = await startServerProcess(
    [
      '--vendor',
      'kubernetes',
      '--controllers-only',
      '--core-address',
      grpcAddress,
      '--kubeconfig',
      path.join(dir, 'controller-manager.kubeconfig'),
      '--use-service-account-credentials',
      '--cluster-signing-cert-file',
      path.join(dir, 'ca.crt'),
      '--cluster-signing-key-file',
      path.join(dir, 'ca.key'),
    ],
    { noGateway: true },
  );
  processes.push(p);
  return p;
}

/** Wait (longer than one kubectl call may take) for a ReplicaSet status field to read `value`. */
async function waitStatus(name: string, field: string, value: number, ms = 120_000): Promise<void> {
  await eventually(async () => (await kubectl('get', `rs/${name}`, '-o', `jsonpath={.status.${field}}`)).trim() === String(value), {
    ...POLL,
    timeoutMs: ms,
  }).catch(async () => {
    throw new Error(`rs/${name} status.${field} did not reach ${value}: ${await kubectl('get', `rs/${name}`, '-o', 'jsonpath={.status}')}`);
  });
}

const podNames = async (app: string) => (await kubectl('get', 'pods', '-n', 'default', '-l', `app=${app}`, '-o', 'name')).split('\n').filter((l) => l.trim());

test('controllers in their own process act through the gRPC door under their own identities', async () => {
  const controllers = await startControllers();
  // The simulated node registers as system:node:keelson-node-0 (the Node authorizer lets it).
  await eventually(async () => /keelson-node-0\s+Ready/.test(await kubectl('get', 'nodes')), POLL);
  await eventually(async () => (await kubectl('get', 'configmap', '-n', 'default', 'kube-root-ca.crt', '-o', 'name')).includes('kube-root-ca.crt'), POLL);
  const holders = await kubectl('get', 'leases', '-n', 'kube-system', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.spec.holderIdentity}{"\\n"}{end}');
  expect(holders).toMatch(/^kube-controller-manager=\S+_[0-9a-f-]{36}$/m);
  expect(holders).toMatch(/^kube-scheduler=\S+_[0-9a-f-]{36}$/m);

  await createReplicaSet(kubectl, core.dataDir, 'remote', 0);
  await kubectl('scale', 'rs/remote', '--replicas=100');
  await waitStatus('remote', 'readyReplicas', 100);
  const status = JSON.parse(await kubectl('get', 'rs/remote', '-o', 'json')).status;
  expect(status).toMatchObject({ replicas: 100, fullyLabeledReplicas: 100, readyReplicas: 100, availableReplicas: 100, observedGeneration: 2 });
  expect(await podNames('remote')).toHaveLength(100);
  const running = await kubectl(
    'get',
    'pods',
    '-n',
    'default',
    '-l',
    'app=remote',
    '-o',
    'jsonpath={range .items[*]}{.status.phase} {.spec.nodeName}{"\\n"}{end}',
  );
  expect(new Set(running.trim().split('\n'))).toEqual(new Set(['Running keelson-node-0']));

  await kubectl('scale', 'rs/remote', '--replicas=10');
  await waitStatus('remote', 'replicas', 10);
  await eventually(async () => (await podNames('remote')).length === 10, POLL);
  await kubectl('scale', 'rs/remote', '--replicas=0');
  await waitStatus('remote', 'replicas', 0);
  await eventually(async () => (await podNames('remote')).length === 0, POLL);
  // Each controller that wrote did so as its service account, which the process's client builder created.
  const accounts = await kubectl('get', 'serviceaccounts', '-n', 'kube-system', '-o', 'name');
  for (const sa of ['replicaset-controller', 'service-account-controller', 'root-ca-cert-publisher']) {
    expect(accounts).toContain(`serviceaccount/${sa}`);
  }
  expect(controllers.output()).not.toMatch(/forbidden|Unauthorized/i);
  await controllers.stop();
}, 240_000);

test('csrsigning in the controllers process issues an approved request as certificate-controller, over the gRPC door', async () => {
  const controllers = await startControllers();
  const csr = await makeCsr('CN=remote-user, O=dev');
  const file = path.join(core.dataDir, 'remote-csr.yaml');
  await writeFile(
    file,
    [
      'apiVersion: certificates.k8s.io/v1',
      'kind: CertificateSigningRequest',
      'metadata:',
      '  name: remote-user',
      'spec:',
      `  request: ${csr.request}`,
      '  signerName: kubernetes.io/kube-apiserver-client',
      '  usages: [client auth]',
    ].join('\n'),
  );
  await kubectl('create', '-f', file);
  await kubectl('certificate', 'approve', 'remote-user');
  await eventually(async () => (await kubectl('get', 'csr', 'remote-user', '-o', 'jsonpath={.status.certificate}')).length > 0, POLL);
  const cert = new X509Certificate(Buffer.from(await kubectl('get', 'csr', 'remote-user', '-o', 'jsonpath={.status.certificate}'), 'base64').toString('utf8'));
  expect(cert.subject).toBe('CN=remote-user\nO=dev');
  expect(cert.checkIssued(new X509Certificate(await readFile(path.join(core.dataDir, 'ca.crt'))))).toBe(true);
  expect(controllers.output()).not.toMatch(/forbidden|Unauthorized|csrsigning: signing/i);
  await controllers.stop();
}, 120_000);

/** A GET to the controller manager's self-signed port (as `curl -k`), with a client certificate or a bearer token. */
function getInsecure(url: string, auth: { cert?: string; key?: string; token?: string } = {}): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      { rejectUnauthorized: false, cert: auth.cert, key: auth.key, agent: false, headers: auth.token ? { Authorization: `Bearer ${auth.token}` } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

test('the controllers process serves health to anyone and metrics to whom the core allows, on its secure port', async () => {
  const controllers = await startControllers();
  const base = /serving the controller manager's health and metrics on (https:\/\/\S+)/.exec(controllers.output())![1]!;
  expect(await getInsecure(`${base}/healthz`)).toMatchObject({ status: 200, body: 'ok' });
  expect((await getInsecure(`${base}/healthz?verbose`)).body).toBe('[+]ping ok\n[+]leaderElection ok\nhealthz check passed\n');
  expect(await getInsecure(`${base}/healthz/leaderElection`)).toMatchObject({ status: 200, body: 'ok' });
  expect(await getInsecure(`${base}/readyz`)).toMatchObject({ status: 200, body: 'ok' });
  // Anonymous: the core's SubjectAccessReview says no.
  const anonymous = await getInsecure(`${base}/metrics`);
  expect(anonymous.status).toBe(403);
  // The review's reason follows, as upstream's delegated authorizer appends it.
  expect(JSON.parse(anonymous.body)).toMatchObject({
    kind: 'Status',
    reason: 'Forbidden',
    code: 403,
    message: expect.stringMatching(/^forbidden: User "system:anonymous" cannot get path "\/metrics": RBAC: /),
  });
  // A token the core does not know: 401.
  const bogus = await getInsecure(`${base}/metrics`, { token: 'not-a-token' });
  expect(bogus.status).toBe(401);
  expect(JSON.parse(bogus.body)).toMatchObject({ reason: 'Unauthorized', code: 401 });
  // The admin's client certificate (signed by the cluster CA): allowed, Prometheus text.
  const metrics = await getInsecure(`${base}/metrics`, { cert: core.admin.cert, key: core.admin.key });
  expect(metrics.status).toBe(200);
  expect(metrics.type).toMatch(/^text\/plain/);
  expect(metrics.body).toMatch(/^process_cpu_user_seconds_total \d/m);
  // The node lifecycle controller's zone figures: the simulated node, in no zone, Ready.
  const zoneSize = async () => (await getInsecure(`${base}/metrics`, { cert: core.admin.cert, key: core.admin.key })).body;
  await eventually(async () => /^node_collector_zone_size\{zone=""\} 1$/m.test(await zoneSize()), POLL);
  expect(await zoneSize()).toMatch(/^node_collector_zone_health\{zone=""\} 100$/m);
  expect(await zoneSize()).toMatch(/^workqueue_adds_total\{name="node_lifecycle_controller"\} [1-9]/m);
  expect(await getInsecure(`${base}/nothing`)).toMatchObject({ status: 404, body: '404 page not found\n' });
  await controllers.stop();
}, 120_000);

test('two controller processes run one active set; the leader killed mid-scale is replaced with no extra pods', async () => {
  const first = await startControllers();
  await createReplicaSet(kubectl, core.dataDir, 'standby', 4);
  await waitStatus('standby', 'readyReplicas', 4);
  const second = await startControllers();
  // The second waits: its controllers would otherwise create as well. The pause is the point: two seconds in which nothing more may be created.
  await new Promise((r) => setTimeout(r, 2000));
  expect(await podNames('standby')).toHaveLength(4);

  await kubectl('scale', 'rs/standby', '--replicas=40');
  await eventually(async () => (await podNames('standby')).length > 4, { ...POLL, timeoutMs: 30_000 });
  await first.kill();
  // The standby takes over once the killed leader's Lease expires, and finishes the scale exactly.
  await waitStatus('standby', 'readyReplicas', 40);
  await new Promise((r) => setTimeout(r, 2000)); // the pause is the point: no extra pod may come after the scale finished
  expect(await podNames('standby')).toHaveLength(40);
  expect(second.output()).toMatch(/leader election kube-controller-manager: \S+ became leader/);
  expect(second.output()).not.toMatch(/forbidden|Unauthorized/i);
}, 240_000);
