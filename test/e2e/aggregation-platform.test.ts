/**
 * The aggregation layer in the `platform` naming profile (issue 55): the APIService group is
 * `apiregistration.platform.io`, kubectl registers the extension server of
 * test/support/extension-apiserver.ts through it, lists it Available, and requests for the
 * extension's group version (which no profile renames) are proxied with the caller's identity.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startServer, type RunningServer } from '../../src/library';
import { type ExtensionServer, FRONT_PROXY_CLIENT, startExtensionServer, WARDLE_GROUP, WARDLE_VERSION } from '../support/extension-apiserver';
import { eventually } from '../support/eventually';
import { KUBECTL } from './support/kubectl';

const run = promisify(execFile);
const GV = `${WARDLE_GROUP}/${WARDLE_VERSION}`;
const API_SERVICE = `${WARDLE_VERSION}.${WARDLE_GROUP}`;

let server: RunningServer;
let ext: ExtensionServer;
let dir: string;

async function kubectl(...args: string[]): Promise<string> {
  try {
    return (await run(KUBECTL, ['--kubeconfig', server.kubeconfigPath, ...args], { timeout: 30_000 })).stdout;
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`kubectl ${args.join(' ')} failed: ${e.stderr ?? e.message}`);
  }
}

beforeAll(async () => {
  ext = await startExtensionServer({ name: 'api', namespace: 'wardle' });
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-aggregation-platform-'));
  server = await startServer({ vendor: 'platform', controllers: [], simulatedNodes: 0, proxyClient: ext.proxyClient });
  const manifests = path.join(dir, 'wardle.json');
  await writeFile(
    manifests,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'wardle' } },
        { apiVersion: 'v1', kind: 'Service', metadata: { name: 'api', namespace: 'wardle' }, spec: { type: 'ExternalName', externalName: '127.0.0.1' } },
        {
          apiVersion: 'apiregistration.platform.io/v1',
          kind: 'APIService',
          metadata: { name: API_SERVICE },
          spec: {
            group: WARDLE_GROUP,
            version: WARDLE_VERSION,
            service: { namespace: 'wardle', name: 'api', port: ext.port },
            caBundle: Buffer.from(ext.servingCa).toString('base64'),
            groupPriorityMinimum: 1000,
            versionPriority: 15,
          },
        },
      ],
    }),
  );
  await kubectl('create', '-f', manifests, '--validate=false');
}, 90_000);

afterAll(async () => {
  await server?.stop();
  await ext?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** One GET to Keelson as the admin. */
function get(pathAndQuery: string, accept = 'application/json'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(
      new URL(pathAndQuery, server.url),
      { ca: server.ca, cert: server.adminCredentials.cert, key: server.adminCredentials.key, headers: { Accept: accept } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    req.on('error', reject);
  });
}

test("kubectl get apiservices lists the extension (apiregistration.platform.io), Available; its table is kube-aggregator's", async () => {
  const available = async () => {
    const apiService = JSON.parse(await kubectl('get', 'apiservices.apiregistration.platform.io', API_SERVICE, '-o', 'json'));
    return (
      apiService.apiVersion === 'apiregistration.platform.io/v1' &&
      apiService.status?.conditions?.some((c: { type: string; status: string }) => c.type === 'Available' && c.status === 'True')
    );
  };
  await eventually(available, { what: 'the APIService Available', timeoutMs: 20_000 });
  // kubectl asks for its tables in meta.k8s.io, which this profile does not name: it prints names.
  expect(await kubectl('get', 'apiservices')).toMatch(new RegExp(`^${API_SERVICE.replace(/\./g, '\\.')}\\s`, 'm'));
  const table = JSON.parse(
    (await get(`/apis/apiregistration.platform.io/v1/apiservices/${API_SERVICE}`, 'application/json;as=Table;g=meta.platform.io;v=v1')).body,
  );
  expect(table.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(['Name', 'Service', 'Available', 'Age']);
  expect(table.rows[0].cells.slice(0, 3)).toEqual([API_SERVICE, 'wardle/api', 'True']);
  // The upstream group is not served in this profile.
  expect((await get('/apis/apiregistration.k8s.io/v1/apiservices')).status).toBe(404);
});

test('apis/<group>/<version> is proxied to the extension with the caller as X-Remote-User', async () => {
  const list = await kubectl('get', 'flunders', '-n', 'wardle');
  expect(list).toMatch(/^first\s/m);
  const seen = ext.nextRequest();
  const answer = await get(`/apis/${GV}/namespaces/wardle/flunders/first`);
  expect(answer.status).toBe(200);
  expect(JSON.parse(answer.body)).toMatchObject({ apiVersion: GV, kind: 'Flunder', metadata: { name: 'first' } });
  const got = await seen;
  expect(got).toMatchObject({ url: `/apis/${GV}/namespaces/wardle/flunders/first`, proxyCommonName: FRONT_PROXY_CLIENT });
  expect(got.user).toBeTruthy();
  expect(got.groups).toContain('system:authenticated');
});
