/**
 * Keelson as a library: servers started in this process with `startServer()`, used through
 * @kubernetes/client-node as a controller's test would, independent of each other, with users
 * whose rights RBAC decides, and nothing left running once stopped.
 */
import * as k8s from '@kubernetes/client-node';
import { ManualClock, startServer, type RunningServer } from '../../src/library';
import { eventually } from '../support/eventually';

function clientFor(kubeconfig: string): k8s.CoreV1Api {
  const kc = new k8s.KubeConfig();
  kc.loadFromString(kubeconfig);
  return kc.makeApiClient(k8s.CoreV1Api);
}

test('several servers in one process, each its own cluster, stopped with nothing left open', async () => {
  const before = process.getActiveResourcesInfo().filter((r) => r !== 'Timeout').length;
  const servers: RunningServer[] = await Promise.all([startServer(), startServer({ simulatedNodes: 0 }), startServer({ controllers: [], simulatedNodes: 0 })]);
  const [a, b, c] = servers;
  expect(new Set(servers.map((s) => s.url)).size).toBe(3);
  const apiA = clientFor(a!.kubeconfig);
  const apiB = clientFor(b!.kubeconfig);
  await apiA.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'only-in-a' }, data: { k: 'v' } } });
  expect((await apiA.readNamespacedConfigMap({ name: 'only-in-a', namespace: 'default' })).data).toEqual({ k: 'v' });
  await expect(apiB.readNamespacedConfigMap({ name: 'only-in-a', namespace: 'default' })).rejects.toMatchObject({ code: 404 });
  // The first runs the controllers and a simulated node; the last runs none, as envtest.
  expect((await apiA.listNode()).items.map((n) => n.metadata?.name)).toEqual(['keelson-node-0']);
  expect((await clientFor(c!.kubeconfig).listNode()).items).toEqual([]);

  const alice = await a!.newUser('alice', ['dev']);
  const asAlice = clientFor(alice.kubeconfig);
  await expect(asAlice.listNamespacedPod({ namespace: 'default' })).rejects.toMatchObject({ code: 403 });
  const rbac = (() => {
    const kc = new k8s.KubeConfig();
    kc.loadFromString(a!.kubeconfig);
    return kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  })();
  await rbac.createNamespacedRoleBinding({
    namespace: 'default',
    body: {
      metadata: { name: 'dev-view' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'view' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'dev' }],
    },
  });
  await eventually(() => asAlice.listNamespacedPod({ namespace: 'default' }).then(() => true), { what: 'RBAC to let alice list pods' });

  await Promise.all(servers.map((s) => s.stop()));
  // Sockets, listeners, the stores and their timers are gone (client-node's idle keep-alive sockets close on their own).
  const remaining = () => process.getActiveResourcesInfo().filter((r) => r !== 'Timeout' && r !== 'TCPSocketWrap' && r !== 'TLSWrap').length;
  await eventually(() => remaining() <= before, { what: `at most ${before} resources left` });
}, 60_000);

test('a bad option is refused with the flag error, leaving nothing behind', async () => {
  await expect(startServer({ controllers: ['nosuch'] })).rejects.toThrow(/"nosuch" is not in the list of known controllers/);
});

test('an injected clock drives expiry: a TokenRequest token stops working once the clock passes it', async () => {
  const clock = new ManualClock(Date.now());
  const server = await startServer({ clock, controllers: [], simulatedNodes: 0 });
  try {
    const kc = new k8s.KubeConfig();
    kc.loadFromString(server.kubeconfig);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace: 'default', body: { metadata: { name: 'bot' } } });
    const request = await core.createNamespacedServiceAccountToken({
      name: 'bot',
      namespace: 'default',
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    const token = request.status!.token;
    const asBot = () => {
      const bot = new k8s.KubeConfig();
      bot.loadFromOptions({
        clusters: [{ name: 'c', server: server.url, caData: Buffer.from(server.ca).toString('base64') }],
        users: [{ name: 'bot', token }],
        contexts: [{ name: 'c', cluster: 'c', user: 'bot' }],
        currentContext: 'c',
      });
      return bot.makeApiClient(k8s.CoreV1Api).listNamespacedPod({ namespace: 'default' });
    };
    // Valid now: authenticated (RBAC then refuses a bare service account).
    await expect(asBot()).rejects.toMatchObject({ code: 403 });
    clock.advance(601_000);
    await expect(asBot()).rejects.toMatchObject({ code: 401 });
  } finally {
    await server.stop();
  }
});
