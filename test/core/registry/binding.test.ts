/**
 * `pods/<name>/binding` and the legacy `bindings` collection through the in-process core on the
 * embedded store: what a scheduler does to a pending pod.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCore, type ApiObject, type Core, type RequestContext, type ResourceTarget } from '../../../src/core';
import { createStore } from '../../../src/store';
import { createNaming } from '../../../src/naming';
import { ManualClock } from '../../../src/clock';
import { StatusError } from '../../../src/status';

const ctx: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };
const pods = (name?: string, subresource?: string): ResourceTarget => ({ group: '', version: 'v1', resource: 'pods', namespace: 'default', name, subresource });
const bindings: ResourceTarget = { group: '', version: 'v1', resource: 'bindings', namespace: 'default' };

function pod(name: string, spec: Record<string, unknown> = {}): ApiObject {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec: { containers: [{ name: 'c', image: 'nginx' }], ...spec } };
}

function binding(name: string, node: string, extra: Record<string, unknown> = {}): ApiObject {
  return { apiVersion: 'v1', kind: 'Binding', metadata: { name, ...extra }, target: { kind: 'Node', name: node } };
}

async function failure(p: Promise<unknown>): Promise<{ code: number; reason: string; message: string }> {
  try {
    await p;
  } catch (err) {
    expect(err).toBeInstanceOf(StatusError);
    const s = (err as StatusError).status;
    return { code: s.code, reason: s.reason ?? '', message: s.message ?? '' };
  }
  throw new Error('expected a failure');
}

describe('pod binding', () => {
  let dir: string;
  let core: Core;
  const clock = new ManualClock(Date.UTC(2026, 10, 25, 8, 0, 0));

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-binding-'));
    core = createCore({ store: await createStore({ kind: 'embedded', dataDir: dir }), naming: createNaming('kubernetes'), clock, compactionIntervalMs: 0 });
    await core.ready();
  });

  afterEach(async () => {
    await core.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('binds a pending pod: nodeName, annotations and PodScheduled=True, answered by a Success Status', async () => {
    await core.create(pods(), pod('web'), {}, ctx);
    const result = await core.create(pods('web', 'binding'), binding('web', 'node-1', { annotations: { note: 'x' } }), {}, ctx);
    expect(result.created).toBe(true);
    expect(result.object).toEqual({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success' });
    const bound = (await core.get(pods('web'), {}, ctx)) as ApiObject & { spec: { nodeName?: string }; status: { conditions?: unknown[] } };
    expect(bound.spec.nodeName).toBe('node-1');
    expect(bound.metadata?.annotations).toEqual({ note: 'x' });
    expect(bound.status.conditions).toEqual([{ type: 'PodScheduled', status: 'True', lastProbeTime: null, lastTransitionTime: '2026-11-25T08:00:00Z' }]);
  });

  it('binds through the legacy bindings collection, where the Binding names the pod', async () => {
    await core.create(pods(), pod('api'), {}, ctx);
    await core.create(bindings, binding('api', 'node-2'), {}, ctx);
    expect(((await core.get(pods('api'), {}, ctx)) as { spec: { nodeName?: string } }).spec.nodeName).toBe('node-2');
  });

  it('refuses a second binding, a deleted or gated pod, and a missing pod, as upstream words it', async () => {
    await core.create(pods(), pod('web'), {}, ctx);
    await core.create(pods('web', 'binding'), binding('web', 'node-1'), {}, ctx);
    expect(await failure(core.create(pods('web', 'binding'), binding('web', 'node-2'), {}, ctx))).toEqual({
      code: 409,
      reason: 'Conflict',
      message: 'Operation cannot be fulfilled on pods/binding "web": pod web is already assigned to node "node-1"',
    });
    await core.create(pods(), pod('gated', { schedulingGates: [{ name: 'wait' }] }), {}, ctx);
    expect((await failure(core.create(pods('gated', 'binding'), binding('gated', 'node-1'), {}, ctx))).message).toBe(
      'Operation cannot be fulfilled on pods/binding "gated": pod gated has non-empty .spec.schedulingGates',
    );
    await core.create(pods(), { ...pod('held'), metadata: { name: 'held', finalizers: ['example.com/hold'] } }, {}, ctx);
    await core.delete(pods('held'), {}, ctx);
    expect((await failure(core.create(pods('held', 'binding'), binding('held', 'node-1'), {}, ctx))).message).toBe(
      'Operation cannot be fulfilled on pods/binding "held": pod held is being deleted, cannot be assigned to a host',
    );
    expect(await failure(core.create(pods('nope', 'binding'), binding('nope', 'node-1'), {}, ctx))).toMatchObject({
      code: 404,
      reason: 'NotFound',
      message: 'pods "nope" not found',
    });
  });

  it('refuses a Binding that names another pod or no node, and a stale uid precondition', async () => {
    const created = await core.create(pods(), pod('web'), {}, ctx);
    expect(await failure(core.create(pods('web', 'binding'), binding('other', 'node-1'), {}, ctx))).toMatchObject({
      code: 400,
      reason: 'BadRequest',
      message: 'name in URL does not match name in Binding object',
    });
    const noTarget = { apiVersion: 'v1', kind: 'Binding', metadata: { name: 'web' }, target: { kind: 'Pod' } };
    expect(await failure(core.create(pods('web', 'binding'), noTarget, {}, ctx))).toEqual({
      code: 500,
      reason: '',
      message: '[target.kind: Unsupported value: "Pod": supported values: "Node", "<empty>", target.name: Required value]',
    });
    const stale = await failure(core.create(pods('web', 'binding'), binding('web', 'node-1', { uid: 'not-the-uid' }), {}, ctx));
    expect(stale.code).toBe(409);
    expect(stale.message).toBe(
      `Operation cannot be fulfilled on pods "web": Precondition failed: UID in precondition: not-the-uid, UID in object meta: ${created.object.metadata?.uid}`,
    );
    const untouched = (await core.get(pods('web'), {}, ctx)) as { spec: { nodeName?: string } };
    expect(untouched.spec.nodeName).toBeUndefined();
  });

  it('writes nothing on a dry run', async () => {
    await core.create(pods(), pod('web'), {}, ctx);
    await core.create(pods('web', 'binding'), binding('web', 'node-1'), { dryRun: ['All'] }, ctx);
    expect(((await core.get(pods('web'), {}, ctx)) as { spec: { nodeName?: string } }).spec.nodeName).toBeUndefined();
  });
});
