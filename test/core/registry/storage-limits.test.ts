/**
 * Objects etcd will not take: over its request limit (`etcdserver: request is too large`,
 * 1.5 MiB by default) and over the client's 2 MiB send limit. Upstream answers both as the plain
 * errors they are (500, no reason, the error's text), not as an unavailable store: a client
 * retrying them would fail forever. Nothing is stored, and an update that fails leaves the stored
 * object as it was.
 */
import { StatusError } from '../../../src/status';
import type { ApiObject, ResourceTarget } from '../../../src/core';
import { coreBackend, createNamespace, ctx, type TestCore } from './core-backends';

// A ReplicaSet, as its size has no limit of its own (a ConfigMap's data stops at 1 MiB).
const rs = (ns: string, name?: string): ResourceTarget => ({ group: 'apps', version: 'v1', resource: 'replicasets', namespace: ns, name });
const rsBody = (name: string, value: string): ApiObject => ({
  metadata: { name },
  spec: {
    replicas: 1,
    selector: { matchLabels: { app: 'big' } },
    template: { metadata: { labels: { app: 'big' } }, spec: { containers: [{ name: 'c', image: 'registry.example.com/c:1', env: [{ name: 'BIG', value }] }] } },
  },
});
const sized = (kib: number) => 'x'.repeat(kib * 1024);
const envOf = (obj: ApiObject) =>
  (obj as { spec: { template: { spec: { containers: Array<{ env: Array<{ value: string }> }> } } } }).spec.template.spec.containers[0].env[0].value;

describe("objects over etcd's limits", () => {
  const backend = coreBackend('etcd');
  let t: TestCore;
  const ns = 'limits';

  beforeAll(async () => {
    t = await backend.open();
    await createNamespace(t.core, ns);
  });
  afterAll(async () => {
    await backend.closeAll();
    await backend.teardown();
  });

  async function plainError(p: Promise<unknown>): Promise<StatusError> {
    const err = await p.then(
      () => {
        throw new Error('expected the write to fail');
      },
      (e: unknown) => e,
    );
    if (!(err instanceof StatusError)) throw err;
    expect(err.code).toBe(500);
    expect(err.reason).toBe('');
    expect(err.status).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: err.status.message, code: 500 });
    return err;
  }

  it('a create over the request limit: 500 "etcdserver: request is too large", nothing stored', async () => {
    const err = await plainError(t.core.create(rs(ns), rsBody('big', sized(1700)), {}, ctx));
    expect(err.status.message).toBe('etcdserver: request is too large');
    const missing = await t.core.get(rs(ns, 'big'), {}, ctx).catch((e: unknown) => e);
    expect(missing).toMatchObject({ code: 404 });
  });

  it("a create over the send limit: 500 in grpc-go's words, never sent", async () => {
    const err = await plainError(t.core.create(rs(ns), rsBody('bigger', sized(2500)), {}, ctx));
    expect(err.status.message).toMatch(/^rpc error: code = ResourceExhausted desc = trying to send message larger than max \(\d+ vs\. 2097152\)$/);
    expect(await t.core.get(rs(ns, 'bigger'), {}, ctx).catch((e: unknown) => e)).toMatchObject({ code: 404 });
  });

  it('an update over either limit fails the same way and leaves the stored object as it was', async () => {
    const stored = (await t.core.create(rs(ns), rsBody('small', 'v1'), {}, ctx)).object;
    for (const kib of [1700, 2500]) {
      await plainError(t.core.update(rs(ns, 'small'), { ...rsBody('small', sized(kib)), metadata: stored.metadata }, {}, ctx));
      const now = await t.core.get(rs(ns, 'small'), {}, ctx);
      expect(envOf(now)).toBe('v1');
      expect(now.metadata!.resourceVersion).toBe(stored.metadata!.resourceVersion);
    }
    // The store is fine afterwards: the next write goes through.
    const next = await t.core.update(rs(ns, 'small'), { ...rsBody('small', 'v2'), metadata: stored.metadata }, {}, ctx);
    expect(envOf(next.object)).toBe('v2');
  });
});
