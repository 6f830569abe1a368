/** The real server process on a real etcd, with kubectl 1.32. */
import { type EtcdInstance, startEtcd } from '../support/etcd';
import { e2eSuite } from './support/e2e-suite';
import { type ServerProcess, startServerProcess } from './support/server-process';

let etcd: EtcdInstance;
let server: ServerProcess;

beforeAll(async () => {
  etcd = await startEtcd();
  server = await startServerProcess(['--vendor', 'kubernetes', '--etcd-servers', etcd.endpoint]);
});

afterAll(async () => {
  if (server) expect(await server.stop()).toBe(0);
  await etcd?.stop();
});

describe('e2e: etcd', () => {
  e2eSuite(() => server);
});
