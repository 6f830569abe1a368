/**
 * The schema language: one declarative definition per API type, from which the protobuf codec,
 * the Go-ordered JSON encoder and (issue 5) validation, unknown-field pruning, strategic merge
 * patch, server-side apply and OpenAPI are derived, so that no fact about a type is written
 * twice.
 *
 * A definition records what upstream's Go struct says about each field: its JSON name, its
 * protobuf number, its value type, whether the Go field is a pointer, whether its JSON tag has
 * `omitempty`, and the merge markers. Fields are listed in Go declaration order, which is the
 * order upstream's JSON follows; protobuf writes them in field-number order.
 *
 * Type names are vendor-neutral and qualified by package: `core.v1.PodSpec`,
 * `meta.v1.ObjectMeta`. Inside a package's definitions a bare name (`PodSpec`) means a type of
 * the same package.
 */
import type { GroupKey } from '../naming';

/** Scalars. `bytes` is base64 (standard alphabet, padded) in JSON. */
export type ScalarType = 'string' | 'bool' | 'int32' | 'int64' | 'double' | 'bytes';

/**
 * Types whose JSON form differs from their protobuf message (upstream's hand-written marshallers):
 *
 * | type          | JSON                                   | protobuf                                   | JSON of the zero value |
 * |---------------|----------------------------------------|--------------------------------------------|------------------------|
 * | Time          | RFC 3339, seconds (`2008-01-01T01:01:01Z`) | `{int64 seconds=1, int32 nanos=2}`; zero → empty message | `null` |
 * | MicroTime     | RFC 3339 with 6 fraction digits        | as Time                                    | `null`                 |
 * | Duration      | Go duration string (`1m30s`)           | `{int64 duration=1}` (nanoseconds)         | `"0s"`                 |
 * | Quantity      | string (`100m`, `1Gi`)                 | `{string string=1}`                        | `"0"`                  |
 * | IntOrString   | number or string                       | `{int64 type=1, int32 intVal=2, string strVal=3}` | `0`             |
 * | RawExtension  | any JSON value, verbatim               | `{bytes raw=1}` holding the JSON           | `null`                 |
 * | FieldsV1      | JSON object (`{"f:metadata":{}}`)      | `{bytes Raw=1}` holding the JSON           | `null`                 |
 * | JSON          | any JSON value, verbatim (apiextensions' `default`, `example`, `enum` items) | `{bytes raw=1}` holding the JSON | `null` |
 *
 * RawExtension and JSON travel alike; they differ in their OpenAPI (an object, an untyped value).
 */
export type SpecialType = 'Time' | 'MicroTime' | 'Duration' | 'Quantity' | 'IntOrString' | 'RawExtension' | 'FieldsV1' | 'JSON';

export type ValueType =
  | { readonly kind: 'scalar'; readonly scalar: ScalarType }
  | { readonly kind: 'special'; readonly special: SpecialType }
  /** A nested message; `type` is a qualified type name once the registry has resolved it. */
  | { readonly kind: 'message'; readonly type: string }
  /**
   * A list. `wrapped` marks Go's named slice types with a message of their own (`ExtraValue`,
   * `Verbs`): JSON is a plain array, protobuf a message `{repeated item items = 1}` that is
   * written whenever the slice is non-nil, even when empty.
   */
  | { readonly kind: 'list'; readonly item: ValueType; readonly wrapped?: boolean }
  /** A map with string keys; protobuf writes its entries sorted by key. */
  | { readonly kind: 'map'; readonly value: ValueType };

/** Upstream's list markers (docs/API.md, "Merge markers"). */
export type ListType = 'atomic' | 'set' | 'map';
/** `mapType` on maps, `structType` on structs. */
export type ElementRelationship = 'atomic' | 'granular';
/** The `patchStrategy` struct tag of strategic merge patch. */
export type PatchStrategy = 'merge' | 'replace' | 'retainKeys' | 'merge,retainKeys';

export interface FieldDef {
  /** JSON name; for an `inline` field, the Go name of the embedded struct (not used in JSON). */
  readonly name: string;
  /** Protobuf field number (upstream's, for wire compatibility). */
  readonly number: number;
  readonly type: ValueType;
  /**
   * The Go field is a pointer: protobuf writes it only when set, JSON distinguishes "absent" from
   * the zero value (`replicas: 0`). Non-pointer scalars and structs are always written in
   * protobuf, zero or not. Slices, maps and bytes are nil-able without this flag.
   */
  readonly pointer: boolean;
  /**
   * The JSON tag has `omitempty`: zero scalars, nil pointers and empty slices/maps/bytes are left
   * out. Without it, JSON writes them (`"verbs": null` for a nil slice). Go ignores `omitempty`
   * on non-pointer structs, so those are always written (`"creationTimestamp": null`, `"spec": {}`).
   */
  readonly omitEmpty: boolean;
  /**
   * Go's `json:",inline"` embedding with a protobuf field of its own (`Volume.VolumeSource`,
   * `Probe.ProbeHandler`): the nested type's fields appear in the parent's JSON object, while
   * protobuf nests them as a message under `number`.
   */
  readonly inline: boolean;
  /** Required in OpenAPI: neither `+optional` nor `omitempty` upstream (or `+required`). */
  readonly required: boolean;
  /** `+listType`; absent when upstream has none (then `patchStrategy` decides, docs/API.md, "Merge markers"). */
  readonly listType?: ListType;
  /** `+listMapKey` (in order), only with `listType: 'map'`. */
  readonly listMapKeys?: readonly string[];
  /** `+mapType` on a map field. */
  readonly mapType?: ElementRelationship;
  /** `+structType` on a struct field (overrides the type's own). */
  readonly structType?: ElementRelationship;
  /** `patchStrategy` struct tag (strategic merge patch). */
  readonly patchStrategy?: PatchStrategy;
  /** `patchMergeKey` struct tag (strategic merge patch). */
  readonly patchMergeKey?: string;
  /**
   * The JSON name is a schema extension's, which the naming profile spells
   * (`naming.extension(name)`: `x-kubernetes-list-type` / `x-platform-list-type`), as
   * apiextensions' JSONSchemaProps names its `x-kubernetes-…` fields. `name` is the part after
   * the vendor word until the profile's registry compiles it (src/schema/registry.ts); compiled
   * fields carry their JSON name.
   */
  readonly extension?: boolean;
}

/**
 * A type upstream writes in JSON with a hand-written marshaller as one of two shapes, never as
 * the object of its own fields (apiextensions' JSONSchemaPropsOrArray, -OrBool, -OrStringArray):
 * a JSON object is the value of field `object` (a message), anything else the value of field
 * `other` (a list, or a boolean). Protobuf writes the type's own message, with the fields set
 * that way. Reading the message back, a list `other` holding items wins over `object` (the
 * marshallers write it first), and a boolean `other` is written only when `object` is unset
 * (JSONSchemaPropsOrBool: a schema allows); an object also sets a boolean `other` to true.
 */
export interface UnionDef {
  readonly object: string;
  readonly other: string;
}

export interface TypeDef {
  /** Qualified, vendor-neutral name: `core.v1.Pod`. */
  readonly name: string;
  /** In Go declaration order (JSON order). */
  readonly fields: readonly FieldDef[];
  /**
   * The type embeds TypeMeta: JSON starts with `kind` and `apiVersion` (both omitempty);
   * protobuf has no field for them (the envelope carries them).
   */
  readonly typeMeta: boolean;
  /** `+structType` on the type (`atomic` for references such as LocalObjectReference). */
  readonly structType?: ElementRelationship;
  /** Written in JSON as one of two shapes (UnionDef). */
  readonly union?: UnionDef;
}

/**
 * The API groups of Keelson's types, vendor-neutral. The naming profile turns them into group
 * names (`rbac` → `naming.groups.rbac`, e.g. `rbac.authorization.<vendor domain>`).
 */
export type { GroupKey } from '../naming';

/** A top-level kind (something with apiVersion and kind) and the type that defines it. */
export interface KindDef {
  readonly group: GroupKey;
  readonly version: string;
  readonly kind: string;
  /** Qualified type name. */
  readonly type: string;
}

/** One Go package's definitions: its types and the kinds it serves. */
export interface PackageDef {
  /** `core.v1`, `meta.v1`, ... */
  readonly name: string;
  readonly types: readonly TypeDef[];
}
