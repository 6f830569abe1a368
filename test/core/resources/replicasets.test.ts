import type { ReplicaSet } from '../../../src/core/resources';
import { create, definition, stored, update } from './through-store';

const rsDef = definition('replicasets');

function rs(spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) {
  return {
    metadata: { name: 'web', namespace: 'default', ...metadata },
    spec: {
      selector: { matchLabels: { app: 'web' } },
      template: { metadata: { labels: { app: 'web' } }, spec: { containers: [{ name: 'app', image: 'nginx:1.27' }] } },
      ...spec,
    },
  };
}

describe('replicasets: defaults and create', () => {
  it('defaults replicas to 1 (keeping an explicit 0) and minReadySeconds to 0, its zero value', async () => {
    expect((await create<ReplicaSet>(rsDef, rs())).object.spec.replicas).toBe(1);
    expect((await create<ReplicaSet>(rsDef, rs({ replicas: 0 }))).object.spec.replicas).toBe(0);
    // The default 0 is the zero value, left out as upstream's JSON leaves it.
    expect((await create<ReplicaSet>(rsDef, rs())).object.spec).not.toHaveProperty('minReadySeconds');
    expect((await create<ReplicaSet>(rsDef, rs({ minReadySeconds: 0 }))).object.spec).not.toHaveProperty('minReadySeconds');
    expect((await create<ReplicaSet>(rsDef, rs({ minReadySeconds: 5 }))).object.spec.minReadySeconds).toBe(5);
  });

  it('defaults empty labels to the template labels, and keeps given ones', async () => {
    expect((await create<ReplicaSet>(rsDef, rs())).object.metadata?.labels).toEqual({ app: 'web' });
    expect((await create<ReplicaSet>(rsDef, rs({}, { labels: { own: 'x' } }))).object.metadata?.labels).toEqual({ own: 'x' });
  });

  it('applies pod spec defaults to the template', async () => {
    const { object } = await create<ReplicaSet>(rsDef, rs());
    expect(object.spec.template?.spec).toMatchObject({
      restartPolicy: 'Always',
      dnsPolicy: 'ClusterFirst',
      terminationGracePeriodSeconds: 30,
      schedulerName: 'default-scheduler',
    });
    expect(object.spec.template?.spec?.enableServiceLinks).toBeUndefined();
    expect(object.spec.template?.metadata?.creationTimestamp).toBeNull();
  });

  it('clears status on create', async () => {
    const { object, messages } = await create<ReplicaSet>(rsDef, { ...rs(), status: { replicas: 5, readyReplicas: 5 } });
    expect(messages).toEqual([]);
    expect(object.status).toEqual({ replicas: 0 });
    expect(object.metadata?.generation).toBe(1);
  });
});

describe('replicasets: validation', () => {
  it('requires a selector (which then matches nothing)', async () => {
    expect((await create(rsDef, rs({ selector: undefined }))).messages).toEqual([
      'spec.selector: Required value',
      'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`',
    ]);
  });

  it('refuses an empty selector', async () => {
    expect((await create(rsDef, rs({ selector: {} }))).messages).toEqual([
      'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: empty selector is invalid for deployment',
    ]);
  });

  it('requires the selector to match the template labels', async () => {
    expect((await create(rsDef, rs({ selector: { matchLabels: { app: 'db' } } }))).messages).toEqual([
      'spec.template.metadata.labels: Invalid value: map[string]string{"app":"web"}: `selector` does not match template `labels`',
    ]);
    expect((await create(rsDef, rs({ selector: { matchExpressions: [{ key: 'app', operator: 'In', values: ['web', 'api'] }] } }))).messages).toEqual([]);
  });

  it('reports an invalid selector and skips the template', async () => {
    expect((await create(rsDef, rs({ selector: { matchExpressions: [{ key: 'app', operator: 'In' }] } }))).messages).toEqual([
      "spec.selector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
      'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:"app", Operator:"In", Values:[]string(nil)}}}: invalid label selector',
    ]);
  });

  it('refuses negative counts', async () => {
    expect((await create(rsDef, rs({ replicas: -1, minReadySeconds: -5 }))).messages).toEqual([
      'spec.replicas: Invalid value: -1: must be greater than or equal to 0',
      'spec.minReadySeconds: Invalid value: -5: must be greater than or equal to 0',
    ]);
  });

  it('validates the template as a pod template that always restarts', async () => {
    const template = { metadata: { labels: { app: 'web', 'bad key': 'x' } }, spec: { restartPolicy: 'Never', activeDeadlineSeconds: 10, containers: [] } };
    const { messages } = await create(rsDef, rs({ template }, { labels: { app: 'web' } }));
    expect(messages[0]).toMatch(/^spec.template.labels: Invalid value: "bad key": name part must consist/);
    expect(messages.slice(1)).toEqual([
      'spec.template.spec.containers: Required value',
      'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"',
      'spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported',
    ]);
  });
});

describe('replicasets: updates', () => {
  const old = () => stored<ReplicaSet>(rsDef, rs());

  it('keeps the selector immutable', async () => {
    const o = await old();
    const next = rs({
      selector: { matchLabels: { app: 'web', tier: 'x' } },
      template: { metadata: { labels: { app: 'web', tier: 'x' } }, spec: { containers: [{ name: 'a', image: 'x' }] } },
    });
    expect((await update(rsDef, { ...next, metadata: o.metadata }, o)).messages).toEqual([
      'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web", "tier":"x"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable',
    ]);
  });

  it('ignores status on the main resource', async () => {
    const o = await old();
    const { object, messages } = await update<ReplicaSet>(rsDef, { ...o, spec: { ...o.spec, replicas: 3 }, status: { replicas: 9 } }, o);
    expect(messages).toEqual([]);
    expect(object.spec.replicas).toBe(3);
    expect(object.status).toEqual({ replicas: 0 });
  });

  it('ignores spec on /status and validates the counts', async () => {
    const o = await old();
    const good = await update<ReplicaSet>(
      rsDef,
      {
        ...o,
        spec: { ...o.spec, replicas: 7 },
        status: { replicas: 1, readyReplicas: 1, availableReplicas: 1, fullyLabeledReplicas: 1, observedGeneration: 1 },
      },
      o,
      'status',
    );
    expect(good.messages).toEqual([]);
    expect(good.object.spec.replicas).toBe(1);
    const bad = await update(
      rsDef,
      { ...o, status: { replicas: 1, readyReplicas: 2, availableReplicas: 3, fullyLabeledReplicas: 2, observedGeneration: -1 } },
      o,
      'status',
    );
    expect(bad.messages).toEqual([
      'status.observedGeneration: Invalid value: -1: must be greater than or equal to 0',
      'status.fullyLabeledReplicas: Invalid value: 2: cannot be greater than status.replicas',
      'status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas',
      'status.availableReplicas: Invalid value: 3: cannot be greater than status.replicas',
      'status.availableReplicas: Invalid value: 3: cannot be greater than readyReplicas',
    ]);
    // As upstream: the zero counts then also exceed the negative replicas.
    expect((await update(rsDef, { ...o, status: { replicas: -1 } }, o, 'status')).messages).toEqual([
      'status.replicas: Invalid value: -1: must be greater than or equal to 0',
      'status.fullyLabeledReplicas: Invalid value: 0: cannot be greater than status.replicas',
      'status.readyReplicas: Invalid value: 0: cannot be greater than status.replicas',
      'status.availableReplicas: Invalid value: 0: cannot be greater than status.replicas',
    ]);
  });
});

describe('replicasets: /scale and field selectors', () => {
  it('maps replicas and the selector string', async () => {
    const obj = await stored<ReplicaSet>(
      rsDef,
      rs({ replicas: 2, selector: { matchLabels: { app: 'web' }, matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['b', 'a'] }] } }),
    );
    const scale = rsDef.scale!;
    expect(scale.specReplicas(obj)).toBe(2);
    expect(scale.statusReplicas(obj)).toBe(0);
    expect(scale.selector(obj)).toBe('app=web,tier notin (a,b)');
    scale.setSpecReplicas(obj, 5);
    expect(obj.spec.replicas).toBe(5);
    expect(rsDef.selectableFields?.(obj)).toEqual({ 'status.replicas': '0' });
  });
});
