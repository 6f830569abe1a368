/**
 * A core started before its etcd answers (a server started ahead of its store, as in a compose
 * file or a pod): nothing is thrown unhandled, `ready` waits, asking again on the injected
 * clock, and resolves once etcd is up; then reads and writes work.
 */
import { createCore, type Core } from '../../src/core';
import { createStore } from '../../src/store';
import { createNaming } from '../../src/naming';
import { ManualClock } from '../../src/clock';
import { startEtcd, type EtcdInstance } from '../support/etcd';
import { eventually } from '../support/eventually';

const ADMIN = { user: { username: 'admin', groups: ['system:masters'] } };

let etcd: EtcdInstance;
let core: Core | undefined;

beforeAll(async () => {
  etcd = await startEtcd();
});

afterAll(async () => {
  await core?.close();
  await etcd.stop();
});

/** Real time for I/O, while the manual clock stands still: the pause is the point, the store's answers (or their absence) take real time. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

test('ready waits for a store that does not answer yet, and the core serves once it does', async () => {
  await etcd.kill();
  const clock = new ManualClock();
  core = createCore({ store: createStore({ kind: 'etcd', endpoints: [etcd.endpoint] }), naming: createNaming('kubernetes'), clock, compactionIntervalMs: 0 });
  let ready = false;
  const readying = core.ready().then(() => {
    ready = true;
  });
  for (let i = 0; i < 5; i++) {
    clock.advance(1_000);
    await settle();
  }
  expect(ready).toBe(false);
  await etcd.restart();
  // A second of the clock per look, for the core's retries, until it is ready.
  await eventually(
    () => {
      clock.advance(1_000);
      return ready;
    },
    { what: 'the core to be ready', intervalMs: 50 },
  );
  await readying;
  const namespaces = await core.list({ group: '', version: 'v1', resource: 'namespaces' }, {}, ADMIN);
  expect(namespaces.items.map((n) => n.metadata!.name)).toEqual(expect.arrayContaining(['default', 'kube-system', 'kube-public', 'kube-node-lease']));
  const { object } = await core.create({ group: '', version: 'v1', resource: 'configmaps', namespace: 'default' }, { metadata: { name: 'after' } }, {}, ADMIN);
  expect(object.metadata?.resourceVersion).toMatch(/^\d+$/);
});
