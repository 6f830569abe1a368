/**
 * Services from outside (issue 55): a server process on a real etcd, listening on a port chosen
 * at start (`--secure-port 0`), driven by unmodified kubectl 1.32. kubectl's service creates and
 * `expose`, `get svc` (and `-o wide`) with upstream's columns, a requested cluster IP that is
 * taken refused as upstream words it; the `kubernetes` Service targeting the port listened on
 * and its Endpoints; and webhooks configured with `service` references to ExternalName Services
 * naming the host (docs/SERVICES.md): an admission webhook denying and mutating, a conversion
 * webhook serving a custom resource in two versions, each a real HTTPS server started here with
 * a certificate for `<service>.<namespace>.svc`; a reference to a missing Service fails or is
 * ignored as its failure policy says, with upstream's message.
 */
import { execFile } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import tls from 'node:tls';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { ServerProcess } from '../gateway/support/server-process';
import { API_ONLY } from '../gateway/support/server-process';
import { startServerOnBackend } from './support/backend';
import { KUBECTL, kubectlFor, kubectlRows } from './support/kubectl';
import { allow, deny, startWebhook, type TestWebhook } from '../core/admission/webhook-server';
import { type ConversionWebhook, startConversionWebhook } from '../support/conversion-webhook';
import { eventually } from '../support/eventually';
import { startServer } from '../../src/library';

const run = promisify(execFile);
const GROUP = 'svcconv.example.com';

let server: ServerProcess;
let dir: string;
const kubectl = kubectlFor(() => server);

/** kubectl's failure output (stderr), for commands expected to fail. */
async function kubectlFails(...args: string[]): Promise<string> {
  try {
    await run(KUBECTL, ['--kubeconfig', server.kubeconfig, ...args], { timeout: 30_000 });
  } catch (err) {
    return (err as { stderr: string }).stderr.trim();
  }
  throw new Error(`kubectl ${args.join(' ')} succeeded`);
}

/** `kubectl apply -f` of objects written to a file. */
async function apply(name: string, ...objects: unknown[]): Promise<string> {
  const file = path.join(dir, `${name}.json`);
  await writeFile(file, JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }));
  return kubectl('apply', '-f', file);
}

const externalName = (namespace: string, name: string, host: string) => ({
  apiVersion: 'v1',
  kind: 'Service',
  metadata: { name, namespace },
  spec: { type: 'ExternalName', externalName: host },
});

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-svc-e2e-'));
  server = await startServerOnBackend('etcd', ['--vendor', 'kubernetes', ...API_ONLY, '--advertise-address', '10.1.2.3']);
}, 120_000);

afterAll(async () => {
  await server?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the kubernetes Service of a server whose port was chosen at start', () => {
  it('is named by the generated serving certificate (its DNS names, its cluster IP, the advertised address), so references to it verify', async () => {
    const ca = await readFile(path.join(server.dataDir, 'ca.crt'), 'utf8');
    const cert = new X509Certificate(await readFile(path.join(server.dataDir, 'serving.crt'), 'utf8'));
    for (const name of ['kubernetes.default.svc', 'kubernetes.default', 'kubernetes']) expect(cert.checkHost(name)).toBe(name);
    for (const ip of ['10.0.0.1', '10.1.2.3']) expect(cert.checkIP(ip)).toBe(ip);
    // A TLS client verifying the name a service reference to default/kubernetes is verified for.
    const authorized = await new Promise<boolean>((resolve, reject) => {
      const socket = tls.connect({ host: '127.0.0.1', port: server.port, servername: 'kubernetes.default.svc', ca }, () => {
        resolve(socket.authorized);
        socket.end();
      });
      socket.on('error', reject);
    });
    expect(authorized).toBe(true);
  });

  it("targets the port listened on, at the range's first address, and its Endpoints list the advertised address on it", async () => {
    const out = kubectlRows(await kubectl('get', 'svc', 'kubernetes', '-n', 'default', '-o', 'wide'));
    expect(out).toEqual([
      'NAME | TYPE | CLUSTER-IP | EXTERNAL-IP | PORT(S) | AGE | SELECTOR',
      'kubernetes | ClusterIP | 10.0.0.1 | <none> | 443/TCP | <age> | <none>',
    ]);
    expect(await kubectl('get', 'svc', 'kubernetes', '-n', 'default', '-o', 'jsonpath={.spec.ports[0].targetPort}')).toBe(String(server.port));
    const endpoints = await eventually(async () => {
      const text = await kubectl('get', 'endpoints', 'kubernetes', '-n', 'default', '-o', 'jsonpath={.subsets[*].addresses[*].ip}:{.subsets[*].ports[*].port}');
      return text !== ':' && text;
    });
    expect(endpoints).toBe(`10.1.2.3:${server.port}`);
  });
});

describe("a library server's kubernetes Service", () => {
  it('targets the port the library listened on (port 0 at start)', async () => {
    const lib = await startServer({ controllers: [], simulatedNodes: 0 });
    try {
      const port = new URL(lib.url).port;
      const out = await run(KUBECTL, [
        '--kubeconfig',
        lib.kubeconfigPath,
        'get',
        'svc',
        'kubernetes',
        '-n',
        'default',
        '-o',
        'jsonpath={.spec.clusterIP} {.spec.ports[0].port} {.spec.ports[0].targetPort}',
      ]);
      expect(out.stdout).toBe(`10.0.0.1 443 ${port}`);
    } finally {
      await lib.stop();
    }
  });
});

describe('kubectl creates and lists Services', () => {
  beforeAll(async () => {
    await kubectl('create', 'namespace', 'svc');
  });

  it("creates each type with kubectl create service and expose, and lists them with upstream's columns", async () => {
    await kubectl('create', 'service', 'clusterip', 'web', '-n', 'svc', '--tcp=80:8080', '--clusterip=10.0.0.50');
    await kubectl('create', 'service', 'clusterip', 'headless', '-n', 'svc', '--clusterip=None');
    await kubectl('create', 'service', 'nodeport', 'np', '-n', 'svc', '--tcp=80:8080', '--node-port=30080');
    await kubectl('create', 'service', 'externalname', 'ext', '-n', 'svc', '--external-name=example.com');
    await apply('rs', {
      apiVersion: 'apps/v1',
      kind: 'ReplicaSet',
      metadata: { name: 'api', namespace: 'svc' },
      spec: {
        replicas: 0,
        selector: { matchLabels: { app: 'api' } },
        template: { metadata: { labels: { app: 'api' } }, spec: { containers: [{ name: 'api', image: 'api:1', ports: [{ containerPort: 9000 }] }] } },
      },
    });
    expect((await kubectl('expose', 'replicaset', 'api', '-n', 'svc', '--port=90', '--target-port=9000')).trim()).toBe('service/api exposed');

    const ip = (name: string) => kubectl('get', 'svc', name, '-n', 'svc', '-o', 'jsonpath={.spec.clusterIP}');
    const apiIP = await ip('api');
    // Dynamic picks come from the range, never its first address (the kubernetes Service's).
    expect(apiIP).toMatch(/^10\.0\.0\.\d+$/);
    expect(apiIP).not.toBe('10.0.0.1');
    const npIP = await ip('np');
    expect(kubectlRows(await kubectl('get', 'svc', '-n', 'svc'))).toEqual([
      'NAME | TYPE | CLUSTER-IP | EXTERNAL-IP | PORT(S) | AGE',
      `api | ClusterIP | ${apiIP} | <none> | 90/TCP | <age>`,
      'ext | ExternalName | <none> | example.com | <none> | <age>',
      'headless | ClusterIP | None | <none> | <none> | <age>',
      `np | NodePort | ${npIP} | <none> | 80:30080/TCP | <age>`,
      'web | ClusterIP | 10.0.0.50 | <none> | 80/TCP | <age>',
    ]);
    expect(kubectlRows(await kubectl('get', 'svc', '-n', 'svc', '-o', 'wide'))).toEqual([
      'NAME | TYPE | CLUSTER-IP | EXTERNAL-IP | PORT(S) | AGE | SELECTOR',
      `api | ClusterIP | ${apiIP} | <none> | 90/TCP | <age> | app=api`,
      // kubectl create service gives every type the selector app=<name>.
      'ext | ExternalName | <none> | example.com | <none> | <age> | app=ext',
      'headless | ClusterIP | None | <none> | <none> | <age> | app=headless',
      `np | NodePort | ${npIP} | <none> | 80:30080/TCP | <age> | app=np`,
      'web | ClusterIP | 10.0.0.50 | <none> | 80/TCP | <age> | app=web',
    ]);
    // kubectl create service names the port <port>-<targetPort>; expose takes the template's protocol.
    expect(await kubectl('get', 'svc', 'web', '-n', 'svc', '-o', 'jsonpath={.spec.ports[0].name} {.spec.ports[0].targetPort} {.spec.selector.app}')).toBe(
      '80-8080 8080 web',
    );
    expect(await kubectl('get', 'svc', 'api', '-n', 'svc', '-o', 'jsonpath={.spec.ports[0].protocol} {.spec.ports[0].targetPort}')).toBe('TCP 9000');
  });

  it('refuses a requested cluster IP that is taken, or outside the range, as kubectl prints it', async () => {
    expect(await kubectlFails('create', 'service', 'clusterip', 'again', '-n', 'svc', '--tcp=80', '--clusterip=10.0.0.50')).toBe(
      'error: failed to create ClusterIP service: Service "again" is invalid: spec.clusterIPs: Invalid value: []string{"10.0.0.50"}: failed to allocate IP 10.0.0.50: provided IP is already allocated',
    );
    expect(await kubectlFails('create', 'service', 'clusterip', 'outside', '-n', 'svc', '--tcp=80', '--clusterip=10.9.0.1')).toBe(
      'error: failed to create ClusterIP service: Service "outside" is invalid: spec.clusterIPs: Invalid value: []string{"10.9.0.1"}: failed to allocate IP 10.9.0.1: the provided IP (10.9.0.1) is not in the valid range. The range of valid IPs is 10.0.0.0/24',
    );
    expect(await kubectlFails('create', 'service', 'nodeport', 'np2', '-n', 'svc', '--tcp=80', '--node-port=30080')).toBe(
      'error: failed to create NodePort service: Service "np2" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated',
    );
  });
});

describe('webhooks reached through service references to ExternalName Services', () => {
  let admission: TestWebhook;
  let conversion: ConversionWebhook;

  beforeAll(async () => {
    admission = await startWebhook({ serverNames: ['hook.hooks.svc'] });
    conversion = await startConversionWebhook({ serverNames: ['convert.hooks.svc'] });
    await kubectl('create', 'namespace', 'hooks');
    await kubectl('create', 'namespace', 'hooked');
    await kubectl('label', 'namespace', 'hooked', 'hooked=yes');
    // Go's dialer takes a name (localhost, from the hosts file) or an IP literal: both are valid DNS-1123 subdomains.
    await apply('services', externalName('hooks', 'hook', 'localhost'), externalName('hooks', 'convert', '127.0.0.1'));
  }, 60_000);

  afterAll(async () => {
    await admission?.close();
    await conversion?.close();
  });

  it('an admission webhook denies and mutates through its Service', async () => {
    admission.handle('/validate', (r) => (String(r.review.request.name).startsWith('bad') ? deny({ code: 403, message: 'no bad names here' }) : allow()));
    admission.handle('/mutate', () => allow([{ op: 'add', path: '/metadata/labels', value: { mutated: 'through-service' } }]));
    const clientConfig = (p: string) => ({ service: { namespace: 'hooks', name: 'hook', port: admission.port, path: p }, caBundle: admission.caBundle });
    const hook = (name: string, p: string) => ({
      name,
      clientConfig: clientConfig(p),
      rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
      namespaceSelector: { matchLabels: { hooked: 'yes' } },
      objectSelector: { matchExpressions: [{ key: 'probe', operator: 'DoesNotExist' }] },
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      failurePolicy: 'Fail',
    });
    await apply(
      'admission',
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'svc-validate' },
        webhooks: [hook('deny.svc.test', '/validate')],
      },
      {
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'MutatingWebhookConfiguration',
        metadata: { name: 'svc-mutate' },
        webhooks: [hook('label.svc.test', '/mutate')],
      },
    );
    const denied = await eventually(async () => {
      const err = await kubectlFails('create', 'configmap', 'bad-one', '-n', 'hooked');
      return err.includes('denied') && err;
    });
    expect(denied).toBe('error: failed to create configmap: admission webhook "deny.svc.test" denied the request: no bad names here');
    await kubectl('create', 'configmap', 'good-one', '-n', 'hooked', '--from-literal=k=v');
    expect(await kubectl('get', 'configmap', 'good-one', '-n', 'hooked', '-o', 'jsonpath={.metadata.labels.mutated}')).toBe('through-service');
    // The calls named the Service's host and carried the timeout, as client-go sends them.
    expect(admission.on('/validate').at(-1)).toMatchObject({ timeout: '10s', review: { request: { name: 'good-one', namespace: 'hooked' } } });
    expect(admission.on('/mutate').length).toBeGreaterThan(0);
  });

  it("applies the failure policy when the Service is missing, with upstream's message", async () => {
    const missing = (name: string, probe: string, failurePolicy: string) => ({
      name,
      clientConfig: { service: { namespace: 'hooks', name: 'missing', path: '/validate' }, caBundle: admission.caBundle },
      rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['configmaps'] }],
      namespaceSelector: { matchLabels: { hooked: 'yes' } },
      objectSelector: { matchLabels: { probe } },
      sideEffects: 'None',
      admissionReviewVersions: ['v1'],
      failurePolicy,
    });
    await apply('missing', {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: 'svc-missing' },
      webhooks: [missing('fail.missing.test', 'fail', 'Fail'), missing('ignore.missing.test', 'ignore', 'Ignore')],
    });
    const cm = async (name: string, probe: string) => {
      const file = path.join(dir, `${name}.json`);
      await writeFile(file, JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'hooked', labels: { probe } } }));
      return file;
    };
    const failing = await cm('probe-fail', 'fail');
    const refused = await eventually(async () => {
      const err = await kubectlFails('create', '-f', failing);
      return err.includes('missing') && err;
    });
    expect(refused).toBe(
      `Error from server (InternalError): error when creating "${failing}": Internal error occurred: failed calling webhook "fail.missing.test": failed to call webhook: Post "https://missing.hooks.svc:443/validate?timeout=10s": service "missing" not found`,
    );
    expect((await kubectl('create', '-f', await cm('probe-ignore', 'ignore'))).trim()).toBe('configmap/probe-ignore created');
  });

  it('a conversion webhook serves a custom resource in both versions through its Service', async () => {
    const schema = (props: Record<string, unknown>) => ({
      openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: props } } },
    });
    await apply('crd', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `widgets.${GROUP}` },
      spec: {
        group: GROUP,
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
        conversion: {
          strategy: 'Webhook',
          webhook: {
            conversionReviewVersions: ['v1'],
            clientConfig: { service: { namespace: 'hooks', name: 'convert', port: conversion.port, path: '/convert' }, caBundle: conversion.caBundle },
          },
        },
        versions: [
          { name: 'v1', served: true, storage: true, schema: schema({ color: { type: 'string' } }) },
          { name: 'v2', served: true, storage: false, schema: schema({ paint: { type: 'object', properties: { color: { type: 'string' } } } }) },
        ],
      },
    });
    await kubectl('wait', '--for=condition=Established', `crd/widgets.${GROUP}`, '--timeout=30s');
    await eventually(async () => (await kubectl('api-resources', `--api-group=${GROUP}`)).includes('widgets'));
    await apply('widget', { apiVersion: `${GROUP}/v2`, kind: 'Widget', metadata: { name: 'w1', namespace: 'hooked' }, spec: { paint: { color: 'teal' } } });
    expect(await kubectl('get', `widgets.v1.${GROUP}`, 'w1', '-n', 'hooked', '-o', 'jsonpath={.apiVersion} {.spec.color}')).toBe(`${GROUP}/v1 teal`);
    expect(await kubectl('get', `widgets.v2.${GROUP}`, 'w1', '-n', 'hooked', '-o', 'jsonpath={.apiVersion} {.spec.paint.color}')).toBe(`${GROUP}/v2 teal`);
    // The v2 write was stored as v1 and the v2 read converted back: both by the webhook.
    const desired = conversion.received.map((r) => r.request.desiredAPIVersion);
    expect(desired).toContain(`${GROUP}/v1`);
    expect(desired).toContain(`${GROUP}/v2`);
  });
});
