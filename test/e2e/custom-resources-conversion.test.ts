/**
 * Several versions of a custom resource with a conversion webhook, from outside (issue 53): the
 * library serves a definition whose webhook is a real HTTPS server started here (loopback, its
 * own CA); kubectl 1.32 writes in v2 and reads in v1 (deprecated: the Warning is shown), and
 * @kubernetes/client-node lists in v2 with one webhook call per list.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as k8s from '@kubernetes/client-node';
import { startServer, type RunningServer } from '../../src/library';
import { type ConversionWebhook, startConversionWebhook } from '../support/conversion-webhook';
import { KUBECTL } from './support/kubectl';

const run = promisify(execFile);
const GROUP = 'conv.example.com';

let server: RunningServer;
let hook: ConversionWebhook;
let dir: string;

async function kubectl(...args: string[]): Promise<{ stdout: string; stderr: string }> {
  try {
    return await run(KUBECTL, ['--kubeconfig', server.kubeconfigPath, ...args], { timeout: 30_000 });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`kubectl ${args.join(' ')} failed: ${e.stderr ?? e.message}`);
  }
}

function crd() {
  const spec = (props: Record<string, unknown>) => ({
    openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: props } } },
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `widgets.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget' },
      conversion: { strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: hook.url, caBundle: hook.caBundle } } },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          deprecated: true,
          deprecationWarning: 'v1 widgets are going away',
          schema: spec({ color: { type: 'string' } }),
          additionalPrinterColumns: [{ name: 'Color', type: 'string', jsonPath: '.spec.color' }],
        },
        {
          name: 'v2',
          served: true,
          storage: false,
          schema: spec({ paint: { type: 'object', properties: { color: { type: 'string' } } } }),
          additionalPrinterColumns: [{ name: 'Paint', type: 'string', jsonPath: '.spec.paint.color' }],
        },
      ],
    },
  };
}

beforeAll(async () => {
  hook = await startConversionWebhook();
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-conv-'));
  await writeFile(path.join(dir, 'widgets.yaml'), JSON.stringify(crd()));
  server = await startServer({ simulatedNodes: 0, crds: [dir] });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await hook?.close();
  await rm(dir, { recursive: true, force: true });
});

test('kubectl writes in v2, the object is stored in v1, and reads in v1 carry the deprecation Warning', async () => {
  const file = path.join(dir, 'w.json');
  await writeFile(
    file,
    JSON.stringify({ apiVersion: `${GROUP}/v2`, kind: 'Widget', metadata: { name: 'w1', namespace: 'default' }, spec: { paint: { color: 'red' } } }),
  );
  await kubectl('create', '-f', file);
  const v1 = await kubectl('get', `widgets.v1.${GROUP}`, 'w1', '-n', 'default', '-o', 'json');
  expect(JSON.parse(v1.stdout)).toMatchObject({ apiVersion: `${GROUP}/v1`, spec: { color: 'red' } });
  expect(v1.stderr).toContain('Warning: v1 widgets are going away');
  const v2 = await kubectl('get', `widgets.v2.${GROUP}`, 'w1', '-n', 'default', '-o', 'json');
  expect(JSON.parse(v2.stdout)).toMatchObject({ apiVersion: `${GROUP}/v2`, spec: { paint: { color: 'red' } } });
  expect(v2.stderr).not.toContain('Warning');
  // v2's printer columns.
  const table = await kubectl('get', `widgets.v2.${GROUP}`, '-n', 'default');
  expect(table.stdout).toMatch(/NAME\s+PAINT/);
  expect(table.stdout).toMatch(/w1\s+red/);
});

test('client-node lists in v2 through one webhook call', async () => {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(server.kubeconfig);
  const api = kc.makeApiClient(k8s.CustomObjectsApi);
  for (let i = 0; i < 10; i++) {
    await api.createNamespacedCustomObject({
      group: GROUP,
      version: 'v1',
      namespace: 'default',
      plural: 'widgets',
      body: { apiVersion: `${GROUP}/v1`, kind: 'Widget', metadata: { name: `l${i}` }, spec: { color: 'blue' } },
    });
  }
  hook.received.length = 0;
  const list = (await api.listNamespacedCustomObject({ group: GROUP, version: 'v2', namespace: 'default', plural: 'widgets' })) as {
    items: { apiVersion: string; spec: { paint?: { color: string } } }[];
  };
  expect(list.items).toHaveLength(11);
  expect(list.items.every((i) => i.apiVersion === `${GROUP}/v2` && i.spec.paint !== undefined)).toBe(true);
  expect(hook.received).toHaveLength(1);
  expect(hook.received[0]!.request.objects).toHaveLength(10);
  const crdNow = JSON.parse((await kubectl('get', 'crd', `widgets.${GROUP}`, '-o', 'json')).stdout);
  expect(crdNow.status.storedVersions).toEqual(['v1']);
});
