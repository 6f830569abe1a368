/**
 * The ReplicaSet controller as a kubectl 1.32 user sees it, on a server process with its
 * default controllers and one simulated node: pods appear, are scheduled and run, and follow
 * `kubectl scale`; `kubectl wait --for=jsonpath` sees the status converge, `kubectl get events`,
 * `kubectl events` and `kubectl describe` show what the controller and the scheduler did, and deleting with `--cascade=background`
 * or `foreground` removes the pods while `--cascade=orphan` leaves them. With minReadySeconds,
 * availableReplicas reaches replicas on the real clock once the pods have been ready that long.
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { startServerProcess, type ServerProcess } from '../gateway/support/server-process';
import { kubectlFor } from './support/kubectl';
import { eventually, type EventuallyOptions } from '../support/eventually';

/** kubectl calls against a real server take a while: look less often, for longer. */
const POLL: EventuallyOptions = { timeoutMs: 20_000, intervalMs: 200 };

let server: ServerProcess;
const kubectl = kubectlFor(() => server);

beforeAll(async () => {
  server = await startServerProcess(['--vendor', 'kubernetes']);
});

afterAll(async () => {
  await server?.stop();
});

async function podNames(selector: string): Promise<string[]> {
  const out = await kubectl(
    'get',
    'pods',
    '-n',
    'default',
    '-l',
    selector,
    '-o',
    'jsonpath={range .items[*]}{.metadata.name}{" "}{.metadata.deletionTimestamp}{"\\n"}{end}',
  );
  return out
    .split('\n')
    .filter((l) => l.trim() && l.trim().split(' ').length === 1)
    .map((l) => l.trim());
}

function replicaSet(name: string, replicas: number, minReadySeconds?: number): string {
  return JSON.stringify({
    apiVersion: 'apps/v1',
    kind: 'ReplicaSet',
    metadata: { name, namespace: 'default' },
    spec: {
      replicas,
      ...(minReadySeconds ? { minReadySeconds } : {}),
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'nginx' }] } },
    },
  });
}

test('kubectl scale and wait follow the pods the controller creates and deletes; events tell the story', async () => {
  const file = path.join(server.dataDir, 'web.json');
  await writeFile(file, replicaSet('web', 3));
  await kubectl('create', '-f', file);
  await kubectl('wait', 'rs/web', '--for=jsonpath={.status.replicas}=3', '--timeout=30s');
  expect(await podNames('app=web')).toHaveLength(3);
  await kubectl('scale', 'rs/web', '--replicas=7');
  await kubectl('wait', 'rs/web', '--for=jsonpath={.status.replicas}=7', '--timeout=30s');
  expect(await podNames('app=web')).toHaveLength(7);
  await kubectl('scale', 'rs/web', '--replicas=2');
  await kubectl('wait', 'rs/web', '--for=jsonpath={.status.replicas}=2', '--timeout=30s');
  await eventually(async () => (await podNames('app=web')).length === 2, POLL);
  // `events` is the core group's Event, kept as the events group's: both select the controller's events, each with its own labels.
  const reasons = 'jsonpath={range .items[*]}{.reason}{"\\n"}{end}';
  const events = await kubectl('get', 'events', '-n', 'default', '--field-selector', 'involvedObject.kind=ReplicaSet,involvedObject.name=web', '-o', reasons);
  expect(events).toContain('SuccessfulCreate');
  expect(events).toContain('SuccessfulDelete');
  expect(await kubectl('get', 'events.events.k8s.io', '-n', 'default', '--field-selector', 'regarding.name=web', '-o', reasons)).toBe(events);
  // kubectl describe lists an object's events from the core group.
  const described = await kubectl('describe', 'rs', 'web');
  expect(described).toMatch(/Events:\n\s+Type\s+Reason\s+Age\s+From\s+Message\n/);
  expect(described).toMatch(/Normal\s+SuccessfulCreate\s+\S+\s+\S*replicaset-controller\s+Created pod: web-/);
  expect(described).toMatch(/Normal\s+SuccessfulDelete\s+\S+\s+\S*replicaset-controller\s+Deleted pod: web-/);
  expect(await kubectl('events', '--for', 'rs/web')).toMatch(/Normal\s+SuccessfulCreate\s+ReplicaSet\/web\s+Created pod: web-/);
  // A deleted pod is replaced.
  const [first] = await podNames('app=web');
  await kubectl('delete', 'pod', first!, '--wait=false');
  await eventually(async () => {
    const names = await podNames('app=web');
    return names.length === 2 && !names.includes(first!);
  }, POLL);
});

test('delete --cascade=background removes the pods; --cascade=orphan leaves them, without their owner', async () => {
  const gone = path.join(server.dataDir, 'gone.json');
  await writeFile(gone, replicaSet('gone', 2));
  await kubectl('create', '-f', gone);
  await kubectl('wait', 'rs/gone', '--for=jsonpath={.status.replicas}=2', '--timeout=30s');
  await kubectl('delete', 'rs/gone', '--cascade=background');
  await eventually(async () => (await podNames('app=gone')).length === 0, POLL);

  const kept = path.join(server.dataDir, 'kept.json');
  await writeFile(kept, replicaSet('kept', 2));
  await kubectl('create', '-f', kept);
  await kubectl('wait', 'rs/kept', '--for=jsonpath={.status.replicas}=2', '--timeout=30s');
  await kubectl('delete', 'rs/kept', '--cascade=orphan');
  await eventually(async () => {
    const owners = await kubectl('get', 'pods', '-n', 'default', '-l', 'app=kept', '-o', 'jsonpath={range .items[*]}{.metadata.ownerReferences}{"|"}{end}');
    return owners === '||';
  }, POLL);
  expect(await podNames('app=kept')).toHaveLength(2);
});

test('kubectl get nodes shows the simulated node Ready; its Lease heartbeats in kube-node-lease', async () => {
  const nodes = await kubectl('get', 'nodes');
  expect(nodes.split('\n')[0]).toMatch(/^NAME\s+STATUS\s+ROLES\s+AGE\s+VERSION$/);
  expect(nodes).toMatch(/keelson-node-0\s+Ready\s+<none>\s+\S+\s+v1\.32\.0/);
  const wide = await kubectl('get', 'nodes', '-o', 'wide');
  expect(wide).toMatch(/172\.18\.0\.2\s+<none>\s+Keelson simulated node/);
  await eventually(async () => (await kubectl('get', 'leases', '-n', 'kube-node-lease')).includes('keelson-node-0'), POLL);
});

test('every namespace has kube-root-ca.crt with the CA that verifies the server, and a default ServiceAccount', async () => {
  await kubectl('create', 'namespace', 'team-a');
  await eventually(async () => (await kubectl('get', 'configmap', 'kube-root-ca.crt', '-n', 'team-a', '--ignore-not-found', '-o', 'name')).trim() !== '', POLL);
  const ca = await kubectl('get', 'configmap', 'kube-root-ca.crt', '-n', 'team-a', '-o', 'jsonpath={.data.ca\\.crt}');
  expect(ca).toBe(await readFile(path.join(server.dataDir, 'ca.crt'), 'utf8'));
  await eventually(async () => (await kubectl('get', 'serviceaccount', 'default', '-n', 'team-a', '--ignore-not-found', '-o', 'name')).trim() !== '', POLL);
});

test('a ReplicaSet scaled 0 → 100 → 10 → 0 converges with every pod running and ready, and a correct status', async () => {
  const file = path.join(server.dataDir, 'many.json');
  await writeFile(file, replicaSet('many', 0));
  await kubectl('create', '-f', file);
  await kubectl('wait', 'rs/many', '--for=jsonpath={.status.observedGeneration}=1', '--timeout=30s');
  await kubectl('scale', 'rs/many', '--replicas=100');
  await kubectl('wait', 'rs/many', '--for=jsonpath={.status.availableReplicas}=100', '--timeout=60s');
  const status = JSON.parse(await kubectl('get', 'rs/many', '-o', 'jsonpath={.status}'));
  expect(status).toMatchObject({ replicas: 100, fullyLabeledReplicas: 100, readyReplicas: 100, availableReplicas: 100, observedGeneration: 2 });
  const phases = await kubectl('get', 'pods', '-n', 'default', '-l', 'app=many', '-o', 'jsonpath={range .items[*]}{.status.phase}{"\\n"}{end}');
  expect(
    phases
      .trim()
      .split('\n')
      .filter((p) => p === 'Running'),
  ).toHaveLength(100);
  await kubectl('wait', 'pods', '-l', 'app=many', '--for=condition=Ready', '--timeout=60s');
  await kubectl('scale', 'rs/many', '--replicas=10');
  await kubectl('wait', 'rs/many', '--for=jsonpath={.status.readyReplicas}=10', '--timeout=60s');
  await eventually(async () => (await podNames('app=many')).length === 10, { ...POLL, timeoutMs: 60_000 });
  await kubectl('scale', 'rs/many', '--replicas=0');
  await kubectl('wait', 'rs/many', '--for=jsonpath={.status.replicas}=0', '--timeout=60s');
  // Every deleted pod went through graceful deletion and was finished by its node.
  await eventually(async () => (await kubectl('get', 'pods', '-n', 'default', '-l', 'app=many', '-o', 'name')).trim() === '', { ...POLL, timeoutMs: 60_000 });
  const scheduled = await kubectl('get', 'events', '-n', 'default', '-o', 'jsonpath={range .items[*]}{.reason}{"\\n"}{end}');
  expect(scheduled).toContain('Scheduled');
});

test('delete --cascade=foreground keeps the ReplicaSet until its running pods are gone', async () => {
  const file = path.join(server.dataDir, 'fg.json');
  await writeFile(file, replicaSet('fg', 3));
  await kubectl('create', '-f', file);
  await kubectl('wait', 'rs/fg', '--for=jsonpath={.status.readyReplicas}=3', '--timeout=30s');
  await kubectl('delete', 'rs/fg', '--cascade=foreground', '--timeout=60s');
  expect((await kubectl('get', 'rs', '-n', 'default', '--ignore-not-found', '-o', 'name')).includes('fg')).toBe(false);
  expect(await podNames('app=fg')).toHaveLength(0);
});

test('with minReadySeconds, availableReplicas stays below replicas until the pods have been ready that long, then reaches it', async () => {
  const minReadySeconds = 6;
  const file = path.join(server.dataDir, 'slow.json');
  await writeFile(file, replicaSet('slow', 2, minReadySeconds));
  await kubectl('create', '-f', file);
  await kubectl('wait', 'rs/slow', '--for=jsonpath={.status.readyReplicas}=2', '--timeout=30s');
  const readySeen = Date.now();
  const available = async () => Number((await kubectl('get', 'rs/slow', '-o', 'jsonpath={.status.availableReplicas}')) || 0);
  // kubectl wait, as a user would, while the status is sampled: when was 2 first seen?
  const waited = kubectl('wait', '--for=jsonpath={.status.availableReplicas}=2', 'rs/slow', '--timeout=40s').then(() => Date.now());
  const samples: Array<{ at: number; available: number }> = [];
  while (Date.now() < readySeen + 40_000) {
    const sample = { available: await available(), at: Date.now() };
    samples.push(sample);
    if (sample.available === 2) break;
    await new Promise((r) => setTimeout(r, 100)); // the sampling interval: the test measures when 2 was first seen
  }
  const waitedAt = await waited;
  const firstTwo = samples.find((s) => s.available === 2);
  expect(firstTwo).toBeDefined();
  // The pods' Ready transition times (RFC 3339 seconds, what availability is computed from):
  // before the last of them plus minReadySeconds, no sample saw both available.
  const readySince = (
    await kubectl(
      'get',
      'pods',
      '-n',
      'default',
      '-l',
      'app=slow',
      '-o',
      'jsonpath={range .items[*]}{.status.conditions[?(@.type=="Ready")].lastTransitionTime}{"\\n"}{end}',
    )
  )
    .trim()
    .split('\n')
    .map((t) => Date.parse(t));
  expect(readySince).toHaveLength(2);
  const availableFrom = Math.max(...readySince) + minReadySeconds * 1000;
  // On a loaded machine the first sample may come late; those taken before the pods had been
  // ready that long must all have seen fewer than 2 available.
  expect(samples.filter((s) => s.at < availableFrom).every((s) => s.available < 2)).toBe(true);
  expect(firstTwo!.at).toBeGreaterThanOrEqual(availableFrom);
  expect(waitedAt).toBeGreaterThanOrEqual(availableFrom);
  // Not a benchmark: the status follows the clock, not a much later resync (a generous margin
  // for a shared, loaded machine).
  expect(firstTwo!.at - readySeen).toBeLessThan(minReadySeconds * 1000 + 15_000);
  expect(waitedAt - readySeen).toBeLessThan(minReadySeconds * 1000 + 15_000);
});
