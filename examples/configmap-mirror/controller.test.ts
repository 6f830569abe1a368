/**
 * The example controller tested against a real Keelson started in the test process: what a
 * controller author writes instead of envtest or a mock server.
 */
import * as k8s from '@kubernetes/client-node';
import { startServer, type RunningServer } from 'keelson';
import { ConfigMapMirror, FIELD_MANAGER } from './controller';

let server: RunningServer;
let kc: k8s.KubeConfig;
let core: k8s.CoreV1Api;
let controller: ConfigMapMirror;

beforeAll(async () => {
  server = await startServer({ simulatedNodes: 0 });
  kc = new k8s.KubeConfig();
  kc.loadFromString(server.kubeconfig);
  core = kc.makeApiClient(k8s.CoreV1Api);
  for (const name of ['source', 'target']) await core.createNamespace({ body: { metadata: { name } } });
  controller = new ConfigMapMirror(kc, 'source', 'target');
  await controller.start();
});

afterAll(async () => {
  await controller?.stop();
  await server?.stop();
});

async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean): Promise<T> {
  let last: T | undefined;
  for (let i = 0; i < 100; i++) {
    last = await read().catch(() => undefined as T);
    if (last !== undefined && ok(last)) return last;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`not reached; last: ${JSON.stringify(last)}`);
}

test('mirrors a ConfigMap with server-side apply, follows its changes and its deletion', async () => {
  await core.createNamespacedConfigMap({ namespace: 'source', body: { metadata: { name: 'settings' }, data: { a: '1', b: '2' } } });
  const mirrored = await eventually(
    () => core.readNamespacedConfigMap({ name: 'settings', namespace: 'target' }),
    (cm) => cm.data?.a === '1',
  );
  expect(mirrored.data).toEqual({ a: '1', b: '2' });
  expect(mirrored.metadata?.labels).toEqual({ 'mirror-of': 'source.settings' });
  expect(mirrored.metadata?.managedFields?.map((f) => [f.manager, f.operation])).toEqual([[FIELD_MANAGER, 'Apply']]);

  // A key removed from the original goes from the mirror: the applier owned it.
  await core.replaceNamespacedConfigMap({ name: 'settings', namespace: 'source', body: { metadata: { name: 'settings' }, data: { a: '10' } } });
  await eventually(
    () => core.readNamespacedConfigMap({ name: 'settings', namespace: 'target' }),
    (cm) => cm.data?.a === '10' && cm.data?.b === undefined,
  );

  await core.deleteNamespacedConfigMap({ name: 'settings', namespace: 'source' });
  await eventually(
    () =>
      core.readNamespacedConfigMap({ name: 'settings', namespace: 'target' }).then(
        () => 'present',
        (err: { code?: number }) => (err.code === 404 ? 'gone' : 'error'),
      ),
    (state) => state === 'gone',
  );
});
