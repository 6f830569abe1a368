/**
 * ValidatingAdmissionPolicy through a real core (embedded store): CEL validations with
 * messages, messageExpression and reasons, parameters by name and by selector with both
 * parameterNotFoundAction values, match conditions, variables, audit annotations, each
 * validation action, failure policies, and binding match resources. Messages are upstream's.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createCore, type ApiObject, type Core, type RequestContext } from '../../../src/core';
import { createStore } from '../../../src/store';
import { createNaming } from '../../../src/naming';
import { at, refusal } from './support';
import { Registry } from 'prom-client';
import { admissionMetrics } from '../../../src/server/admission-metrics';

const naming = createNaming('kubernetes');
const AR = 'admissionregistration.k8s.io';
const admin: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };
const configMap = (name: string, data: Record<string, string> = {}, labels?: Record<string, string>): ApiObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, ...(labels ? { labels } : {}) },
  data,
});

let dir: string;
let core: Core;
let n = 0;
/** The server's admission metrics, fed by this file's core. */
const metrics = new Registry();

async function namespace(): Promise<string> {
  const name = `p${++n}`;
  await core.create(at('namespaces'), { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels: { test: name } } }, {}, admin);
  return name;
}

/** A policy on configmaps of namespace `t` and its binding; resolves once both are in effect. */
async function policy(t: string, spec: Record<string, unknown>, binding: Record<string, unknown> = {}): Promise<void> {
  const name = `policy-${t}`;
  await core.create(
    at('validatingadmissionpolicies', undefined, undefined, AR),
    {
      apiVersion: `${AR}/v1`,
      kind: 'ValidatingAdmissionPolicy',
      metadata: { name },
      spec: {
        matchConstraints: {
          resourceRules: [{ operations: ['CREATE', 'UPDATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
          namespaceSelector: { matchLabels: { test: t } },
        },
        ...spec,
      },
    },
    {},
    admin,
  );
  const { object } = await core.create(
    at('validatingadmissionpolicybindings', undefined, undefined, AR),
    {
      apiVersion: `${AR}/v1`,
      kind: 'ValidatingAdmissionPolicyBinding',
      metadata: { name: `binding-${t}` },
      spec: { policyName: name, validationActions: ['Deny'], ...binding },
    },
    {},
    admin,
  );
  expect(await core.state!().admissionFresh(Number(object.metadata!.resourceVersion), 5000)).toBe(true);
}

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'keelson-policies-'));
  core = createCore({ store: createStore({ kind: 'embedded', dataDir: dir }), naming, compactionIntervalMs: 0, admissionMetrics: admissionMetrics(metrics) });
  await core.ready();
});

afterAll(async () => {
  await core.close();
  await fs.rm(dir, { recursive: true, force: true });
});

test('a failed validation denies with its message and reason; the default message names the expression', async () => {
  const t = await namespace();
  await policy(t, {
    validations: [
      { expression: "!has(object.data) || !('forbidden' in object.data)", message: 'the key forbidden is not allowed', reason: 'Forbidden' },
      { expression: 'object.metadata.name.size() <= 10' },
    ],
  });
  await core.create(at('configmaps', t), configMap('fine', { ok: '1' }), {}, admin);
  const forbidden = await refusal(core.create(at('configmaps', t), configMap('bad', { forbidden: '1' }), {}, admin));
  expect(forbidden.status).toMatchObject({
    code: 403,
    reason: 'Forbidden',
    message: `configmaps "bad" is forbidden: ValidatingAdmissionPolicy 'policy-${t}' with binding 'binding-${t}' denied request: the key forbidden is not allowed`,
  });
  expect(forbidden.status.details).toEqual({
    name: 'bad',
    group: '',
    kind: 'configmaps',
    causes: [{ message: `ValidatingAdmissionPolicy 'policy-${t}' with binding 'binding-${t}' denied request: the key forbidden is not allowed` }],
  });
  const long = await refusal(core.create(at('configmaps', t), configMap('a-very-long-name'), {}, admin));
  expect(long.status).toMatchObject({
    code: 422,
    reason: 'Invalid',
    message: `configmaps "a-very-long-name" is forbidden: ValidatingAdmissionPolicy 'policy-${t}' with binding 'binding-${t}' denied request: failed expression: object.metadata.name.size() <= 10`,
  });
  expect((await core.list(at('configmaps', t), {}, admin)).items.map((o) => o.metadata!.name)).toEqual(['fine']);
});

test('messageExpression, variables, oldObject and the request', async () => {
  const t = await namespace();
  await policy(t, {
    variables: [{ name: 'size', expression: 'has(object.data) ? object.data.size() : 0' }],
    validations: [
      { expression: 'variables.size <= 2', messageExpression: "'too many keys: ' + string(variables.size)" },
      { expression: "oldObject == null || object.data['v'] >= oldObject.data['v']", message: 'v may only grow' },
      { expression: "request.userInfo.username != 'mallory'", message: 'not you' },
    ],
  });
  const many = await refusal(core.create(at('configmaps', t), configMap('m', { a: '1', b: '2', c: '3' }), {}, admin));
  expect(many.status.message).toBe(
    `configmaps "m" is forbidden: ValidatingAdmissionPolicy 'policy-${t}' with binding 'binding-${t}' denied request: too many keys: 3`,
  );
  const { object } = await core.create(at('configmaps', t), configMap('grow', { v: '5' }), {}, admin);
  const shrink = await refusal(core.update(at('configmaps', t, 'grow'), { ...object, data: { v: '4' } }, {}, admin));
  expect(shrink.status.message).toBe(
    `configmaps "grow" is forbidden: ValidatingAdmissionPolicy 'policy-${t}' with binding 'binding-${t}' denied request: v may only grow`,
  );
  const mallory = await refusal(core.create(at('configmaps', t), configMap('x'), {}, { user: { username: 'mallory', groups: ['system:masters'] } }));
  expect(mallory.status.message).toBe(
    `configmaps "x" is forbidden: ValidatingAdmissionPolicy 'policy-${t}' with binding 'binding-${t}' denied request: not you`,
  );
});

test('parameters by name: the binding chooses the object; a missing one follows parameterNotFoundAction', async () => {
  const t = await namespace();
  await core.create(at('configmaps', t), configMap('limits', { maxKeys: '1' }), {}, admin);
  await policy(
    t,
    {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      matchConstraints: {
        resourceRules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
        namespaceSelector: { matchLabels: { test: t } },
        objectSelector: { matchLabels: { checked: 'yes' } },
      },
      validations: [{ expression: 'object.data.size() <= int(params.data.maxKeys)', messageExpression: "'at most ' + params.data.maxKeys + ' keys'" }],
    },
    { paramRef: { name: 'limits', parameterNotFoundAction: 'Deny' } },
  );
  await core.create(at('configmaps', t), configMap('one', { a: '1' }, { checked: 'yes' }), {}, admin);
  const two = await refusal(core.create(at('configmaps', t), configMap('two', { a: '1', b: '2' }, { checked: 'yes' }), {}, admin));
  expect(two.status.message).toBe(
    `configmaps "two" is forbidden: ValidatingAdmissionPolicy 'policy-${t}' with binding 'binding-${t}' denied request: at most 1 keys`,
  );

  await core.delete(at('configmaps', t, 'limits'), {}, admin);
  const missing = await refusal(core.create(at('configmaps', t), configMap('three', { a: '1' }, { checked: 'yes' }), {}, admin));
  expect(missing.status.code).toBe(422);
  expect(missing.status.message).toBe(
    `configmaps "three" is forbidden: ValidatingAdmissionPolicy 'policy-${t}' with binding 'binding-${t}' denied request: failed to configure binding: no params found for policy binding with \`Deny\` parameterNotFoundAction`,
  );
  const binding = await core.get(at('validatingadmissionpolicybindings', undefined, `binding-${t}`, AR), {}, admin);
  const { object } = await core.update(
    at('validatingadmissionpolicybindings', undefined, `binding-${t}`, AR),
    { ...binding, spec: { ...(binding.spec as object), paramRef: { name: 'limits', parameterNotFoundAction: 'Allow' } } },
    {},
    admin,
  );
  expect(await core.state!().admissionFresh(Number(object.metadata!.resourceVersion), 5000)).toBe(true);
  await core.create(at('configmaps', t), configMap('four', { a: '1', b: '2' }, { checked: 'yes' }), {}, admin);
});

test('parameters by selector: every selected object must pass', async () => {
  const t = await namespace();
  await core.create(at('configmaps', t), configMap('rule-a', { banned: 'x' }, { role: 'rule' }), {}, admin);
  await core.create(at('configmaps', t), configMap('rule-b', { banned: 'y' }, { role: 'rule' }), {}, admin);
  await policy(
    t,
    {
      paramKind: { apiVersion: 'v1', kind: 'ConfigMap' },
      matchConstraints: {
        resourceRules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['configmaps'] }],
        namespaceSelector: { matchLabels: { test: t } },
        objectSelector: { matchExpressions: [{ key: 'role', operator: 'DoesNotExist' }] },
      },
      validations: [
        { expression: '!(params.data.banned in object.data)', messageExpression: "'key ' + params.data.banned + ' is banned by ' + params.metadata.name" },
      ],
    },
    { paramRef: { selector: { matchLabels: { role: 'rule' } }, parameterNotFoundAction: 'Deny' } },
  );
  await core.create(at('configmaps', t), configMap('ok', { z: '1' }), {}, admin);
  const y = await refusal(core.create(at('configmaps', t), configMap('has-y', { y: '1' }), {}, admin));
  expect(y.status.message).toBe(
    `configmaps "has-y" is forbidden: ValidatingAdmissionPolicy 'policy-${t}' with binding 'binding-${t}' denied request: key y is banned by rule-b`,
  );
});

test('Warn and Audit act without refusing; auditAnnotations are keyed by the policy', async () => {
  const t = await namespace();
  await policy(
    t,
    {
      validations: [{ expression: "has(object.metadata.labels) && 'owner' in object.metadata.labels", message: 'an owner label is expected' }],
      auditAnnotations: [{ key: 'keys', valueExpression: "'keys=' + string(has(object.data) ? object.data.size() : 0)" }],
    },
    { validationActions: ['Warn', 'Audit'] },
  );
  const annotations: Record<string, string> = {};
  const ctx: RequestContext = { ...admin, warnings: [], annotate: (k, v) => void (annotations[k] = v) };
  await core.create(at('configmaps', t), configMap('no-owner', { a: '1' }), {}, ctx);
  expect(ctx.warnings).toEqual([`Validation failed for ValidatingAdmissionPolicy 'policy-${t}' with binding 'binding-${t}': an owner label is expected`]);
  expect(annotations[`policy-${t}/keys`]).toBe('keys=1');
  expect(JSON.parse(annotations['validation.policy.admission.k8s.io/validation_failure']!)).toEqual([
    { message: 'an owner label is expected', policy: `policy-${t}`, binding: `binding-${t}`, expressionIndex: 0, validationActions: ['Warn', 'Audit'] },
  ]);
});

test("failed validations are counted in upstream's policy check metrics, by the action taken and the kind of error", async () => {
  const t = await namespace();
  await policy(t, { validations: [{ expression: "object.data['v'] == 'ok'", message: 'v must be ok' }] }, { validationActions: ['Deny', 'Audit'] });
  const u = await namespace();
  await policy(u, { failurePolicy: 'Ignore', validations: [{ expression: "object.data['missing'] == 'x'" }] }, { validationActions: ['Warn'] });
  await core.create(at('configmaps', t), configMap('passes', { v: 'ok' }), {}, admin);
  await refusal(core.create(at('configmaps', t), configMap('fails', { v: 'no' }), {}, admin));
  await refusal(core.create(at('configmaps', t), configMap('errs', {}), {}, admin));
  await core.create(at('configmaps', u), configMap('ignored', {}), {}, admin);
  const lines = (await metrics.metrics()).split('\n');
  const count = (labels: string) =>
    lines
      .find((l) => l.startsWith(`apiserver_validating_admission_policy_check_total{${labels}}`))
      ?.split(' ')
      .pop();
  expect(count(`policy="policy-${t}",policy_binding="binding-${t}",error_type="no_error",enforcement_action="deny"`)).toBe('1');
  expect(count(`policy="policy-${t}",policy_binding="binding-${t}",error_type="no_error",enforcement_action="audit"`)).toBe('1');
  expect(count(`policy="policy-${t}",policy_binding="binding-${t}",error_type="invalid_error",enforcement_action="deny"`)).toBe('1');
  expect(count(`policy="policy-${t}",policy_binding="binding-${t}",error_type="invalid_error",enforcement_action="audit"`)).toBe('1');
  expect(count(`policy="policy-${u}",policy_binding="binding-${u}",error_type="invalid_error",enforcement_action="allow"`)).toBe('1');
  expect(lines.filter((l) => l.startsWith(`apiserver_validating_admission_policy_check_duration_seconds_count{policy="policy-${t}"`))).toHaveLength(4);
});

test('match conditions skip the policy; an expression that fails follows failurePolicy', async () => {
  const t = await namespace();
  await policy(t, {
    matchConditions: [{ name: 'not-exempt', expression: "!has(object.metadata.labels) || !('exempt' in object.metadata.labels)" }],
    validations: [{ expression: "object.data['required'] == 'yes'", message: 'required must be yes' }],
  });
  await core.create(at('configmaps', t), configMap('exempt', {}, { exempt: 'true' }), {}, admin);
  const err = await refusal(core.create(at('configmaps', t), configMap('no-key', { other: '1' }), {}, admin));
  expect(err.status.code).toBe(422);
  expect(err.status.message).toMatch(
    new RegExp(
      `^configmaps "no-key" is forbidden: ValidatingAdmissionPolicy 'policy-${t}' with binding 'binding-${t}' denied request: expression 'object.data\\['required'\\] == 'yes'' resulted in error: `,
    ),
  );

  const u = await namespace();
  await policy(u, { failurePolicy: 'Ignore', validations: [{ expression: "object.data['required'] == 'yes'" }] });
  await core.create(at('configmaps', u), configMap('no-key', { other: '1' }), {}, admin);
});

test("Kubernetes' CEL libraries in validations: quantities, lists, regular expressions and sets", async () => {
  const t = await namespace();
  const has = (key: string) => `!has(object.data) || !('${key}' in object.data) || `;
  await policy(t, {
    validations: [
      {
        expression: `${has('memory')}quantity(object.data.memory).isLessThan(quantity('1Gi'))`,
        messageExpression: "'memory ' + object.data.memory + ' is not below 1Gi'",
      },
      { expression: `${has('ports')}object.data.ports.split(',').map(p, int(p)).isSorted()`, message: 'ports must be in order' },
      { expression: `${has('image')}object.data.image.find('^[a-z0-9./-]+') == object.data.image`, message: 'image has characters it may not have' },
      { expression: `${has('tags')}sets.contains(['blue', 'green'], object.data.tags.split(','))`, message: 'unknown tag' },
    ],
  });
  await core.create(at('configmaps', t), configMap('fine', { memory: '512Mi', ports: '80,443,8080', image: 'registry.local/app', tags: 'green' }), {}, admin);
  const denied = async (name: string, data: Record<string, string>) =>
    (await refusal(core.create(at('configmaps', t), configMap(name, data), {}, admin))).status.message;
  const prefix = (name: string) => `configmaps "${name}" is forbidden: ValidatingAdmissionPolicy 'policy-${t}' with binding 'binding-${t}' denied request: `;
  expect(await denied('big', { memory: '1.5G' })).toBe(`${prefix('big')}memory 1.5G is not below 1Gi`);
  expect(await denied('exact', { memory: '1024Mi' })).toBe(`${prefix('exact')}memory 1024Mi is not below 1Gi`);
  expect(await denied('order', { ports: '443,80' })).toBe(`${prefix('order')}ports must be in order`);
  expect(await denied('image', { image: 'App:latest' })).toBe(`${prefix('image')}image has characters it may not have`);
  expect(await denied('tags', { tags: 'green,red' })).toBe(`${prefix('tags')}unknown tag`);
  // Not a quantity: the expression's error, in the parser's words (failurePolicy Fail).
  expect(await denied('garbage', { memory: 'lots' })).toBe(
    `${prefix('garbage')}expression '${has('memory')}quantity(object.data.memory).isLessThan(quantity('1Gi'))' resulted in error: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
  );
});

test('variables keep their CEL types: an int stays an int, a map a map, a quantity a quantity', async () => {
  const t = await namespace();
  await policy(t, {
    variables: [
      { name: 'count', expression: 'has(object.data) ? object.data.size() : 0' },
      { name: 'labels', expression: 'has(object.metadata.labels) ? object.metadata.labels : {}' },
      { name: 'limit', expression: "quantity('2')" },
    ],
    validations: [
      { expression: 'variables.count + 1 <= 3', messageExpression: "'count+1 is ' + string(variables.count + 1)" },
      { expression: "!('team' in variables.labels) || variables.labels['team'] == 'core'", message: 'team must be core' },
      { expression: 'quantity(string(variables.count)).compareTo(variables.limit) <= 0', message: 'more keys than the limit' },
    ],
  });
  await core.create(at('configmaps', t), configMap('ok', { a: '1' }, { team: 'core' }), {}, admin);
  const prefix = (name: string) => `configmaps "${name}" is forbidden: ValidatingAdmissionPolicy 'policy-${t}' with binding 'binding-${t}' denied request: `;
  expect((await refusal(core.create(at('configmaps', t), configMap('many', { a: '1', b: '2', c: '3' }), {}, admin))).status.message).toBe(
    `${prefix('many')}count+1 is 4`,
  );
  expect((await refusal(core.create(at('configmaps', t), configMap('team', {}, { team: 'web' }), {}, admin))).status.message).toBe(
    `${prefix('team')}team must be core`,
  );
});

test("the binding's matchResources narrows what the policy matches", async () => {
  const t = await namespace();
  await policy(t, { validations: [{ expression: 'false', message: 'never' }] }, { matchResources: { objectSelector: { matchLabels: { strict: 'yes' } } } });
  await core.create(at('configmaps', t), configMap('loose'), {}, admin);
  const strict = await refusal(core.create(at('configmaps', t), configMap('strict', {}, { strict: 'yes' }), {}, admin));
  expect(strict.status.message).toBe(
    `configmaps "strict" is forbidden: ValidatingAdmissionPolicy 'policy-${t}' with binding 'binding-${t}' denied request: never`,
  );
});

test('a policy on the events group, matching Equivalent, sees a core group Event converted; with Exact it does not match it', async () => {
  const t = await namespace();
  const u = await namespace();
  const rules = [{ operations: ['CREATE'], apiGroups: ['events.k8s.io'], apiVersions: ['v1'], resources: ['events'] }];
  const validations = [{ expression: "object.note != 'forbidden' && request.requestKind.group == ''", message: 'no forbidden notes from the core group' }];
  await policy(t, { matchConstraints: { resourceRules: rules, namespaceSelector: { matchLabels: { test: t } } }, validations });
  await policy(u, { matchConstraints: { resourceRules: rules, namespaceSelector: { matchLabels: { test: u } }, matchPolicy: 'Exact' }, validations });
  const coreEvent = (ns: string, name: string, message: string): ApiObject => ({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name },
    involvedObject: { kind: 'Pod', name: 'p', namespace: ns },
    reason: 'R',
    message,
  });
  await core.create(at('events', t), coreEvent(t, 'fine', 'allowed'), {}, admin);
  const denied = await refusal(core.create(at('events', t), coreEvent(t, 'bad', 'forbidden'), {}, admin));
  expect(denied.status).toMatchObject({
    code: 422,
    message: `events "bad" is forbidden: ValidatingAdmissionPolicy 'policy-${t}' with binding 'binding-${t}' denied request: no forbidden notes from the core group`,
  });
  await core.create(at('events', u), coreEvent(u, 'not-matched', 'forbidden'), {}, admin);
});
