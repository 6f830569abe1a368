/**
 * Custom resources through a gateway in front of a remote core (issue 52): the core's process
 * serves the definition and its objects; the gateway follows the core's definitions to route,
 * discover and publish them, so kubectl works against the gateway as against the core.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { API_ONLY, startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { KUBECTL } from './support/kubectl';
import { eventually } from '../support/eventually';
import { cronTabCrd } from './support/crds';

const run = promisify(execFile);
let core: ServerProcess;
let gateway: ServerProcess;
let dir: string;

const kubectl = async (...args: string[]) => (await run(KUBECTL, ['--kubeconfig', gateway.kubeconfig, ...args], { timeout: 30_000 })).stdout;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'keelson-crd-remote-'));
  core = await startServerProcess(['--vendor', 'kubernetes', ...API_ONLY, '--grpc-port', '0']);
  const grpcAddress = /serving the core over gRPC on (\S+)/.exec(core.output())![1]!;
  gateway = await startServerProcess(['--vendor', 'kubernetes', '--core-address', grpcAddress], { dataDir: core.dataDir });
}, 120_000);

afterAll(async () => {
  await gateway?.stop();
  await core?.stop();
  await rm(dir, { recursive: true, force: true });
});

test('kubectl applies a definition and its objects through the gateway, which routes, discovers and tables them', async () => {
  const file = path.join(dir, 'crd.json');
  await writeFile(file, JSON.stringify(cronTabCrd()));
  await kubectl('apply', '-f', file);
  await kubectl('wait', '--for=condition=established', '--timeout=20s', 'crd/crontabs.stable.example.com');
  await eventually(async () => (await kubectl('api-resources', '--api-group=stable.example.com', '-o', 'name')).includes('crontabs'), {
    what: 'the gateway discovering crontabs',
  });
  const manifest = path.join(dir, 'ct.yaml');
  await writeFile(manifest, 'apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: remote\nspec:\n  cronSpec: "*/1"\n');
  await kubectl('apply', '-f', manifest);
  const table = await kubectl('get', 'crontabs');
  expect(table.split('\n')[0]).toMatch(/^NAME\s+SPEC\s+REPLICAS\s+AGE$/);
  expect(table).toMatch(/remote\s+\*\/1\s+1/);
  expect(await kubectl('explain', 'crontabs.spec')).toContain('The schedule, in cron format.');
}, 120_000);
