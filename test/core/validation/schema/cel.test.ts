/**
 * CRD validation rules (issue 53): rules from well-known operators' CRDs evaluated on create
 * and update with upstream's messages and paths, messageExpression, reason, fieldPath,
 * optionalOldSelf, ratcheting, the runtime cost budget; and the checks at definition write
 * (compilation, messageExpression, oldSelf under lists, estimated cost per rule and per schema)
 * under both profiles' extension names.
 */
import { compileSchema, schemaExtensions, type JSONSchemaProps } from '../../../../src/core/validation/schema';
import { validateSchemaRules } from '../../../../src/core/validation/schema/cel/definition';
import { FieldPath } from '../../../../src/core/validation/field-errors';
import { createNaming } from '../../../../src/naming';

const k8s = schemaExtensions(createNaming('kubernetes'));
const platform = schemaExtensions(createNaming('platform'));
const V = k8s.validations;

const root = (spec: JSONSchemaProps): JSONSchemaProps => ({ type: 'object', properties: { spec } });
const obj = (spec: unknown) => ({ apiVersion: 'example.com/v1', kind: 'Thing', metadata: { name: 'a' }, spec });
const messages = (errs: { message: string }[]) => errs.map((e) => e.message);

describe('rules on create and update', () => {
  // cert-manager's Issuer/Certificate style: one of two fields, quantities, immutability.
  const spec: JSONSchemaProps = {
    type: 'object',
    [V]: [
      { rule: 'has(self.secretName) || has(self.secretRef)', message: 'one of secretName or secretRef is required' },
      {
        rule: 'quantity(self.requests).isLessThan(quantity(self.limits)) || quantity(self.requests) == quantity(self.limits)',
        message: 'requests must not exceed limits',
      },
    ],
    properties: {
      secretName: { type: 'string', maxLength: 253 },
      secretRef: { type: 'string', maxLength: 253 },
      requests: { type: 'string', maxLength: 32 },
      limits: { type: 'string', maxLength: 32 },
      issuer: { type: 'string', maxLength: 63, [V]: [{ rule: 'self == oldSelf', message: 'issuer is immutable' }] },
      names: {
        type: 'array',
        maxItems: 10,
        items: { type: 'string', maxLength: 63 },
        [V]: [{ rule: "self.all(n, n.matches('^[a-z]+$'))", messageExpression: "'names must be lowercase: ' + self.join(', ')" }, { rule: 'size(self) <= 3' }],
      },
    },
  };
  const c = compileSchema(root(spec), k8s);

  test('a valid object passes', () => {
    expect(c.validate(obj({ secretName: 's', requests: '1Gi', limits: '2Gi', issuer: 'x', names: ['a', 'b'] }))).toEqual([]);
  });

  test('failed rules: one error each, message, messageExpression, default message, upstream value "object"/"array"', () => {
    const errs = c.validate(obj({ requests: '3Gi', limits: '2Gi', names: ['a', 'B', 'c', 'd'] }));
    expect(messages(errs)).toEqual([
      'spec: Invalid value: "object": one of secretName or secretRef is required',
      'spec: Invalid value: "object": requests must not exceed limits',
      'spec.names: Invalid value: "array": names must be lowercase: a, B, c, d',
      'spec.names: Invalid value: "array": failed rule: size(self) <= 3',
    ]);
    expect(errs.map((e) => e.type)).toEqual(['FieldValueInvalid', 'FieldValueInvalid', 'FieldValueInvalid', 'FieldValueInvalid']);
  });

  test('transition rule: self == oldSelf runs on update only', () => {
    const base = { secretName: 's', requests: '1', limits: '1', issuer: 'x' };
    expect(c.validate(obj({ ...base, issuer: 'y' }))).toEqual([]);
    expect(messages(c.validateUpdate(obj({ ...base, issuer: 'y' }), obj(base)))).toEqual(['spec.issuer: Invalid value: "string": issuer is immutable']);
    // A field that had no old value: the transition rule does not run.
    expect(c.validateUpdate(obj({ ...base, issuer: 'y' }), obj({ ...base, issuer: undefined }))).toEqual([]);
  });

  test('ratcheting: an invalid value left unchanged is not refused; a changed one is', () => {
    const old = obj({ secretName: 's', requests: '1', limits: '1', names: ['A'] });
    expect(c.validateUpdate(obj({ secretName: 's', requests: '1', limits: '1', names: ['A'] }), old)).toEqual([]);
    expect(c.validateUpdate(obj({ secretName: 't', requests: '1', limits: '1', names: ['A'] }), old)).toEqual([]);
    expect(messages(c.validateUpdate(obj({ secretName: 's', requests: '1', limits: '1', names: ['A', 'B'] }), old))).toEqual([
      'spec.names: Invalid value: "array": names must be lowercase: A, B',
    ]);
  });

  test('reason and fieldPath: the cause type and path', () => {
    const s = compileSchema(
      root({
        type: 'object',
        properties: { a: { type: 'string' }, b: { type: 'string' }, m: { type: 'object', additionalProperties: { type: 'string' } } },
        [V]: [
          { rule: 'has(self.a)', reason: 'FieldValueRequired', fieldPath: '.a', message: 'a is required' },
          { rule: "!has(self.b) || self.b != 'x'", reason: 'FieldValueForbidden', fieldPath: '.b', message: 'b may not be x' },
          { rule: "!('k' in self.m)", reason: 'FieldValueDuplicate', fieldPath: ".m['k']" },
        ],
      }),
      k8s,
    );
    const errs = s.validate(obj({ b: 'x', m: { k: 'v' } }));
    expect(messages(errs)).toEqual(['spec.a: Required value: a is required', 'spec.b: Forbidden: b may not be x', 'spec.m[k]: Duplicate value: "object"']);
    expect(errs.map((e) => e.type)).toEqual(['FieldValueRequired', 'FieldValueForbidden', 'FieldValueDuplicate']);
  });

  test('gateway-api style map-keyed list: items correlate by key for transition rules and ratcheting', () => {
    const s = compileSchema(
      root({
        type: 'object',
        properties: {
          listeners: {
            type: 'array',
            maxItems: 64,
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['name'],
            [V]: [{ rule: 'self.all(l1, self.exists_one(l2, l1.port == l2.port))', message: 'port must be unique' }],
            items: {
              type: 'object',
              required: ['name'],
              properties: {
                name: { type: 'string', maxLength: 253 },
                port: { type: 'integer', minimum: 1, maximum: 65535, [V]: [{ rule: 'self == oldSelf', message: 'port is immutable' }] },
              },
            },
          },
        },
      }),
      k8s,
    );
    const old = obj({
      listeners: [
        { name: 'a', port: 80 },
        { name: 'b', port: 443 },
      ],
    });
    // Reordered, b's port changed: only b is refused, at its new index.
    expect(
      messages(
        s.validateUpdate(
          obj({
            listeners: [
              { name: 'b', port: 8443 },
              { name: 'a', port: 80 },
            ],
          }),
          old,
        ),
      ),
    ).toEqual(['spec.listeners[0].port: Invalid value: "integer": port is immutable']);
    // A new item has no old value.
    expect(
      s.validateUpdate(
        obj({
          listeners: [
            { name: 'a', port: 80 },
            { name: 'b', port: 443 },
            { name: 'c', port: 8080 },
          ],
        }),
        old,
      ),
    ).toEqual([]);
    expect(
      messages(
        s.validate(
          obj({
            listeners: [
              { name: 'a', port: 80 },
              { name: 'b', port: 80 },
            ],
          }),
        ),
      ),
    ).toEqual(['spec.listeners: Invalid value: "array": port must be unique']);
  });

  test('cluster-api style: int-or-string, timestamps and durations, metadata at the root', () => {
    const s: JSONSchemaProps = {
      type: 'object',
      [V]: [{ rule: "self.metadata.name.startsWith('a')", message: 'name must start with a' }],
      properties: {
        spec: {
          type: 'object',
          properties: {
            maxUnhealthy: {
              'x-kubernetes-int-or-string': true,
              [V]: [{ rule: "type(self) == int ? self <= 10 : self.endsWith('%')", message: 'bad maxUnhealthy' }],
            },
            after: { type: 'string', format: 'date-time' },
            before: { type: 'string', format: 'date-time' },
            timeout: { type: 'string', format: 'duration', [V]: [{ rule: "self >= duration('1s')" }] },
          },
          [V]: [{ rule: '!has(self.after) || !has(self.before) || self.after < self.before', message: 'after must be before before' }],
        },
      },
    };
    const c2 = compileSchema(s, k8s);
    expect(c2.validate({ ...obj({ maxUnhealthy: 5, timeout: '5s' }), metadata: { name: 'abc' } })).toEqual([]);
    expect(c2.validate({ ...obj({ maxUnhealthy: '40%' }), metadata: { name: 'abc' } })).toEqual([]);
    expect(
      messages(
        c2.validate({
          ...obj({ maxUnhealthy: 'x', after: '2024-02-01T00:00:00Z', before: '2024-01-01T00:00:00Z', timeout: '500ms' }),
          metadata: { name: 'zzz' },
        }),
      ),
    ).toEqual(
      [
        ': Invalid value: "object": name must start with a',
        'spec: Invalid value: "object": after must be before before',
        'spec.maxUnhealthy: Invalid value: "": bad maxUnhealthy',
        `spec.timeout: Invalid value: "string": failed rule: self >= duration('1s')`,
      ].map((m) => m.replace(/^: /, '')),
    );
  });

  test('optionalOldSelf: the rule also runs on create', () => {
    const s = compileSchema(
      root({
        type: 'object',
        properties: { v: { type: 'integer', [V]: [{ rule: 'oldSelf == null || self >= oldSelf', optionalOldSelf: true, message: 'may not decrease' }] } },
      }),
      k8s,
    );
    expect(s.validate(obj({ v: 1 }))).toEqual([]);
    expect(messages(s.validateUpdate(obj({ v: 1 }), obj({ v: 2 })))).toEqual(['spec.v: Invalid value: "integer": may not decrease']);
  });

  test('rules are not run when the object is invalid by type (upstream hasBlockingErr)', () => {
    const errs = c.validate(obj({ secretName: 5 }));
    expect(messages(errs).at(-1)).toBe(
      'Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation',
    );
  });

  test('evaluation errors name the rule', () => {
    const s = compileSchema(root({ type: 'object', properties: { a: { type: 'string' } }, [V]: [{ rule: "self.a == 'x'" }] }), k8s);
    expect(messages(s.validate(obj({})))).toEqual([expect.stringMatching(/^spec: Invalid value: "object": .*a.* evaluating rule: self.a == 'x'$/)]);
  });

  test("runtime cost: the budget per object ends validation with upstream's message", () => {
    // Each rule is estimated well under the per-expression limit, but 20 of them over 300 items pass the 10M budget.
    const rule = { rule: 'self.all(x, self.all(y, x <= y || x > y))' };
    const s = compileSchema(
      root({ type: 'object', properties: { l: { type: 'array', maxItems: 300, items: { type: 'integer' }, [V]: Array(20).fill(rule) } } }),
      k8s,
    );
    const l = Array.from({ length: 300 }, (_, i) => i);
    const errs = messages(s.validate(obj({ l })));
    expect(errs).toEqual(['spec.l: Invalid value: "array": validation failed due to running out of cost budget, no further validation rules will be run']);
    // Within the budget for small lists.
    expect(s.validate(obj({ l: [1, 2, 3] }))).toEqual([]);
  });

  test('runtime cost: one call past the per-call limit', () => {
    // An unbounded list: the estimate is what a request could hold, refused at definition write; here the compiled schema alone.
    const s = compileSchema(
      root({ type: 'object', properties: { l: { type: 'array', items: { type: 'integer' }, [V]: [{ rule: 'self.all(x, self.all(y, x <= y || x > y))' }] } } }),
      k8s,
    );
    const l = Array.from({ length: 2000 }, (_, i) => i);
    const started = Date.now();
    expect(messages(s.validate(obj({ l })))).toEqual([
      'spec.l: Invalid value: "array": \'operation cancelled: actual cost limit exceeded\': no further validation rules will be run due to call cost exceeds limit for rule: self.all(x, self.all(y, x <= y || x > y))',
    ]);
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe('at definition write', () => {
  const path = FieldPath.root('spec', 'validation', 'openAPIV3Schema');
  const check = (schema: JSONSchemaProps, ext = k8s) => messages(validateSchemaRules(schema, ext, path, []));

  test('a rule that does not compile, a field the schema does not have, a non-bool result', () => {
    expect(
      check(root({ type: 'object', properties: { a: { type: 'string' } }, [V]: [{ rule: 'self.a ==' }, { rule: 'self.b == 1' }, { rule: 'self.a' }] })),
    ).toEqual([
      expect.stringMatching(
        /^spec\.validation\.openAPIV3Schema\.properties\[spec\]\.x-kubernetes-validations\[0\]\.rule: Invalid value: apiextensions\.ValidationRule\{Rule:"self\.a ==", .*\}: compilation failed: ERROR: <input>:1:/,
      ),
      expect.stringContaining('x-kubernetes-validations[1].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.b == 1"'),
      expect.stringContaining('x-kubernetes-validations[2].rule: Invalid value: apiextensions.ValidationRule{Rule:"self.a"'),
    ]);
    const [, undef, notBool] = check(
      root({ type: 'object', properties: { a: { type: 'string' } }, [V]: [{ rule: 'self.a ==' }, { rule: 'self.b == 1' }, { rule: 'self.a' }] }),
    );
    expect(undef).toContain("compilation failed: ERROR: <input>:1:5: undefined field 'b'\n | self.b == 1\n | ....^");
    expect(notBool).toMatch(/: cel expression must evaluate to a bool$/);
  });

  test('messageExpression that does not compile or is not a string; optionalOldSelf without oldSelf', () => {
    expect(
      check(
        root({
          type: 'object',
          [V]: [
            { rule: 'true', messageExpression: '"abc' },
            { rule: 'true', messageExpression: '42' },
            { rule: 'true', optionalOldSelf: true },
          ],
        }),
      ),
    ).toEqual([
      expect.stringMatching(
        /x-kubernetes-validations\[0\]\.messageExpression: Invalid value: .*: messageExpression compilation failed: ERROR: <input>:1:1: Syntax error/,
      ),
      expect.stringMatching(/x-kubernetes-validations\[1\]\.messageExpression: Invalid value: .*: messageExpression must evaluate to a string$/),
      'spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[2].optionalOldSelf: Invalid value: true: may not be set if oldSelf is not used in rule',
    ]);
  });

  test('oldSelf under a list that is not a map list', () => {
    expect(
      check(
        root({
          type: 'object',
          properties: { l: { type: 'array', items: { type: 'object', properties: { a: { type: 'string' } }, [V]: [{ rule: 'self == oldSelf' }] } } },
        }),
      ),
    ).toEqual([
      'spec.validation.openAPIV3Schema.properties[spec].properties[l].items.x-kubernetes-validations[0].rule: Invalid value: "self == oldSelf": oldSelf cannot be used on the uncorrelatable portion of the schema within spec.validation.openAPIV3Schema.properties[spec].properties[l]',
    ]);
  });

  test('estimated cost per rule (times its cardinality) and per schema, with upstream messages at the rule', () => {
    const quadratic = { type: 'array', items: { type: 'string' }, [V]: [{ rule: 'self.all(x, self.all(y, x == y))' }] } as JSONSchemaProps;
    expect(check(root({ type: 'object', properties: { l: quadratic } }))).toEqual([
      'spec.validation.openAPIV3Schema.properties[spec].properties[l].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)',
      'spec.validation.openAPIV3Schema.properties[spec].properties[l].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema',
      'spec.validation.openAPIV3Schema: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)',
    ]);
    // Bounded, it passes.
    expect(check(root({ type: 'object', properties: { l: { ...quadratic, maxItems: 100, items: { type: 'string', maxLength: 10 } } } }))).toEqual([]);
    // A cheap rule under an unbounded list of unbounded maps: its cardinality is what a request can hold.
    const nested = root({
      type: 'object',
      properties: { l: { type: 'array', items: { type: 'array', items: { type: 'string', [V]: [{ rule: "self.matches('^[a-z]+$')" }] } } } },
    });
    expect(check(nested)[0]).toMatch(/items\.items\.x-kubernetes-validations\[0\]\.rule: Forbidden: estimated rule cost exceeds budget by factor of/);
  });

  test("an unchanged schema's rules are not refused for their own cost; the total still is (upstream's suppressPerExpressionCost)", () => {
    const quadratic = (maxItems: number) =>
      root({
        type: 'object',
        properties: { l: { type: 'array', maxItems, items: { type: 'string', maxLength: 10 }, [V]: [{ rule: 'self.all(x, self.all(y, x == y))' }] } },
      });
    const path = FieldPath.root('s');
    expect(messages(validateSchemaRules(quadratic(2000), k8s, path, []))).toEqual([
      's.properties[spec].properties[l].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of 2.4x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)',
    ]);
    expect(validateSchemaRules(quadratic(2000), k8s, path, [], { suppressPerExpressionCost: true })).toEqual([]);
    expect(messages(validateSchemaRules(quadratic(5000), k8s, path, [], { suppressPerExpressionCost: true }))).toEqual([
      's.properties[spec].properties[l].x-kubernetes-validations[0].rule: Forbidden: contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema',
      's: Forbidden: x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema exceeds budget by factor of 1.5x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)',
    ]);
  });

  test('the platform profile spells the extension x-platform-validations', () => {
    const P = platform.validations;
    expect(P).toBe('x-platform-validations');
    expect(check(root({ type: 'object', [P]: [{ rule: 'self.x ==' }] }), platform)[0]).toContain(
      'properties[spec].x-platform-validations[0].rule: Invalid value:',
    );
    const c = compileSchema(root({ type: 'object', properties: { x: { type: 'integer' } }, [P]: [{ rule: 'self.x > 1', message: 'x too small' }] }), platform);
    expect(messages(c.validate(obj({ x: 1 })))).toEqual(['spec: Invalid value: "object": x too small']);
  });
});
