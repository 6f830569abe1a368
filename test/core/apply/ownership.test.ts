/**
 * Server-side apply ownership (docs/API.md, "Field managers and server-side apply"): create by apply, last writer owns,
 * equal values share, conflicts with upstream's Status, force, giving fields up and removing
 * them when nobody owns them, updates moving ownership with operation `Update`. Both backends.
 */
import { BACKENDS, coreBackend, statusOf } from '../registry/core-backends';
import type { Core } from '../../../src/core';
import type { ManualClock } from '../../../src/clock';
import { T0, apply, at, copy, ctx, freshNamespace, ownership, rs, rsConfig, templateFields } from './support';

describe.each(BACKENDS)('server-side apply on %s', (backendName) => {
  const backend = coreBackend(backendName);
  let core: Core;
  let clock: ManualClock;

  beforeEach(async () => {
    ({ core, clock } = await backend.open());
    expect(clock.now()).toBe(T0);
    await freshNamespace(core);
  });
  afterEach(() => backend.closeAll());
  afterAll(() => backend.teardown());

  it('creates an absent object and records the applier with operation Apply', async () => {
    const created = await apply(core, rsConfig({ replicas: 2 }), 'alice');
    expect(created.created).toBe(true);
    expect(created.object.metadata!.managedFields).toEqual([
      {
        manager: 'alice',
        operation: 'Apply',
        apiVersion: 'apps/v1',
        time: at(0),
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': { 'f:replicas': {}, 'f:selector': {}, 'f:template': templateFields } },
      },
    ]);
    // Defaults and strategy ran as for any create.
    expect(created.object.metadata!.labels).toEqual({ app: 'web' });
    expect(created.object.metadata!.generation).toBe(1);
    const again = await apply(core, rsConfig({ replicas: 2 }), 'alice');
    expect(again.created).toBe(false);
    expect(again.object.metadata!.resourceVersion).toBe(created.object.metadata!.resourceVersion);
  });

  it("refuses to change another manager's field, listing the conflict as upstream does", async () => {
    const created = await apply(core, rsConfig({ replicas: 2 }), 'alice');
    const err = await statusOf(apply(core, { ...rsConfig({ replicas: 3 }) }, 'bob'), 409, 'Conflict');
    expect(err.status).toEqual({
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: 'Apply failed with 1 conflict: conflict with "alice": .spec.replicas',
      reason: 'Conflict',
      details: { causes: [{ reason: 'FieldManagerConflict', message: 'conflict with "alice"', field: '.spec.replicas' }] },
      code: 409,
    });
    const two = await statusOf(apply(core, rsConfig({ replicas: 3, image: 'nginx:2' }), 'bob'), 409, 'Conflict');
    expect(two.status.message).toBe(
      'Apply failed with 2 conflicts: conflicts with "alice":\n- .spec.replicas\n- .spec.template.spec.containers[name="nginx"].image',
    );
    expect(two.status.details!.causes!.map((c) => c.field)).toEqual(['.spec.replicas', '.spec.template.spec.containers[name="nginx"].image']);
    const stored = await core.get(rs('web'), {}, ctx);
    expect(stored.metadata!.resourceVersion).toBe(created.object.metadata!.resourceVersion);
  });

  it('names update managers with their version in conflicts', async () => {
    await apply(core, rsConfig({ replicas: 2 }), 'alice');
    const current = copy(await core.get(rs('web'), {}, ctx));
    (current.spec as { replicas: number }).replicas = 4;
    await core.update(rs('web'), current, { fieldManager: 'editor' }, ctx);
    const err = await statusOf(apply(core, rsConfig({ replicas: 5 }), 'alice'), 409, 'Conflict');
    expect(err.status.message).toBe('Apply failed with 1 conflict: conflict with "editor" using apps/v1: .spec.replicas');
  });

  it('takes ownership with force, and shares fields applied with equal values', async () => {
    await apply(core, rsConfig({ replicas: 2 }), 'alice');
    clock.advance(60_000);
    const forced = await apply(core, { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web' }, spec: { replicas: 3 } }, 'bob', { force: true });
    expect((forced.object.spec as { replicas: number }).replicas).toBe(3);
    expect(ownership(forced.object)).toEqual([
      ['alice(Apply)', { 'f:spec': { 'f:selector': {}, 'f:template': templateFields } }],
      ['bob(Apply)', { 'f:spec': { 'f:replicas': {} } }],
    ]);
    clock.advance(60_000);
    const shared = await apply(core, { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web' }, spec: { replicas: 3 } }, 'carol');
    // carol's apply changed nothing, so (as upstream) her new entry gets no time and sorts first.
    expect(ownership(shared.object).map(([m]) => m)).toEqual(['carol(Apply)', 'alice(Apply)', 'bob(Apply)']);
    expect(shared.object.metadata!.managedFields!.map((e) => e.time)).toEqual([undefined, at(0), at(60)]);
    expect(shared.object.metadata!.managedFields![0]!.fieldsV1).toEqual({ 'f:spec': { 'f:replicas': {} } });
    // A shared field conflicts for anyone changing it.
    const err = await statusOf(
      apply(core, { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web' }, spec: { replicas: 4 } }, 'carol'),
      409,
      'Conflict',
    );
    expect(err.status.message).toBe('Apply failed with 1 conflict: conflict with "bob": .spec.replicas');
  });

  it('removes a field its only owner stops applying, and keeps fields others still own', async () => {
    await apply(
      core,
      rsConfig({
        replicas: 3,
        containers: [
          { name: 'nginx', image: 'nginx:1.27' },
          { name: 'side', image: 'busybox' },
        ],
      }),
      'alice',
    );
    const dropped = await apply(core, rsConfig({}), 'alice');
    const spec = dropped.object.spec as { replicas: number; template: { spec: { containers: { name: string }[] } } };
    expect(spec.replicas).toBe(1); // back to its default: nobody owns it any more
    expect(spec.template.spec.containers.map((c) => c.name)).toEqual(['nginx']);
    expect(ownership(dropped.object)).toEqual([['alice(Apply)', { 'f:spec': { 'f:selector': {}, 'f:template': templateFields } }]]);

    await apply(core, rsConfig({ replicas: 3 }), 'alice');
    await apply(core, { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web' }, spec: { replicas: 3 } }, 'bob');
    const kept = await apply(core, rsConfig({}), 'alice');
    expect((kept.object.spec as { replicas: number }).replicas).toBe(3);
  });

  it('moves ownership to updates and non-apply patches, with operation Update', async () => {
    await apply(core, rsConfig({ replicas: 2 }), 'alice');
    clock.advance(1000);
    const patched = await core.patch(
      rs('web'),
      { type: 'merge', body: { spec: { replicas: 5 }, metadata: { labels: { tier: 'web' } } } },
      { fieldManager: 'tool' },
      ctx,
    );
    expect(ownership(patched.object)).toEqual([
      ['alice(Apply)', { 'f:spec': { 'f:selector': {}, 'f:template': templateFields } }],
      ['tool(Update)', { 'f:metadata': { 'f:labels': { 'f:tier': {} } }, 'f:spec': { 'f:replicas': {} } }],
    ]);
    expect(patched.object.metadata!.managedFields![1]).toMatchObject({ apiVersion: 'apps/v1', time: at(1) });
    // Without fieldManager the manager is the User-Agent's product.
    const labelled = await core.patch(rs('web'), { type: 'strategic', body: { metadata: { labels: { x: 'y' } } } }, {}, ctx);
    expect(ownership(labelled.object).map(([m]) => m)).toContain('kubectl(Update)');
  });

  it('requires a field manager, refuses managedFields in the body and checks the kind', async () => {
    const noManager = await statusOf(core.patch(rs('web'), { type: 'apply', body: rsConfig() }, {}, ctx), 422, 'Invalid');
    expect(noManager.status.message).toBe('PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch');
    const withFields = { ...rsConfig(), metadata: { name: 'web', managedFields: [] } };
    expect((await statusOf(apply(core, withFields, 'alice'), 400, 'BadRequest')).status.message).toBe('metadata.managedFields must be nil');
    const wrongKind = { ...rsConfig(), kind: 'Pod' };
    expect((await statusOf(apply(core, wrongKind, 'alice'), 400, 'BadRequest')).status.message).toBe('invalid object type: apps/v1, Kind=Pod');
    const unknown = rsConfig();
    (unknown.spec as Record<string, unknown>).foo = 1;
    // Upstream answers these 500; a configuration that does not fit the schema is the client's mistake (400).
    const err = await statusOf(apply(core, unknown, 'alice'), 400, 'BadRequest');
    expect(err.status.message).toBe('failed to create typed patch object (/web; apps/v1, Kind=ReplicaSet): .spec.foo: field not declared in schema');
    const wrongType = rsConfig();
    (wrongType.spec as Record<string, unknown>).replicas = '3';
    expect((await statusOf(apply(core, wrongType, 'alice'), 400, 'BadRequest')).status.message).toBe(
      'failed to create typed patch object (/web; apps/v1, Kind=ReplicaSet): .spec.replicas: expected numeric (int or float), got string',
    );
    const nameless = { ...rsConfig(), metadata: {} };
    expect((await statusOf(apply(core, nameless, 'alice'), 400, 'BadRequest')).status.message).toBe(
      'the name of the object () does not match the name on the URL (web)',
    );
    await statusOf(core.get(rs('web'), {}, ctx), 404, 'NotFound');
  });

  it('applies to /status and /scale as subresources', async () => {
    await apply(core, rsConfig({ replicas: 2 }), 'alice');
    const status = await apply(
      core,
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'web' }, status: { replicas: 2, readyReplicas: 1 } },
      'ctrl',
      {},
      rs('web', 'status'),
    );
    expect(status.object.status).toMatchObject({ replicas: 2, readyReplicas: 1 });
    expect(ownership(status.object)).toEqual([
      ['alice(Apply)', { 'f:spec': { 'f:replicas': {}, 'f:selector': {}, 'f:template': templateFields } }],
      ['ctrl(Apply/status)', { 'f:status': { 'f:readyReplicas': {}, 'f:replicas': {} } }],
    ]);
    const scaled = await core.patch(rs('web', 'scale'), { type: 'merge', body: { spec: { replicas: 4 } } }, { fieldManager: 'kubectl-scale' }, ctx);
    expect(scaled.object).toMatchObject({ kind: 'Scale', spec: { replicas: 4 } });
    const parent = await core.get(rs('web'), {}, ctx);
    expect(parent.metadata!.managedFields).toEqual([
      {
        manager: 'alice',
        operation: 'Apply',
        apiVersion: 'apps/v1',
        time: at(0),
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': { 'f:selector': {}, 'f:template': templateFields } },
      },
      {
        manager: 'ctrl',
        operation: 'Apply',
        apiVersion: 'apps/v1',
        time: at(0),
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:status': { 'f:readyReplicas': {}, 'f:replicas': {} } },
        subresource: 'status',
      },
      // upstream's ScaleHandler brings the Scale's entry back without a time.
      {
        manager: 'kubectl-scale',
        operation: 'Update',
        apiVersion: 'apps/v1',
        fieldsType: 'FieldsV1',
        fieldsV1: { 'f:spec': { 'f:replicas': {} } },
        subresource: 'scale',
      },
    ]);
    const scaleConfig = (replicas: number) => ({ apiVersion: 'autoscaling/v1', kind: 'Scale', metadata: { name: 'web' }, spec: { replicas } });
    const conflict = await statusOf(apply(core, scaleConfig(6), 'hpa', {}, rs('web', 'scale')), 409, 'Conflict');
    expect(conflict.status.message).toBe(
      'Apply failed with 1 conflict: conflict with "kubectl-scale" with subresource "scale" using autoscaling/v1: .spec.replicas',
    );
    const scaleApply = await apply(core, scaleConfig(6), 'hpa', { force: true }, rs('web', 'scale'));
    expect(scaleApply.object).toMatchObject({ spec: { replicas: 6 } });
    const afterApply = await core.get(rs('web'), {}, ctx);
    // The Scale's new entry comes back to the object without a time (upstream's ScaleHandler), so it sorts first.
    expect(ownership(afterApply).map(([m]) => m)).toEqual(['hpa(Apply/scale)', 'alice(Apply)', 'ctrl(Apply/status)']);
    expect(afterApply.metadata!.managedFields![0]).toEqual({
      manager: 'hpa',
      operation: 'Apply',
      apiVersion: 'apps/v1',
      fieldsType: 'FieldsV1',
      fieldsV1: { 'f:spec': { 'f:replicas': {} } },
      subresource: 'scale',
    });
    // Subresources of absent objects are 404 for applies too.
    const absentStatus = await statusOf(
      apply(core, { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'gone' }, status: { replicas: 1 } }, 'ctrl', {}, rs('gone', 'status')),
      404,
      'NotFound',
    );
    expect(absentStatus.status.message).toBe('replicasets.apps "gone" not found');
    await statusOf(apply(core, { ...scaleConfig(1), metadata: { name: 'gone' } }, 'hpa', {}, rs('gone', 'scale')), 404, 'NotFound');
    const other = await statusOf(apply(core, scaleConfig(7), 'other', {}, rs('web', 'scale')), 409, 'Conflict');
    expect(other.status.message).toBe('Apply failed with 1 conflict: conflict with "hpa" with subresource "scale": .spec.replicas');
  });
});
