/**
 * Value validation against a version's schema, with upstream 1.32's messages: kube-openapi's
 * validators as apiextensions' kubeOpenAPIResultToFieldErrors turns them into field errors.
 * The cases marked "upstream" are apiextensions' own (pkg/apiserver/validation tests).
 */
import { FieldPath } from '../../../../src/core/validation/field-errors';
import { K8S, PLATFORM, compile, messages, objectWith } from './support';

const check = (schema: unknown, value: unknown) => messages(compile(schema).validateSchema(value));
const field = (schema: unknown, value: unknown) => check(objectWith({ field: schema }), { field: value });

describe('types', () => {
  it('reports every JSON type against object, with the type found (upstream)', () => {
    const s = { type: 'object' };
    expect(field(s, 'foo')).toEqual([`field: Invalid value: "string": field in body must be of type object: "string"`]);
    expect(field(s, 42)).toEqual([`field: Invalid value: "integer": field in body must be of type object: "integer"`]);
    expect(field(s, true)).toEqual([`field: Invalid value: "boolean": field in body must be of type object: "boolean"`]);
    expect(field(s, 1.2)).toEqual([`field: Invalid value: "number": field in body must be of type object: "number"`]);
    expect(field(s, [])).toEqual([`field: Invalid value: "array": field in body must be of type object: "array"`]);
    expect(field(s, null)).toEqual([`field: Invalid value: "null": field in body must be of type object: "null"`]);
    expect(field(s, {})).toEqual([]);
  });

  it('reports the type error as FieldValueTypeInvalid', () => {
    const [err] = compile(objectWith({ spec: objectWith({ replicas: { type: 'integer' } }) })).validateSchema({ spec: { replicas: 'string' } });
    expect(err).toMatchObject({
      type: 'FieldValueTypeInvalid',
      field: 'spec.replicas',
      badValue: 'string',
      message: 'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
    });
  });

  it('lets nullable fields be null', () => {
    expect(field({ type: 'object', nullable: true }, null)).toEqual([]);
    expect(field({ type: 'string', nullable: true }, null)).toEqual([]);
  });

  it('takes an integer for number, and a float that is a JSON integer for integer', () => {
    expect(field({ type: 'number' }, 3)).toEqual([]);
    expect(field({ type: 'integer' }, 2.0000000001)).toEqual([]);
    expect(field({ type: 'integer' }, 2.5)).toEqual([`field: Invalid value: "number": field in body must be of type integer: "number"`]);
    expect(field({ type: 'integer' }, -2.0000000001)).toEqual([`field: Invalid value: "number": field in body must be of type integer: "number"`]);
    expect(field({ type: 'integer' }, 1e300)).toEqual([`field: Invalid value: "number": field in body must be of type integer: "number"`]);
  });

  it('types int-or-string as integer,string (upstream)', () => {
    const s = { 'x-kubernetes-int-or-string': true };
    expect(field(s, 42)).toEqual([]);
    expect(field(s, 'foo')).toEqual([]);
    expect(field(s, null)).toEqual([`field: Invalid value: "null": field in body must be of type integer,string: "null"`]);
    expect(field(s, true)).toEqual([`field: Invalid value: "boolean": field in body must be of type integer,string: "boolean"`]);
    expect(field(s, 1.2)).toEqual([`field: Invalid value: "number": field in body must be of type integer,string: "number"`]);
    expect(field(s, {})).toEqual([`field: Invalid value: "object": field in body must be of type integer,string: "object"`]);
  });

  it('reports the int-or-string anyOf with the branch that got furthest (upstream)', () => {
    const s = { nullable: true, 'x-kubernetes-int-or-string': true, anyOf: [{ type: 'integer' }, { type: 'string' }] };
    expect(field(s, null)).toEqual([]);
    expect(field(s, true)).toEqual([
      `field: Invalid value: "boolean": field in body must be of type integer,string: "boolean"`,
      `<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)`,
      `field: Invalid value: "boolean": field in body must be of type integer: "boolean"`,
    ]);
  });

  it('reports an allOf around the anyOf (upstream)', () => {
    const s = { nullable: true, 'x-kubernetes-int-or-string': true, allOf: [{ anyOf: [{ type: 'integer' }, { type: 'string' }] }] };
    expect(field(s, []).sort()).toEqual(
      [
        `<nil>: Invalid value: "": "field" must validate all the schemas (allOf). None validated`,
        `<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)`,
        `field: Invalid value: "array": field in body must be of type integer,string: "array"`,
        `field: Invalid value: "array": field in body must be of type integer: "array"`,
      ].sort(),
    );
  });
});

describe('formats', () => {
  it('checks the formats apiextensions supports', () => {
    expect(field({ type: 'string', format: 'date-time' }, 'nope')).toEqual([`field: Invalid value: "nope": field in body must be of type date-time: "nope"`]);
    expect(field({ type: 'string', format: 'date-time' }, '2024-01-02T03:04:05Z')).toEqual([]);
    expect(field({ type: 'string', format: 'date' }, '2021-02-30')).toEqual([
      `field: Invalid value: "2021-02-30": field in body must be of type date: "2021-02-30"`,
    ]);
    expect(field({ type: 'string', format: 'uuid' }, 'x')).toEqual([`field: Invalid value: "x": field in body must be of type uuid: "x"`]);
  });

  it('drops the formats apiextensions does not support (int32, int64, float, double, unknown)', () => {
    expect(field({ type: 'integer', format: 'int32' }, 2 ** 40)).toEqual([]);
    expect(field({ type: 'number', format: 'float' }, 1e300)).toEqual([]);
    expect(field({ type: 'string', format: 'k8s-short-name' }, 'Not A Name')).toEqual([]);
    expect(field({ type: 'string', format: 'int64' }, 5)).toEqual([`field: Invalid value: "integer": field in body must be of type string: "integer"`]);
  });

  it('reports a non-string against a string format by the format (kube-openapi type validator)', () => {
    expect(field({ type: 'string', format: 'date-time' }, 5)).toEqual([`field: Invalid value: "int64": field in body must be of type date-time: "int64"`]);
    expect(field({ type: 'string', format: 'date-time' }, 5.5)).toEqual([
      `field: Invalid value: "float64": field in body must be of type date-time: "float64"`,
    ]);
    expect(field({ type: 'string', format: 'date-time' }, true)).toEqual([`field: Invalid value: "": field in body must be of type date-time: ""`]);
    // A list passes a string type with a format: the type validator leaves it to the format validator, which takes strings only.
    expect(field({ type: 'string', format: 'date-time' }, ['a'])).toEqual([]);
  });
});

describe('enum', () => {
  it('reports NotSupported with the values, and the type error too (upstream)', () => {
    const s = objectWith(
      { nestedint: { type: 'integer', enum: [1, 2] }, nestedstring: { type: 'string', enum: ['a', 'b'] } },
      { required: ['nestedint', 'nestedstring'] },
    );
    expect(field(s, {})).toEqual([`field.nestedint: Required value`, `field.nestedstring: Required value`]);
    expect(field(s, { nestedint: 'x', nestedstring: true })).toEqual([
      `field.nestedint: Invalid value: "string": field.nestedint in body must be of type integer: "string"`,
      `field.nestedint: Unsupported value: "x": supported values: "1", "2"`,
      `field.nestedstring: Invalid value: "boolean": field.nestedstring in body must be of type string: "boolean"`,
      `field.nestedstring: Unsupported value: true: supported values: "a", "b"`,
    ]);
  });

  it('words the brief example exactly', () => {
    const c = compile(objectWith({ spec: objectWith({ color: { type: 'string', enum: ['red', 'blue'] } }) }));
    const [err] = c.validateSchema({ spec: { color: 'pink' } });
    expect(err).toMatchObject({
      type: 'FieldValueNotSupported',
      field: 'spec.color',
      message: 'spec.color: Unsupported value: "pink": supported values: "red", "blue"',
    });
  });

  it('prints non-string values as JSON and bad values as Go does', () => {
    const s = { enum: ['x', 1.5, { a: 1 }, null, true] };
    expect(field(s, { b: [1, 'y', null] })).toEqual([
      `field: Unsupported value: map[string]interface {}{"b":[]interface {}{1, "y", interface {}(nil)}}: supported values: "x", "1.5", "{\\"a\\":1}", "null", "true"`,
    ]);
    expect(field(s, { a: 1 })).toEqual([]);
  });

  it('never matches null, even with null in the enum', () => {
    expect(field({ type: 'string', nullable: true, enum: ['a', null] }, null)).toEqual([`field: Unsupported value: "null": supported values: "a", "null"`]);
  });

  it("compares as Go's reflect conversions do", () => {
    // An integer converts to the string of its rune; a float to the integer it truncates to.
    expect(field({ enum: ['A'] }, 65)).toEqual([]);
    expect(field({ enum: [1] }, 1.5)).toEqual([]);
    expect(field({ enum: [1.5] }, 1)).toEqual([`field: Unsupported value: 1: supported values: "1.5"`]);
    expect(field({ enum: ['1'] }, 1)).toEqual([`field: Unsupported value: 1: supported values: "1"`]);
  });
});

describe('numbers', () => {
  it('words the brief example exactly', () => {
    const c = compile(objectWith({ spec: objectWith({ replicas: { type: 'integer', maximum: 10 } }) }));
    expect(messages(c.validateSchema({ spec: { replicas: 20 } }))).toEqual([
      'spec.replicas: Invalid value: 20: spec.replicas in body should be less than or equal to 10',
    ]);
  });

  it('checks bounds, exclusive or not, minimum before maximum', () => {
    const s = { type: 'number', minimum: 0, maximum: 1, exclusiveMaximum: true };
    expect(field(s, 3)).toEqual([`field: Invalid value: 3: field in body should be less than 1`]);
    expect(field({ type: 'number', minimum: 0, exclusiveMinimum: true }, 0)).toEqual([`field: Invalid value: 0: field in body should be greater than 0`]);
    expect(field({ type: 'number', minimum: 2, maximum: 1 }, 1.5)).toEqual([
      `field: Invalid value: 1.5: field in body should be greater than or equal to 2`,
      `field: Invalid value: 1.5: field in body should be less than or equal to 1`,
    ]);
  });

  it('compares an integer with the bound truncated, a float with the bound itself', () => {
    expect(field({ type: 'number', maximum: 10.5 }, 11)).toEqual([`field: Invalid value: 11: field in body should be less than or equal to 10`]);
    expect(field({ type: 'number', maximum: 10.5 }, 10.6)).toEqual([`field: Invalid value: 10.6: field in body should be less than or equal to 10.5`]);
  });

  it("prints floats with Go's %v", () => {
    expect(field({ type: 'number', maximum: 1e6 }, 2500000.5)).toEqual([
      `field: Invalid value: 2.5000005e+06: field in body should be less than or equal to 1e+06`,
    ]);
    expect(field({ type: 'number', minimum: 0.0001 }, 0.00001)).toEqual([
      `field: Invalid value: 1e-05: field in body should be greater than or equal to 0.0001`,
    ]);
  });

  it('checks multipleOf as kube-openapi does for integers and floats', () => {
    expect(field({ type: 'integer', multipleOf: 3 }, 10)).toEqual([`field: Invalid value: 10: field in body should be a multiple of 3`]);
    expect(field({ type: 'integer', multipleOf: 3 }, 9)).toEqual([]);
    // The factor is truncated for an integer: 2.5 is 2, 0.5 is 0.
    expect(field({ type: 'number', multipleOf: 2.5 }, 5)).toEqual([`field: Invalid value: 5: field in body should be a multiple of 2`]);
    expect(field({ type: 'number', multipleOf: 0.5 }, 3)).toEqual([`field: Invalid value: 0: factor MultipleOf declared for field must be positive: 0`]);
    expect(field({ type: 'number', multipleOf: 0.5 }, 1.25)).toEqual([`field: Invalid value: 1.25: field in body should be a multiple of 0.5`]);
    expect(field({ type: 'number', multipleOf: 0.1 }, 0.3)).toEqual([]);
  });
});

describe('strings', () => {
  it('words the brief example exactly', () => {
    const c = compile(objectWith({ spec: objectWith({ name: { type: 'string', minLength: 1 } }) }));
    expect(messages(c.validateSchema({ spec: { name: '' } }))).toEqual(['spec.name: Invalid value: "": spec.name in body should be at least 1 chars long']);
  });

  it('reports maxLength as Too long in bytes (upstream), and counts runes', () => {
    expect(field({ type: 'string', maxLength: 2 }, 'abc')).toEqual([`field: Too long: may not be more than 2 bytes`]);
    expect(field({ type: 'string', maxLength: 2 }, '😀é')).toEqual([]);
    expect(field({ type: 'string', minLength: 3 }, '😀😀')).toEqual([`field: Invalid value: "😀😀": field in body should be at least 3 chars long`]);
  });

  it('matches patterns with Go regexp semantics, reporting the first string error only', () => {
    expect(field({ type: 'string', pattern: '^[a-z]+$' }, 'ABC')).toEqual([`field: Invalid value: "ABC": field in body should match '^[a-z]+$'`]);
    expect(field({ type: 'string', pattern: 'b' }, 'abc')).toEqual([]);
    // RE2's \z and (?i) are Go's; JavaScript has neither.
    expect(field({ type: 'string', pattern: '(?i)^abc\\z' }, 'ABC')).toEqual([]);
    expect(field({ type: 'string', minLength: 5, pattern: '^x' }, 'ab')).toEqual([`field: Invalid value: "ab": field in body should be at least 5 chars long`]);
  });

  it("reports an invalid pattern with Go's error (upstream)", () => {
    expect(field({ type: 'string', pattern: '+' }, 'foo')).toEqual([
      'field: Invalid value: "foo": field in body should match \'+, but pattern is invalid: error parsing regexp: missing argument to repetition operator: `+`\'',
    ]);
  });

  it("quotes bad values as Go's %q", () => {
    expect(field({ type: 'string', maxLength: 0, minLength: 10 }, '')).toEqual([`field: Invalid value: "": field in body should be at least 10 chars long`]);
    expect(field({ type: 'string', minLength: 10 }, 'a\u0001\u00a0"')).toEqual([
      `field: Invalid value: "a\\x01\\u00a0\\"": field in body should be at least 10 chars long`,
    ]);
  });
});

describe('arrays', () => {
  it('reports maxItems as Too many (upstream) and minItems as Invalid', () => {
    expect(field({ type: 'array', maxItems: 2 }, ['a', 'b', 'c'])).toEqual([`field: Too many: 3: must have at most 2 items`]);
    expect(field({ type: 'array', minItems: 2 }, ['a'])).toEqual([`field: Invalid value: 1: field in body should have at least 2 items`]);
  });

  it('checks the items first, with indexes in the path', () => {
    expect(field({ type: 'array', minItems: 3, items: { type: 'string' } }, ['a', 1])).toEqual([
      `field[1]: Invalid value: "integer": field[1] in body must be of type string: "integer"`,
      `field: Invalid value: 2: field in body should have at least 3 items`,
    ]);
  });

  it('finds duplicates for uniqueItems', () => {
    expect(field({ type: 'array', uniqueItems: true }, [1, { a: [1] }, 2, { a: [1] }])).toEqual([
      `field: Invalid value: "": field in body shouldn't contain duplicates`,
    ]);
    expect(field({ type: 'array', uniqueItems: true }, [1, '1', { a: 1 }, { a: 2 }])).toEqual([]);
  });
});

describe('objects', () => {
  it('reports missing required fields with Required value (upstream)', () => {
    const s = { type: 'object', required: ['field'], properties: { field: { type: 'object', required: ['nested'], properties: { nested: {} } } } };
    expect(check(s, { test: 'a' })).toEqual(['field: Required value']);
    expect(check(s, { field: {} })).toEqual(['field.nested: Required value']);
    expect(compile(s).validateSchema({})[0]).toMatchObject({ type: 'FieldValueRequired', field: 'field' });
  });

  it('reports maxProperties as Too many (upstream) and minProperties as Invalid', () => {
    expect(check(objectWith({ fieldX: { type: 'object', maxProperties: 2 } }), { fieldX: { a: true, b: true, c: true } })).toEqual([
      `fieldX: Too many: 3: must have at most 2 items`,
    ]);
    expect(field({ type: 'object', minProperties: 2 }, { a: 1 })).toEqual([`field: Invalid value: 1: field in body should have at least 2 properties`]);
  });

  it('validates additionalProperties by key, dotted in the message', () => {
    const s = { type: 'object', additionalProperties: { type: 'string' } };
    expect(field(s, { a: 'x', 'b.c': 1 })).toEqual([`field.b.c: Invalid value: "integer": field.b.c in body must be of type string: "integer"`]);
    expect(field({ type: 'object', properties: { a: {} }, additionalProperties: false }, { a: 1, b: 2 })).toEqual([
      `field: Invalid value: "b": field.b in body is a forbidden property`,
    ]);
  });

  it('names a root property with a leading dot in the message only', () => {
    expect(check({ type: 'object', additionalProperties: { type: 'string' } }, { a: 1 })).toEqual([
      `a: Invalid value: "integer": .a in body must be of type string: "integer"`,
    ]);
    expect(check({ type: 'object', required: ['spec'] }, {})).toEqual(['spec: Required value']);
  });

  it('reports a root error at <nil>, or at the path given', () => {
    const c = compile({ type: 'object', minProperties: 1 });
    expect(messages(c.validateSchema({}))).toEqual(['<nil>: Invalid value: 0:  in body should have at least 1 properties']);
    expect(messages(c.validateSchema({}, 'status'))).toEqual(['status: Invalid value: 0:  in body should have at least 1 properties']);
  });

  it('validates a status subresource against its own schema under status', () => {
    const c = compile(objectWith({ status: objectWith({ replicas: { type: 'integer' } }) }));
    const status = c.property('status')!;
    expect(messages(status.validateSchema({ replicas: 'x' }, FieldPath.root('status')))).toEqual([
      'status.replicas: Invalid value: "string": replicas in body must be of type integer: "string"',
    ]);
    expect(c.property('spec')).toBeUndefined();
  });

  it('ignores properties an object inherits (constructor, toString)', () => {
    expect(check({ type: 'object', properties: { constructor: { type: 'string' } }, required: ['toString'] }, {})).toEqual(['toString: Required value']);
  });
});

describe('junctors', () => {
  it('reports oneOf, allOf and not at the caller path', () => {
    expect(field({ oneOf: [{ type: 'integer' }, { minimum: 1 }] }, 5)).toEqual([
      `<nil>: Invalid value: "": "field" must validate one and only one schema (oneOf). Found 2 valid alternatives`,
    ]);
    expect(field({ oneOf: [{ type: 'string' }, { type: 'boolean' }] }, 5)).toEqual([
      `<nil>: Invalid value: "": "field" must validate one and only one schema (oneOf). Found none valid`,
      `field: Invalid value: "integer": field in body must be of type string: "integer"`,
    ]);
    expect(field({ not: { type: 'integer' } }, 5)).toEqual([`<nil>: Invalid value: "": "field" must not validate the schema (not)`]);
    expect(field({ allOf: [{ minimum: 1 }, { maximum: 3 }] }, 5)).toEqual([
      `field: Invalid value: 5: field in body should be less than or equal to 3`,
      `<nil>: Invalid value: "": "field" must validate all the schemas (allOf)`,
    ]);
  });

  it('reports each message once', () => {
    expect(field({ allOf: [{ minimum: 9 }, { minimum: 9 }] }, 5)).toEqual([
      `field: Invalid value: 5: field in body should be greater than or equal to 9`,
      `<nil>: Invalid value: "": "field" must validate all the schemas (allOf). None validated`,
    ]);
  });

  it('picks the anyOf branch with the most checks passed', () => {
    // The second branch's type passes, so it got further than the first.
    expect(field({ anyOf: [{ type: 'string' }, { type: 'integer', minimum: 10 }] }, 5)).toEqual([
      `<nil>: Invalid value: "": "field" must validate at least one schema (anyOf)`,
      `field: Invalid value: 5: field in body should be greater than or equal to 10`,
    ]);
  });
});

describe('embedded resources', () => {
  const schema = objectWith({ tpl: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } });

  it('requires apiVersion and kind and checks them', () => {
    const c = compile(schema);
    expect(messages(c.validateEmbedded({ tpl: {} }))).toEqual([
      'tpl.apiVersion: Required value: must not be empty',
      'tpl.kind: Required value: must not be empty',
    ]);
    expect(messages(c.validateEmbedded({ tpl: { apiVersion: 'a/b/c', kind: 'Bad_Kind' } }))).toEqual([
      'tpl.apiVersion: Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c',
      `tpl.kind: Invalid value: "Bad_Kind": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')`,
    ]);
    expect(messages(c.validateEmbedded({ tpl: { apiVersion: '', kind: 7 } }))).toEqual([
      'tpl.apiVersion: Invalid value: "": must not be empty',
      'tpl.kind: Invalid value: 7: must be a string',
    ]);
    expect(c.validateEmbedded({ tpl: { apiVersion: 'v1', kind: 'MixedCase' } })).toEqual([]);
  });

  it('checks the metadata as ObjectMeta, under its path', () => {
    const c = compile(schema);
    expect(messages(c.validateEmbedded({ tpl: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'a/b', labels: { 'bad key': 'x' } } } }))).toEqual([
      `tpl.metadata.name: Invalid value: "a/b": may not contain '/'`,
      `tpl.metadata.labels: Invalid value: "bad key": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')`,
    ]);
    expect(messages(c.validateEmbedded({ tpl: { apiVersion: 'v1', kind: 'Pod', metadata: 'x' } }))).toEqual([
      'tpl.metadata: Invalid value: "x": json: cannot unmarshal string into Go value of type v1.ObjectMeta',
    ]);
    expect(c.validateEmbedded({ tpl: { apiVersion: 'v1', kind: 'Pod', metadata: { namespace: 'ns' } } })).toEqual([]);
  });

  it('finds embedded resources in lists and maps, with field.Path paths', () => {
    const c = compile(
      objectWith({
        list: { type: 'array', items: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } },
        map: { type: 'object', additionalProperties: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true } },
      }),
    );
    expect(messages(c.validateEmbedded({ list: [{ apiVersion: 'v1', kind: 'A' }, { kind: 'A' }], map: { k: { apiVersion: 'v1' } } }))).toEqual([
      'list[1].apiVersion: Required value: must not be empty',
      'map[k].kind: Required value: must not be empty',
    ]);
  });
});

describe('validate', () => {
  it('runs the schema, the embedded resources and the list types, in that order', () => {
    const c = compile(
      objectWith({
        n: { type: 'integer' },
        tpl: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
        set: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
      }),
    );
    expect(messages(c.validate({ n: 'x', tpl: { kind: 'A' }, set: ['a', 'a'] }))).toEqual([
      'n: Invalid value: "string": n in body must be of type integer: "string"',
      'tpl.apiVersion: Required value: must not be empty',
      'set[1]: Duplicate value: "a"',
    ]);
  });

  it('reads the platform profile extension names, and not the others', () => {
    const schema = objectWith({ port: { 'x-kubernetes-int-or-string': true } });
    expect(messages(compile(schema, PLATFORM).validate({ port: 'http' }))).toEqual([]);
    expect(messages(compile(schema, PLATFORM).validate({ port: true }))).toEqual([
      'port: Invalid value: "boolean": port in body must be of type integer,string: "boolean"',
    ]);
    // The kubernetes names mean nothing to the platform profile.
    const foreign = { type: 'object', properties: { port: { 'x-kubernetes-int-or-string': true } } };
    expect(PLATFORM.intOrString).toBe('x-platform-int-or-string');
    expect(messages(compile(foreign, K8S).validate({ port: true }))).toHaveLength(1);
  });
});

describe('validateUpdate (ratcheting)', () => {
  const schema = objectWith({
    spec: objectWith({
      name: { type: 'string', maxLength: 3 },
      count: { type: 'integer' },
      list: { type: 'array', items: { type: 'string', maxLength: 3 } },
      ports: {
        type: 'array',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: objectWith({ name: { type: 'string' }, port: { type: 'integer', maximum: 100 } }),
      },
      set: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
    }),
    apiVersion: { type: 'string', enum: ['good/v1'] },
  });
  const c = compile(schema);

  it('drops errors of values that did not change', () => {
    const old = { spec: { name: 'toolong', count: 1 } };
    expect(c.validateUpdate({ spec: { name: 'toolong', count: 2 } }, old)).toEqual([]);
    expect(messages(c.validateUpdate({ spec: { name: 'toolong!', count: 1 } }, old))).toEqual(['spec.name: Too long: may not be more than 3 bytes']);
    expect(messages(c.validate({ spec: { name: 'toolong', count: 2 } }))).toEqual(['spec.name: Too long: may not be more than 3 bytes']);
  });

  it('correlates map-list elements by key, not atomic lists', () => {
    const old = { spec: { ports: [{ name: 'a', port: 500 }], list: ['toolong'] } };
    expect(
      c.validateUpdate(
        {
          spec: {
            ports: [
              { name: 'b', port: 1 },
              { name: 'a', port: 500 },
            ],
            list: ['toolong'],
          },
        },
        old,
      ),
    ).toEqual([]);
    expect(messages(c.validateUpdate({ spec: { ports: [{ name: 'a', port: 500 }], list: ['toolong', 'x'] } }, old))).toEqual([
      'spec.list[0]: Too long: may not be more than 3 bytes',
    ]);
  });

  it('does not ratchet the root apiVersion', () => {
    expect(messages(c.validateUpdate({ apiVersion: 'bad/v1', spec: { count: 2 } }, { apiVersion: 'bad/v1', spec: { count: 1 } }))).toEqual([
      'apiVersion: Unsupported value: "bad/v1": supported values: "good/v1"',
    ]);
    expect(c.validateUpdate({ apiVersion: 'bad/v1', spec: { count: 1 } }, { apiVersion: 'bad/v1', spec: { count: 1 } })).toEqual([]);
  });

  it('skips list sets and maps when the old object already broke them', () => {
    expect(c.validateUpdate({ spec: { set: ['a', 'a', 'b'] } }, { spec: { set: ['a', 'a'] } })).toEqual([]);
    expect(messages(c.validateUpdate({ spec: { set: ['a', 'a'] } }, { spec: { set: ['a'] } }))).toEqual(['spec.set[1]: Duplicate value: "a"']);
  });

  it('takes an object with fields its schema does not know as changed', () => {
    // common.CorrelatedObject correlates only fields with a schema: unknown ones make the object unequal.
    const loose = compile(objectWith({ x: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, maxProperties: 1 } }));
    const v = { x: { a: 1, b: 2 } };
    expect(messages(loose.validateUpdate(v, structuredClone(v)))).toEqual(['x: Too many: 2: must have at most 1 items']);
  });
});
