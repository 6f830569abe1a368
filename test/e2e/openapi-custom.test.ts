/**
 * Custom resources in OpenAPI end to end, with unmodified kubectl 1.32 against a server started
 * by the library (kubernetes profile: kubectl looks for upstream's extension names): `kubectl
 * explain` of a CustomResourceDefinition's kind from the v3 document and from the v2 protobuf
 * document, the schema's descriptions shown; a changed definition explained anew as soon as it
 * is served (a new hash in the v3 index, so kubectl's cache by hash misses); kubectl's field
 * validation finding the custom kind's operations.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { type RunningServer, startServer } from '../../src/library';
import { httpsRequest } from '../gateway/support/https-client';
import { KUBECTL } from './support/kubectl';

const run = promisify(execFile);

function widgetCrd(description: string, extraField?: string) {
  const spec: Record<string, unknown> = {
    size: { type: 'integer', description: 'How many parts the widget has.', minimum: 1 },
    color: { type: 'string', description: 'The colour of the widget.', enum: ['red', 'blue'] },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    port: { 'x-kubernetes-int-or-string': true, description: 'A port, by number or name.' },
    extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
  };
  if (extraField) spec[extraField] = { type: 'string', description: `The ${extraField} of the widget.` };
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.tools.example.com' },
    spec: {
      group: 'tools.example.com',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd'] },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description,
              properties: {
                spec: { type: 'object', description: 'What the widget should be.', properties: spec },
                status: { type: 'object', properties: { ready: { type: 'boolean' } } },
              },
            },
          },
          subresources: { status: {} },
        },
      ],
    },
  };
}

let server: RunningServer;
let dir: string;

/** kubectl with a cache of its own (discovery and OpenAPI are cached by kubectl on disk). */
async function kubectl(...args: string[]): Promise<string> {
  const cache = await mkdtemp(path.join(dir, 'cache-'));
  try {
    return (await run(KUBECTL, ['--kubeconfig', server.kubeconfigPath, '--cache-dir', cache, ...args], { timeout: 30_000 })).stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`kubectl ${args.join(' ')} failed: ${e.stderr ?? e.message}`);
  }
}

function get(urlPath: string, headers: Record<string, string> = {}) {
  return httpsRequest(new URL(urlPath, server.url).toString(), { ca: server.ca, ...server.adminCredentials }, { headers });
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-openapi-crd-'));
  server = await startServer({ simulatedNodes: 0, crds: [widgetCrd('A Widget is made of parts.')] });
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await rm(dir, { recursive: true, force: true });
});

test("kubectl explain shows the kind's schema and its descriptions from the v3 document", async () => {
  const out = await kubectl('explain', 'widgets');
  expect(out).toMatch(/^GROUP:\s+tools\.example\.com\nKIND:\s+Widget\nVERSION:\s+v1\n/);
  expect(out).toContain('A Widget is made of parts.');
  expect(out).toMatch(/\n {2}apiVersion\t<string>\n/);
  expect(out).toMatch(/\n {2}metadata\t<ObjectMeta>\n/);
  expect(out).toMatch(/\n {2}spec\t<Object>\n {4}What the widget should be\.\n/);
  const spec = await kubectl('explain', 'widgets.spec');
  expect(spec).toMatch(/FIELD: spec <Object>/);
  expect(spec).toMatch(/\n {2}size\t<integer>\n {4}How many parts the widget has\.\n/);
  expect(spec).toMatch(/\n {2}color\t<string>\n {2}enum: red, blue\n {4}The colour of the widget\.\n/);
  expect(spec).toMatch(/\n {2}labels\t<map\[string\]string>\n/);
  const meta = await kubectl('explain', 'widget.metadata.name');
  expect(meta).toMatch(/FIELD: name <string>/);
});

test('kubectl explain reads the v2 protobuf document too', async () => {
  const out = await kubectl('explain', 'widgets.spec', '--output=plaintext-openapiv2');
  expect(out).toMatch(/KIND:\s+Widget\nVERSION:\s+tools\.example\.com\/v1/);
  expect(out).toContain('What the widget should be.');
  expect(out).toMatch(/\n {3}size\t<integer>\n {5}How many parts the widget has\./);
});

test('kubectl validates fields through the server: an unknown field is refused, a known one created', async () => {
  const file = path.join(dir, 'widget.yaml');
  await writeFile(file, 'apiVersion: tools.example.com/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: default\nspec:\n  size: 2\n  bogus: 1\n');
  await expect(kubectl('create', '-f', file)).rejects.toThrow(/unknown field "spec.bogus"/);
  await writeFile(file, 'apiVersion: tools.example.com/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: default\nspec:\n  size: 2\n  color: red\n');
  expect(await kubectl('apply', '-f', file)).toBe('widget.tools.example.com/w1 created\n');
});

test('a changed definition is in the documents as soon as it is served: a new hash, and kubectl explains the new schema', async () => {
  const before = JSON.parse((await get('/openapi/v3')).body).paths['apis/tools.example.com/v1'].serverRelativeURL as string;
  const v2Before = (await get('/openapi/v2')).headers.etag;
  await server.installCRDs([widgetCrd('A Widget, changed.', 'shape')]);
  // Served: the documents answer with the change on the very next request.
  const after = JSON.parse((await get('/openapi/v3')).body).paths['apis/tools.example.com/v1'].serverRelativeURL as string;
  expect(after).not.toBe(before);
  expect((await get(before)).status).toBe(301);
  const doc = JSON.parse((await get(after)).body);
  expect(doc.components.schemas['com.example.tools.v1.Widget'].description).toBe('A Widget, changed.');
  expect((await get('/openapi/v2')).headers.etag).not.toBe(v2Before);
  const out = await kubectl('explain', 'widgets.spec.shape');
  expect(out).toMatch(/FIELD: shape <string>/);
  expect(out).toContain('The shape of the widget.');
});
