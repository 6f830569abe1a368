/** The checks of a definition's defaults (ValidateStructural's, ValidateDefaults, the forbidden places). */
import { checkSchemaDefaults } from '../../../../src/core/validation/schema';
import { FieldPath } from '../../../../src/core/validation/field-errors';
import { K8S, PLATFORM, messages, objectWith, withExt } from './support';

const P = 'spec.versions[0].schema.openAPIV3Schema';
const check = (schema: unknown, options = {}, ext = K8S) => messages(checkSchemaDefaults(withExt(schema, ext), ext, P, options));
const spec = (props: Record<string, unknown>) => objectWith({ spec: objectWith(props) });

describe('defaults that must validate', () => {
  it('accepts valid defaults', () => {
    expect(check(spec({ ok: { type: 'string', default: 'fine', maxLength: 10 }, n: { type: 'integer', default: 3 } }))).toEqual([]);
  });

  it('refuses unknown fields in a default', () => {
    const schema = spec({ x: objectWith({ a: { type: 'string' } }, { default: { a: 'x', b: 1 } }) });
    expect(check(schema)).toEqual([
      `${P}.properties[spec].properties[x].default: Invalid value: map[string]interface {}{"a":"x", "b":1}: must not have unknown fields`,
    ]);
    expect(check(schema, { requirePruned: false })).toEqual([]);
    expect(checkSchemaDefaults(withExt(schema, K8S), K8S, FieldPath.root('spec', 'versions'))[0]!.field).toBe(
      'spec.versions.properties[spec].properties[x].default',
    );
  });

  it('validates a default against its own schema, at the default', () => {
    expect(check(spec({ n: { type: 'integer', default: 'abc' } }))).toEqual([
      `${P}.properties[spec].properties[n].default: Invalid value: "string":  in body must be of type integer: "string"`,
    ]);
    expect(check(spec({ long: { type: 'string', default: 'toolong', maxLength: 3 } }))).toEqual([
      `${P}.properties[spec].properties[long].default: Too long: may not be more than 3 bytes`,
    ]);
    expect(check(spec({ o: objectWith({ a: { type: 'integer' } }, { default: { a: 'x' } }) }))).toEqual([
      `${P}.properties[spec].properties[o].default.a: Invalid value: "string": a in body must be of type integer: "string"`,
    ]);
  });

  it('checks items defaults, not additionalProperties ones', () => {
    expect(
      check(
        spec({
          list: { type: 'array', items: { type: 'string', default: 5 } },
          labels: { type: 'object', additionalProperties: { type: 'string', default: 5 } },
        }),
      ),
    ).toEqual([`${P}.properties[spec].properties[list].items.default: Invalid value: "integer":  in body must be of type string: "integer"`]);
  });

  it('validates with the structural schema: formats as written, int-or-string untyped', () => {
    expect(check(spec({ f: { type: 'string', format: 'foo', default: 5 } }))).toEqual([
      `${P}.properties[spec].properties[f].default: Invalid value: "int64":  in body must be of type foo: "int64"`,
    ]);
    expect(check(spec({ ios: { 'x-kubernetes-int-or-string': true, default: true } }))).toEqual([]);
  });
});

describe('embedded resources in defaults', () => {
  const embedded = (extra: Record<string, unknown>) => ({
    type: 'object',
    'x-kubernetes-embedded-resource': true,
    'x-kubernetes-preserve-unknown-fields': true,
    ...extra,
  });

  it('checks TypeMeta and ObjectMeta of an embedded default', () => {
    expect(check(spec({ tpl: embedded({ default: { apiVersion: 'v1', metadata: { name: 'a/b' } } }) }))).toEqual([
      `${P}.properties[spec].properties[tpl].default.kind: Required value: must not be empty`,
      `${P}.properties[spec].properties[tpl].default.metadata.name: Invalid value: "a/b": may not contain '/'`,
    ]);
    expect(check(spec({ tpl: embedded({ default: { apiVersion: 1, kind: 'Pod' } }) }))).toEqual([
      `${P}.properties[spec].properties[tpl].default.apiVersion: Invalid value: 1: must be a string`,
    ]);
    expect(check(spec({ tpl: embedded({ default: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', foo: 1 }, spec: {} } }) }))).toEqual([]);
  });

  it('prunes an embedded default as a resource root', () => {
    const schema = spec({
      tpl: {
        type: 'object',
        'x-kubernetes-embedded-resource': true,
        properties: { spec: { type: 'object' } },
        default: { apiVersion: 'v1', kind: 'Pod', extra: 1 },
      },
    });
    expect(check(schema)).toEqual([
      `${P}.properties[spec].properties[tpl].default: Invalid value: map[string]interface {}{"apiVersion":"v1", "extra":1, "kind":"Pod"}: must not have unknown fields`,
    ]);
  });

  it('checks a default inside an embedded resource metadata as the metadata it makes', () => {
    const schema = spec({ tpl: embedded({ properties: { metadata: objectWith({ name: { type: 'string', default: 'a/b' } }) } }) });
    expect(check(schema)).toEqual([
      `${P}.properties[spec].properties[tpl].properties[metadata].properties[name].default: Invalid value: "a/b": must result in valid metadata: metadata.name: Invalid value: "a/b": may not contain '/'`,
    ]);
    const ok = spec({ tpl: embedded({ properties: { metadata: objectWith({ name: { type: 'string', default: 'x' } }) } }) });
    expect(check(ok)).toEqual([]);
  });
});

describe('where defaults are forbidden', () => {
  it('refuses defaults in the root metadata, apiVersion and kind', () => {
    const schema = objectWith({ metadata: objectWith({ name: { type: 'string', default: 'x' } }), kind: { type: 'string', default: 'K' } });
    expect(check(schema)).toEqual([
      `${P}.properties[kind].default: Forbidden: must not be set in top-level kind`,
      `${P}.properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata`,
    ]);
    // A default that gives invalid metadata is reported as that too.
    expect(check(objectWith({ metadata: objectWith({ name: { type: 'string', default: 'a/b' } }) }))).toEqual([
      `${P}.properties[metadata].properties[name].default: Invalid value: "a/b": must result in valid metadata: metadata.name: Invalid value: "a/b": may not contain '/'`,
      `${P}.properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata`,
    ]);
  });

  it('refuses defaults in additionalProperties under an embedded resource metadata', () => {
    const schema = spec({
      tpl: {
        type: 'object',
        'x-kubernetes-embedded-resource': true,
        'x-kubernetes-preserve-unknown-fields': true,
        properties: { metadata: objectWith({ labels: { type: 'object', additionalProperties: { type: 'string', default: 'v' } } }) },
      },
    });
    expect(check(schema)).toEqual([
      `${P}.properties[spec].properties[tpl].properties[metadata].properties[labels].additionalProperties.default: Forbidden: must not be set inside additionalProperties applying to object metadata`,
    ]);
  });

  it('counts a null default as set', () => {
    expect(check(objectWith({ kind: { type: 'string', default: null } }))).toEqual([
      `${P}.properties[kind].default: Forbidden: must not be set in top-level kind`,
    ]);
  });

  it('refuses defaults under allOf, anyOf, oneOf and not, and then checks no values', () => {
    const schema = spec({
      j: { type: 'string', default: 5, allOf: [{ default: 'x' }], anyOf: [{ properties: { a: { default: 1 } } }], not: { default: 'y' } },
    });
    expect(check(schema)).toEqual([
      `${P}.properties[spec].properties[j].allOf[0].default: Forbidden: must be undefined to be structural`,
      `${P}.properties[spec].properties[j].anyOf[0].properties[a].default: Forbidden: must be undefined to be structural`,
      `${P}.properties[spec].properties[j].not.default: Forbidden: must be undefined to be structural`,
    ]);
    // Without step 1 the value is checked: the junctors of the default's own schema apply, reported at the default.
    expect(check(schema, { structural: false })).toEqual([
      `${P}.properties[spec].properties[j].default: Invalid value: "integer":  in body must be of type string: "integer"`,
      `${P}.properties[spec].properties[j].default: Invalid value: "": "" must not validate the schema (not)`,
    ]);
  });

  it('reads the platform profile names', () => {
    const schema = spec({
      tpl: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true, default: { apiVersion: 'v1' } },
    });
    expect(check(schema, {}, PLATFORM)).toEqual([`${P}.properties[spec].properties[tpl].default.kind: Required value: must not be empty`]);
  });
});
