/**
 * Admission end to end: the real server process calls a real HTTPS webhook over mutual TLS
 * (client certificate from `--admission-control-config-file`), unmodified kubectl 1.32 shows
 * webhook and policy refusals and warnings in upstream's shapes, and a gateway in front of the
 * core over gRPC admits exactly as the core's own HTTPS door does.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startServerProcess, API_ONLY, type ServerProcess } from '../gateway/support/server-process';
import { KUBECTL } from './support/kubectl';
import { deny, startWebhook, type TestWebhook } from '../core/admission/webhook-server';
import { eventually, type EventuallyOptions } from '../support/eventually';

/** kubectl calls against a real server take a while: look less often, for longer. */
const POLL: EventuallyOptions = { timeoutMs: 15_000, intervalMs: 100 };

const _run = promisify(execFile);

let dir: string;
let hook: TestWebhook;
let core: ServerProcess;
let gateway: ServerProcess;

async function kubectl(server: ServerProcess, args: string[], input?: string): Promise<{ stdout: string; stderr: string; code: number }> {
  return new Promise((resolve) => {
    const child = execFile(KUBECTL, ['--kubeconfig', server.kubeconfig, ...args], { timeout: 30_000 }, (err, stdout, stderr) => {
      resolve({ stdout, stderr, code: err ? ((err as { code?: number }).code ?? 1) : 0 });
    });
    if (input !== undefined) child.stdin!.end(input);
  });
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-admission-e2e-'));
  hook = await startWebhook({ requireClientCert: true });
  const client = await hook.pki.issueClient('CN=keelson-apiserver');
  await writeFile(path.join(dir, 'webhook-client.crt'), client.cert);
  await writeFile(path.join(dir, 'webhook-client.key'), client.key);
  await writeFile(
    path.join(dir, 'webhook.kubeconfig'),
    [
      'apiVersion: v1',
      'kind: Config',
      'users:',
      '- name: 127.0.0.1',
      '  user:',
      '    client-certificate: webhook-client.crt',
      '    client-key: webhook-client.key',
      '',
    ].join('\n'),
  );
  await writeFile(
    path.join(dir, 'admission.yaml'),
    [
      'apiVersion: apiserver.config.k8s.io/v1',
      'kind: AdmissionConfiguration',
      'plugins:',
      '- name: ValidatingAdmissionWebhook',
      '  configuration:',
      '    apiVersion: apiserver.config.k8s.io/v1',
      '    kind: WebhookAdmissionConfiguration',
      '    kubeConfigFile: webhook.kubeconfig',
      '- name: MutatingAdmissionWebhook',
      '  configuration:',
      '    apiVersion: apiserver.config.k8s.io/v1',
      '    kind: WebhookAdmissionConfiguration',
      '    kubeConfigFile: webhook.kubeconfig',
      '',
    ].join('\n'),
  );
  core = await startServerProcess([
    '--vendor',
    'kubernetes',
    ...API_ONLY,
    '--grpc-port',
    '0',
    '--admission-control-config-file',
    path.join(dir, 'admission.yaml'),
  ]);
  const grpcAddress = /serving the core over gRPC on (\S+)/.exec(core.output())![1]!;
  gateway = await startServerProcess(['--vendor', 'kubernetes', '--core-address', grpcAddress], { dataDir: core.dataDir });
});

afterAll(async () => {
  await gateway?.stop();
  await core?.stop();
  await hook?.close();
  await rm(dir, { recursive: true, force: true });
});

test('kubectl shows a webhook refusal; the webhook was called over mutual TLS; nothing is stored', async () => {
  hook.handle('/configmaps', (r) =>
    r.review.request.object?.metadata?.name?.startsWith('blocked')
      ? deny({ code: 403, reason: 'Forbidden', message: 'blocked configmaps are not allowed' })
      : { response: { allowed: true, warnings: ['checked by the webhook'] } },
  );
  const config = [
    'apiVersion: admissionregistration.k8s.io/v1',
    'kind: ValidatingWebhookConfiguration',
    'metadata:',
    '  name: configmap-guard',
    'webhooks:',
    '- name: guard.example.com',
    '  clientConfig:',
    `    url: ${hook.url('/configmaps')}`,
    `    caBundle: ${hook.caBundle}`,
    '  rules:',
    '  - operations: ["CREATE"]',
    '    apiGroups: [""]',
    '    apiVersions: ["v1"]',
    '    resources: ["configmaps"]',
    '  sideEffects: None',
    '  admissionReviewVersions: ["v1"]',
    '  namespaceSelector:',
    '    matchLabels:',
    '      kubernetes.io/metadata.name: default',
    '',
  ].join('\n');
  expect((await kubectl(core, ['apply', '-f', '-'], config)).stdout).toBe(
    'validatingwebhookconfiguration.admissionregistration.k8s.io/configmap-guard created\n',
  );
  await eventually(async () => (await kubectl(core, ['create', 'configmap', `blocked-probe-${Date.now()}`, '--dry-run=server'])).code !== 0, POLL);

  const refused = await kubectl(core, ['create', 'configmap', 'blocked-one', '--from-literal=a=b']);
  expect(refused.code).toBe(1);
  expect(refused.stderr).toBe(
    'error: failed to create configmap: admission webhook "guard.example.com" denied the request: blocked configmaps are not allowed\n',
  );
  const manifest = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: blocked-two\ndata:\n  a: b\n';
  const applied = await kubectl(core, ['apply', '-f', '-'], manifest);
  expect(applied.stderr).toContain(
    'Error from server (Forbidden): error when creating "STDIN": admission webhook "guard.example.com" denied the request: blocked configmaps are not allowed',
  );
  expect((await kubectl(core, ['get', 'configmap', 'blocked-one'])).stderr).toContain('NotFound');

  const allowed = await kubectl(core, ['create', 'configmap', 'fine', '--from-literal=a=b']);
  expect(allowed.stdout).toBe('configmap/fine created\n');
  expect(allowed.stderr).toBe('Warning: checked by the webhook\n');
  const calls = hook.on('/configmaps');
  expect(calls.length).toBeGreaterThan(0);
  expect(calls.every((c) => c.clientCn === 'keelson-apiserver')).toBe(true);
});

/** A ValidatingAdmissionPolicy on ReplicaSet creates and updates, `spec` lines after its match constraints, and its Deny binding `<name>-binding`. */
function replicaSetPolicy(name: string, spec: string[]): string {
  return [
    'apiVersion: admissionregistration.k8s.io/v1',
    'kind: ValidatingAdmissionPolicy',
    'metadata:',
    `  name: ${name}`,
    'spec:',
    '  matchConstraints:',
    '    resourceRules:',
    '    - apiGroups: ["apps"]',
    '      apiVersions: ["v1"]',
    '      operations: ["CREATE", "UPDATE"]',
    '      resources: ["replicasets"]',
    ...spec,
    '---',
    'apiVersion: admissionregistration.k8s.io/v1',
    'kind: ValidatingAdmissionPolicyBinding',
    'metadata:',
    `  name: ${name}-binding`,
    'spec:',
    `  policyName: ${name}`,
    '  validationActions: ["Deny"]',
    '',
  ].join('\n');
}

test("kubectl shows a ValidatingAdmissionPolicy refusal (422 by default) in upstream's shape", async () => {
  const docs = replicaSetPolicy('small-replicasets', [
    '  failurePolicy: Fail',
    '  validations:',
    '  - expression: "object.spec.replicas <= 5"',
    '    messageExpression: "\'replicas must be at most 5, not \' + string(object.spec.replicas)"',
  ]);
  const out = await kubectl(core, ['apply', '-f', '-'], docs);
  expect(out.stdout).toBe(
    'validatingadmissionpolicy.admissionregistration.k8s.io/small-replicasets created\nvalidatingadmissionpolicybinding.admissionregistration.k8s.io/small-replicasets-binding created\n',
  );
  const rs = (name: string, replicas: number) =>
    `apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: ${name}\nspec:\n  replicas: ${replicas}\n  selector:\n    matchLabels:\n      app: ${name}\n  template:\n    metadata:\n      labels:\n        app: ${name}\n    spec:\n      containers:\n      - name: c\n        image: nginx\n`;
  await eventually(async () => (await kubectl(core, ['apply', '--dry-run=server', '-f', '-'], rs('probe', 9))).code !== 0, POLL);
  const refused = await kubectl(core, ['apply', '-f', '-'], rs('big', 9));
  expect(refused.stderr).toContain(
    "The replicasets \"big\" is invalid: : ValidatingAdmissionPolicy 'small-replicasets' with binding 'small-replicasets-binding' denied request: replicas must be at most 5, not 9",
  );
  expect((await kubectl(core, ['apply', '-f', '-'], rs('small', 2))).stdout).toBe('replicaset.apps/small created\n');
});

test("a policy comparing container memory limits with CEL's quantity library, through kubectl", async () => {
  const docs = replicaSetPolicy('memory-limits', [
    '  validations:',
    "  - expression: \"object.spec.template.spec.containers.all(c, !has(c.resources) || !has(c.resources.limits) || !('memory' in c.resources.limits) || quantity(c.resources.limits.memory).compareTo(quantity('1Gi')) <= 0)\"",
    '    message: containers may ask for at most 1Gi of memory',
  ]);
  expect((await kubectl(core, ['apply', '-f', '-'], docs)).code).toBe(0);
  const rs = (name: string, memory: string) =>
    `apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: ${name}\nspec:\n  replicas: 1\n  selector:\n    matchLabels:\n      app: ${name}\n  template:\n    metadata:\n      labels:\n        app: ${name}\n    spec:\n      containers:\n      - name: c\n        image: nginx\n        resources:\n          limits:\n            memory: ${memory}\n`;
  await eventually(async () => (await kubectl(core, ['apply', '--dry-run=server', '-f', '-'], rs('probe-memory', '2Gi'))).code !== 0, POLL);
  const refused = await kubectl(core, ['apply', '-f', '-'], rs('hungry', '1025Mi'));
  expect(refused.stderr).toContain(
    "ValidatingAdmissionPolicy 'memory-limits' with binding 'memory-limits-binding' denied request: containers may ask for at most 1Gi of memory",
  );
  expect((await kubectl(core, ['apply', '-f', '-'], rs('modest', '1024Mi'))).stdout).toBe('replicaset.apps/modest created\n');
});

test('through a gateway in front of the core over gRPC, the same chain answers the same way', async () => {
  const refused = await kubectl(gateway, ['create', 'configmap', 'blocked-via-gateway', '--from-literal=a=b']);
  expect(refused.stderr).toBe(
    'error: failed to create configmap: admission webhook "guard.example.com" denied the request: blocked configmaps are not allowed\n',
  );
  const allowed = await kubectl(gateway, ['create', 'configmap', 'fine-via-gateway', '--from-literal=a=b']);
  expect(allowed.stdout).toBe('configmap/fine-via-gateway created\n');
  expect(allowed.stderr).toBe('Warning: checked by the webhook\n');
  const rs =
    'apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: big-via-gateway\nspec:\n  replicas: 7\n  selector:\n    matchLabels:\n      app: g\n  template:\n    metadata:\n      labels:\n        app: g\n    spec:\n      containers:\n      - name: c\n        image: nginx\n';
  const policy = await kubectl(gateway, ['apply', '-f', '-'], rs);
  expect(policy.stderr).toContain(
    "ValidatingAdmissionPolicy 'small-replicasets' with binding 'small-replicasets-binding' denied request: replicas must be at most 5, not 7",
  );
});
