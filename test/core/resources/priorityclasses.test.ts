/**
 * scheduling/v1 PriorityClass and the Priority admission plugin over a real core (embedded
 * store): the system classes created at start, upstream's validation and immutability, the one
 * global default, and pods given the priority of their class. Messages are upstream's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCore, type ApiObject, type Core, type RequestContext, type ResourceTarget } from '../../../src/core';
import { createStore } from '../../../src/store';
import { createNaming } from '../../../src/naming';
import { statusOf as refusal } from '../../support/status';

const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };
const classes = (name?: string): ResourceTarget => ({ group: 'scheduling.k8s.io', version: 'v1', resource: 'priorityclasses', ...(name ? { name } : {}) });
const pods = (name?: string): ResourceTarget => ({ group: '', version: 'v1', resource: 'pods', namespace: 'default', ...(name ? { name } : {}) });
const priorityClass = (name: string, value: number, extra: Record<string, unknown> = {}): ApiObject => ({
  apiVersion: 'scheduling.k8s.io/v1',
  kind: 'PriorityClass',
  metadata: { name },
  value,
  ...extra,
});
const pod = (name: string, spec: Record<string, unknown> = {}): ApiObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  spec: { containers: [{ name: 'c', image: 'nginx:1.27' }], ...spec },
});
type PodSpec = { priority?: number; priorityClassName?: string; preemptionPolicy?: string };

describe('PriorityClass and the Priority admission plugin', () => {
  let dir: string;
  let core: Core;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'keelson-pc-'));
    core = createCore({
      store: createStore({ kind: 'embedded', dataDir: dir }),
      naming: createNaming('kubernetes'),
      admissionPlugins: ['NamespaceLifecycle', 'Priority'],
    });
    await core.ready();
  });
  afterAll(async () => {
    await core.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('the system classes exist from the start, with upstream values and the default preemption policy', async () => {
    const node = await core.get(classes('system-node-critical'), {}, admin);
    expect(node).toMatchObject({
      value: 2000001000,
      preemptionPolicy: 'PreemptLowerPriority',
      description: 'Used for system critical pods that must not be moved from their current node.',
    });
    expect(node).not.toHaveProperty('globalDefault');
    expect(await core.get(classes('system-cluster-critical'), {}, admin)).toMatchObject({ value: 2000000000 });
  });

  it('validates as upstream: the system- prefix, the highest user value, the policy; value and policy never change', async () => {
    const reserved = await refusal(core.create(classes(), priorityClass('system-mine', 5), {}, admin));
    expect(reserved.status.details?.causes).toEqual([
      {
        reason: 'FieldValueForbidden',
        field: 'metadata.name',
        message:
          "Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class",
      },
    ]);
    const high = await refusal(core.create(classes(), priorityClass('too-high', 1000000001), {}, admin));
    expect(high.status.message).toBe(
      'PriorityClass.scheduling.k8s.io "too-high" is invalid: value: Forbidden: maximum allowed value of a user defined priority is 1000000000',
    );
    const policy = await refusal(core.create(classes(), priorityClass('bad-policy', 1, { preemptionPolicy: 'Sometimes' }), {}, admin));
    expect(policy.status.message).toBe(
      'PriorityClass.scheduling.k8s.io "bad-policy" is invalid: preemptionPolicy: Unsupported value: "Sometimes": supported values: "PreemptLowerPriority", "Never"',
    );

    const created = await core.create(classes(), priorityClass('batch', 100, { preemptionPolicy: 'Never' }), {}, admin);
    const changed = await refusal(core.update(classes('batch'), { ...created.object, value: 101, preemptionPolicy: 'PreemptLowerPriority' }, {}, admin));
    expect(changed.status.details?.causes).toEqual([
      { reason: 'FieldValueForbidden', field: 'value', message: 'Forbidden: may not be changed in an update.' },
      { reason: 'FieldValueInvalid', field: 'preemptionPolicy', message: 'Invalid value: "PreemptLowerPriority": field is immutable' },
    ]);
    const described = await core.update(classes('batch'), { ...created.object, description: 'batch jobs' }, {}, admin);
    expect(described.object).toMatchObject({ value: 100, description: 'batch jobs' });
  });

  it('pods get the priority and preemption policy of their class, 0 without one, and 403 for a missing class or a conflicting value', async () => {
    const plain = await core.create(pods(), pod('plain'), {}, admin);
    expect(plain.object.spec).toMatchObject({ priority: 0, preemptionPolicy: 'PreemptLowerPriority' });
    expect(plain.object.spec).not.toHaveProperty('priorityClassName');
    const batch = await core.create(pods(), pod('batch', { priorityClassName: 'batch' }), {}, admin);
    expect(batch.object.spec).toMatchObject({ priorityClassName: 'batch', priority: 100, preemptionPolicy: 'Never' });
    const critical = await core.create(pods(), pod('critical', { priorityClassName: 'system-cluster-critical', priority: 2000000000 }), {}, admin);
    expect((critical.object.spec as PodSpec).priority).toBe(2000000000);

    const missing = await refusal(core.create(pods(), pod('missing', { priorityClassName: 'nope' }), {}, admin));
    expect(missing.code).toBe(403);
    expect(missing.status.message).toBe('pods "missing" is forbidden: no PriorityClass with name nope was found');
    const wrong = await refusal(core.create(pods(), pod('wrong', { priorityClassName: 'batch', priority: 5 }), {}, admin));
    expect(wrong.status.message).toBe(
      'pods "wrong" is forbidden: the integer value of priority (5) must not be provided in pod spec; priority admission controller computed 100 from the given PriorityClass name',
    );
    const policy = await refusal(core.create(pods(), pod('policy', { priorityClassName: 'batch', preemptionPolicy: 'PreemptLowerPriority' }), {}, admin));
    expect(policy.status.message).toBe(
      'pods "policy" is forbidden: the string value of PreemptionPolicy (PreemptLowerPriority) must not be provided in pod spec; priority admission controller computed Never from the given PriorityClass name',
    );
  });

  it('one global default: new pods without a class take it; a second default is 403', async () => {
    await core.create(classes(), priorityClass('everyone', 10, { globalDefault: true }), {}, admin);
    const second = await refusal(core.create(classes(), priorityClass('another', 20, { globalDefault: true }), {}, admin));
    expect(second.code).toBe(403);
    expect(second.status.message).toBe(
      'priorityclasses.scheduling.k8s.io "another" is forbidden: PriorityClass everyone is marked as default. Only one default can exist',
    );
    const batch = await core.get(classes('batch'), {}, admin);
    expect((await refusal(core.update(classes('batch'), { ...batch, globalDefault: true }, {}, admin))).code).toBe(403);
    // The default itself may be updated.
    const everyone = await core.get(classes('everyone'), {}, admin);
    await core.update(classes('everyone'), { ...everyone, description: 'the default' }, {}, admin);

    const created = await core.create(pods(), pod('defaulted'), {}, admin);
    expect(created.object.spec).toMatchObject({ priorityClassName: 'everyone', priority: 10, preemptionPolicy: 'PreemptLowerPriority' });
  });
});
