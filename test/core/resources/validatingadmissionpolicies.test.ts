/**
 * ValidatingAdmissionPolicy and its bindings through the real generic store: upstream's defaults,
 * ValidateValidatingAdmissionPolicy(Binding) in upstream's words and paths, the `/status`
 * sub-strategy, generation, and the printers' columns for all four admissionregistration kinds.
 */
import type { ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding } from '../../../src/core/resources';
import { buildTable } from '../../../src/core/table';
import { create, definition, stored, update } from './through-store';

const policies = definition('validatingadmissionpolicies');
const bindings = definition('validatingadmissionpolicybindings');

const RULES = [{ operations: ['CREATE', 'UPDATE'], apiGroups: ['apps'], apiVersions: ['v1'], resources: ['deployments'] }];

function policy(spec: Record<string, unknown> = {}, name = 'replicas-limit') {
  return { metadata: { name }, spec: { matchConstraints: { resourceRules: RULES }, validations: [{ expression: 'object.spec.replicas <= 5' }], ...spec } };
}

const policyMessages = async (spec: Record<string, unknown>, name?: string) => (await create<ValidatingAdmissionPolicy>(policies, policy(spec, name))).messages;

function binding(spec: Record<string, unknown> = {}) {
  return { metadata: { name: 'replicas-limit-binding' }, spec: { policyName: 'replicas-limit', validationActions: ['Deny'], ...spec } };
}

const bindingMessages = async (spec: Record<string, unknown>) => (await create<ValidatingAdmissionPolicyBinding>(bindings, binding(spec))).messages;

describe('ValidatingAdmissionPolicy defaults and strategy', () => {
  it('defaults failurePolicy and matchConstraints (matchPolicy, selectors, rule scope), starts at generation 1 with an empty status', async () => {
    const { object, messages } = await create<ValidatingAdmissionPolicy>(policies, { ...policy(), status: { observedGeneration: 9 } });
    expect(messages).toEqual([]);
    expect(object.spec).toMatchObject({
      failurePolicy: 'Fail',
      matchConstraints: { matchPolicy: 'Equivalent', namespaceSelector: {}, objectSelector: {}, resourceRules: [{ ...RULES[0], scope: '*' }] },
    });
    expect(object.status).toEqual({});
    expect(object.metadata?.generation).toBe(1);
  });

  it('bumps the generation on spec changes, keeps status out of main updates and spec out of /status', async () => {
    const current = await stored<ValidatingAdmissionPolicy>(policies, policy({}, 'stored'));
    const changed = await update<ValidatingAdmissionPolicy>(
      policies,
      { ...current, spec: { ...current.spec, failurePolicy: 'Ignore' }, status: { observedGeneration: 3 } },
      current,
    );
    expect(changed.errors).toEqual([]);
    expect(changed.object.metadata?.generation).toBe(2);
    expect(changed.object.status).toEqual({});

    const status = { observedGeneration: 1, typeChecking: { expressionWarnings: [{ fieldRef: 'spec.validations[0].expression', warning: 'no such field' }] } };
    const viaStatus = await update<ValidatingAdmissionPolicy>(
      policies,
      { ...current, spec: { ...current.spec, failurePolicy: 'Ignore' }, status },
      current,
      'status',
    );
    expect(viaStatus.errors).toEqual([]);
    expect(viaStatus.object.spec?.failurePolicy).toBe('Fail');
    expect(viaStatus.object.status).toEqual(status);
    expect(viaStatus.object.metadata?.generation).toBe(1);
  });

  it('validates the status: expression warnings and conditions', async () => {
    const current = await stored<ValidatingAdmissionPolicy>(policies, policy({}, 'stored'));
    const condition = { type: 'Ready', status: 'Maybe', lastTransitionTime: null, reason: '', message: '' };
    const status = {
      typeChecking: {
        expressionWarnings: [
          { fieldRef: '', warning: '' },
          { fieldRef: 'spec.validations[0', warning: 'w' },
        ],
      },
      conditions: [condition, { ...condition }],
    };
    expect((await update(policies, { ...current, status }, current, 'status')).messages).toEqual([
      'status.typeChecking.expressionWarnings[0].warning: Required value',
      'status.typeChecking.expressionWarnings[0].fieldRef: Required value',
      'status.typeChecking.expressionWarnings[1].fieldRef: Invalid value: "spec.validations[0": invalid JSONPath: unclosed array expect ]',
      'status.conditions[0].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"',
      'status.conditions[0].lastTransitionTime: Required value: must be set',
      'status.conditions[0].reason: Required value: must be set',
      'status.conditions[1].type: Duplicate value: "Ready"',
      'status.conditions[1].status: Unsupported value: "Maybe": supported values: "False", "True", "Unknown"',
      'status.conditions[1].lastTransitionTime: Required value: must be set',
      'status.conditions[1].reason: Required value: must be set',
    ]);
  });
});

describe('ValidatingAdmissionPolicy validation', () => {
  it('needs matchConstraints with resource rules, and validations or audit annotations', async () => {
    expect(await policyMessages({ matchConstraints: undefined })).toEqual(['spec.matchConstraints: Required value']);
    expect(await policyMessages({ matchConstraints: {} })).toEqual(['spec.matchConstraints.resourceRules: Required value']);
    expect(await policyMessages({ validations: [] })).toEqual([
      'spec.validations: Required value: validations or auditAnnotations must contain at least one item',
      'spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item',
    ]);
  });

  it('checks failurePolicy, matchPolicy, resource rules and resource names', async () => {
    const rule = { ...RULES[0], resourceNames: ['a', 'a', 'b/c'] };
    expect(
      await policyMessages({
        failurePolicy: 'Sometimes',
        matchConstraints: { matchPolicy: 'Fuzzy', resourceRules: [rule], excludeResourceRules: [{ ...RULES[0], operations: [] }] },
      }),
    ).toEqual([
      'spec.failurePolicy: Unsupported value: "Sometimes": supported values: "Fail", "Ignore"',
      'spec.matchConstraints.matchPolicy: Unsupported value: "Fuzzy": supported values: "Equivalent", "Exact"',
      'spec.matchConstraints.resourceRules[0].resourceNames[1]: Duplicate value: "a"',
      `spec.matchConstraints.resourceRules[0].resourceNames[2]: Invalid value: "b/c": may not contain '/'`,
      'spec.matchConstraints.excludeResourceRules[0].operations: Required value',
    ]);
  });

  it('checks paramKind: a group/version and a kind', async () => {
    expect(await policyMessages({ paramKind: {} })).toEqual(['spec.paramKind.apiVersion: Required value', 'spec.paramKind.kind: Required value']);
    expect(await policyMessages({ paramKind: { apiVersion: 'a/b/c', kind: 'ConfigMap' } })).toEqual([
      'spec.paramKind.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
    ]);
    expect(await policyMessages({ paramKind: { apiVersion: 'example.com/', kind: 'my_kind' } })).toEqual([
      'spec.paramKind.apiVersion: Invalid value: "example.com/": version must be specified',
      expect.stringMatching(/^spec\.paramKind\.kind: Invalid value: "my_kind": may have mixed case, but should otherwise match: a DNS-1035 label/),
    ]);
    expect(await policyMessages({ paramKind: { apiVersion: 'v1', kind: 'ConfigMap' }, validations: [{ expression: 'params.data.max > 1' }] })).toEqual([]);
  });

  it('compiles validations: params only with a paramKind, messageExpression to a string, messages on one line, known reasons', async () => {
    expect(await policyMessages({ validations: [{ expression: 'params.max > 1' }] })).toEqual([
      "spec.validations[0].expression: Invalid value: \"params.max > 1\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'params' (in container '')\n | params.max > 1\n | ^",
    ]);
    expect(await policyMessages({ validations: [{ expression: ' ' }] })).toEqual([
      'spec.validations[0].expression: Required value: expression is not specified',
    ]);
    expect(await policyMessages({ validations: [{ expression: 'true', messageExpression: ' ', message: 'two\nlines', reason: 'Teapot' }] })).toEqual([
      'spec.validations[0].messageExpression: Invalid value: " ": must be non-empty if specified',
      'spec.validations[0].message: Invalid value: "two\\nlines": message must not contain line breaks',
      'spec.validations[0].reason: Unsupported value: "Teapot": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge"',
    ]);
    expect(await policyMessages({ validations: [{ expression: 'true', messageExpression: 'true' }] })).toEqual([
      'spec.validations[0].messageExpression: Invalid value: "true": must evaluate to string',
    ]);
    expect(
      await policyMessages({ validations: [{ expression: 'true', messageExpression: "'too many: ' + string(object.spec.replicas)", reason: 'Invalid' }] }),
    ).toEqual([]);
    // The authorizer is there for validations, not for message expressions.
    expect((await policyMessages({ validations: [{ expression: 'true', messageExpression: "authorizer.path('/x').check('get').reason()" }] }))[0]).toMatch(
      /undeclared reference to 'authorizer'/,
    );
  });

  it("refuses a call of a function no library has; the Kubernetes libraries' functions compile", async () => {
    expect(await policyMessages({ validations: [{ expression: "quantityy('1') != null" }] })).toEqual([
      "spec.validations[0].expression: Invalid value: \"quantityy('1') != null\": compilation failed: ERROR: <input>:1:10: undeclared reference to 'quantityy' (in container '')\n | quantityy('1') != null\n | .........^",
    ]);
    expect((await policyMessages({ validations: [{ expression: 'object.spec.replicas.isBig()' }] }))[0]).toMatch(/undeclared reference to 'isBig'/);
    const fine = [
      "quantity('1Gi').isGreaterThan(quantity('1G'))",
      "[1, 2].isSorted() && [1, 2].sum() == 3 && 'a1'.find('[0-9]') == '1'",
      "url('https://x/').getHost() == 'x' && ip('::1').isLoopback() && cidr('10.0.0.0/8').containsIP('10.1.2.3')",
      "sets.contains([1, 2], [1]) && isQuantity('1') && isURL('/a') && isIP('1.2.3.4') && isCIDR('::/0')",
      // Upstream's authorizer and optional methods compile here too (they fail when evaluated).
      "authorizer.group('apps').resource('deployments').check('create').allowed()",
    ];
    for (const expression of fine) expect(await policyMessages({ validations: [{ expression }] })).toEqual([]);
  });

  it('checks variables and lets expressions use them', async () => {
    expect(
      await policyMessages({ variables: [{ name: 'replicas', expression: 'object.spec.replicas' }], validations: [{ expression: 'variables.replicas < 5' }] }),
    ).toEqual([]);
    expect(await policyMessages({ validations: [{ expression: 'variables.replicas < 5' }] })).toEqual([
      "spec.validations[0].expression: Invalid value: \"variables.replicas < 5\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'variables' (in container '')\n | variables.replicas < 5\n | ^",
    ]);
    expect(
      await policyMessages({
        variables: [
          { name: 'in', expression: '1' },
          { name: '', expression: '' },
        ],
      }),
    ).toEqual([
      'spec.variables[0].name: Invalid value: "in": name is not a valid CEL identifier',
      'spec.variables[1].name: Required value: name is not specified',
      'spec.variables[1].expression: Required value: expression is not specified',
    ]);
  });

  it('checks audit annotations: keys qualified with the policy name and unique, value expressions present and short enough', async () => {
    const audit = (key: string, valueExpression: string) => ({ key, valueExpression });
    expect(await policyMessages({ validations: [], auditAnnotations: [audit('replicas', "'x'"), audit('replicas', 'string(object.spec.replicas)')] })).toEqual([
      'spec.auditAnnotations[1].key: Duplicate value: "replicas"',
    ]);
    expect(await policyMessages({ auditAnnotations: [audit('bad key', ''), audit('k', 'x'.repeat(5121)), audit('b', 'true')] })).toEqual([
      expect.stringMatching(/^spec\.auditAnnotations\[0\]\.key: Invalid value: "replicas-limit\/bad key": name part must consist of/),
      'spec.auditAnnotations[0].valueExpression: Required value: valueExpression is not specified',
      'spec.auditAnnotations[1].valueExpression: Required value: must not exceed 5120 bytes in length',
      'spec.auditAnnotations[2].valueExpression: Invalid value: "true": must evaluate to one of [string null_type]',
    ]);
    const many = Array.from({ length: 21 }, (_, i) => audit(`k${i}`, 'null'));
    const messages = await policyMessages({ auditAnnotations: many });
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(
      /^spec\.auditAnnotations: Invalid value: \[\]admissionregistration\.AuditAnnotation\{admissionregistration\.AuditAnnotation\{Key:"k0", ValueExpression:"null"\}, .*: must not have more than 20 auditAnnotations$/,
    );
  });

  it('checks match conditions, with params allowed once there is a paramKind', async () => {
    const conditions = [{ name: 'not-system', expression: 'params.skip != request.namespace' }];
    expect((await policyMessages({ matchConditions: conditions }))[0]).toMatch(
      /^spec\.matchConditions\[0\]\.expression: Invalid value: .*undeclared reference to 'params'/,
    );
    expect(await policyMessages({ matchConditions: conditions, paramKind: { apiVersion: 'v1', kind: 'ConfigMap' } })).toEqual([]);
  });

  it('re-checks match conditions on update only when they or the paramKind change', async () => {
    const old = policy({ matchConditions: [{ name: 'm', expression: 'params.x' }], paramKind: { apiVersion: 'v1', kind: 'ConfigMap' } }, 'ratchet');
    const withoutParams = policy({ matchConditions: [{ name: 'm', expression: 'params.x' }] }, 'ratchet');
    expect((await update(policies, { ...old, spec: { ...old.spec, failurePolicy: 'Ignore' } }, old)).messages).toEqual([]);
    expect((await update(policies, withoutParams, old)).messages[0]).toMatch(/undeclared reference to 'params'/);
  });
});

describe('ValidatingAdmissionPolicyBinding', () => {
  it('defaults matchResources when present, nothing else (parameterNotFoundAction is required, not defaulted)', async () => {
    const { object, messages } = await create<ValidatingAdmissionPolicyBinding>(bindings, binding({ matchResources: { resourceRules: RULES } }));
    expect(messages).toEqual([]);
    expect(object.spec?.matchResources).toEqual({
      matchPolicy: 'Equivalent',
      namespaceSelector: {},
      objectSelector: {},
      resourceRules: [{ ...RULES[0], scope: '*' }],
    });
    expect(object.metadata?.generation).toBe(1);
    expect(await bindingMessages({ paramRef: { name: 'limits' } })).toEqual(['spec.paramRef.parameterNotFoundAction: Required value']);
  });

  it('checks policyName, paramRef and its action', async () => {
    expect(await bindingMessages({ policyName: '' })).toEqual(['spec.policyName: Required value']);
    expect((await bindingMessages({ policyName: 'Bad_Name' }))[0]).toMatch(/^spec\.policyName: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/);
    expect(await bindingMessages({ paramRef: { name: 'a/b', selector: {}, parameterNotFoundAction: 'Ignore' } })).toEqual([
      `spec.paramRef.name: Invalid value: "a/b": may not contain '/'`,
      'spec.paramRef.name: Forbidden: name and selector are mutually exclusive',
      'spec.paramRef.selector: Forbidden: name and selector are mutually exclusive',
      'spec.paramRef.parameterNotFoundAction: Unsupported value: "Ignore": supported values: "Deny", "Allow"',
    ]);
    expect(await bindingMessages({ paramRef: { parameterNotFoundAction: 'Deny' } })).toEqual([
      'spec.paramRef: Required value: one of name or selector must be specified',
    ]);
    expect(await bindingMessages({ paramRef: { selector: { matchLabels: { tier: 'prod' } }, parameterNotFoundAction: 'Allow' } })).toEqual([]);
  });

  it('checks validationActions: at least one of Deny, Warn, Audit, no repeats, not Deny with Warn', async () => {
    expect(await bindingMessages({ validationActions: [] })).toEqual(['spec.validationActions: Required value: at least one validation action is required']);
    expect(await bindingMessages({ validationActions: ['Deny', 'Warn', 'Warn', 'Block'] })).toEqual([
      'spec.validationActions[2]: Duplicate value: "Warn"',
      'spec.validationActions[3]: Unsupported value: "Block": supported values: "Audit", "Deny", "Warn"',
      'spec.validationActions: Invalid value: []admissionregistration.ValidationAction{"Deny", "Warn", "Warn", "Block"}: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)',
    ]);
    expect(await bindingMessages({ validationActions: ['Warn', 'Audit'] })).toEqual([]);
  });

  it("reports matchResources problems under upstream's `matchResouces` path", async () => {
    expect(await bindingMessages({ matchResources: { matchPolicy: 'Fuzzy' } })).toEqual([
      'spec.matchResouces.matchPolicy: Unsupported value: "Fuzzy": supported values: "Equivalent", "Exact"',
    ]);
  });

  it('bumps the generation on spec changes', async () => {
    const current = await stored<ValidatingAdmissionPolicyBinding>(bindings, { ...binding(), metadata: { name: 'stored' } });
    const { object, errors } = await update<ValidatingAdmissionPolicyBinding>(
      bindings,
      { ...current, spec: { ...current.spec, validationActions: ['Audit'] } },
      current,
    );
    expect(errors).toEqual([]);
    expect(object.metadata?.generation).toBe(2);
  });
});

describe('tables (upstream printers)', () => {
  const NOW = Date.parse('2026-01-01T12:00:00Z');
  const table = (resource: string, obj: object) => {
    const d = definition(resource);
    return buildTable(obj as never, d.table as never, {
      metaApiVersion: 'meta.k8s.io/v1',
      apiVersion: `${d.group}/${d.version}`,
      kind: d.kind,
      ctx: { now: NOW },
    });
  };
  const meta = { name: 'x', creationTimestamp: '2026-01-01T11:58:00Z' };

  it.each([
    ['mutatingwebhookconfigurations', ['Name', 'Webhooks', 'Age']],
    ['validatingwebhookconfigurations', ['Name', 'Webhooks', 'Age']],
    ['validatingadmissionpolicies', ['Name', 'Validations', 'ParamKind', 'Age']],
    ['validatingadmissionpolicybindings', ['Name', 'PolicyName', 'ParamRef', 'Age']],
  ])('%s has the columns %j', (resource, names) => {
    expect(definition(resource).table!.columns.map((c) => c.name)).toEqual(names);
  });

  it('prints counts, the paramKind and the paramRef as upstream does', () => {
    expect(table('validatingwebhookconfigurations', { metadata: meta, webhooks: [{}, {}] }).rows![0]!.cells).toEqual(['x', 2, '2m']);
    expect(table('validatingadmissionpolicies', { metadata: meta, spec: { validations: [{}] } }).rows![0]!.cells).toEqual(['x', 1, '<unset>', '2m']);
    expect(table('validatingadmissionpolicies', { metadata: meta, spec: { paramKind: { apiVersion: 'v1', kind: 'ConfigMap' } } }).rows![0]!.cells).toEqual([
      'x',
      0,
      'v1/ConfigMap',
      '2m',
    ]);
    const ref = (paramRef?: object) => table('validatingadmissionpolicybindings', { metadata: meta, spec: { policyName: 'p', paramRef } }).rows![0]!.cells[2];
    expect(ref()).toBe('<unset>');
    expect(ref({ name: 'limits' })).toBe('*/limits');
    expect(ref({ name: 'limits', namespace: 'team' })).toBe('team/limits');
    expect(ref({ selector: { matchLabels: { b: '2', a: '1' }, matchExpressions: [{ key: 'k', operator: 'In', values: ['x', 'y'] }] } })).toBe(
      '&LabelSelector{MatchLabels:map[string]string{a: 1,b: 2,},MatchExpressions:[]LabelSelectorRequirement{LabelSelectorRequirement{Key:k,Operator:In,Values:[x y],},},}',
    );
  });
});
