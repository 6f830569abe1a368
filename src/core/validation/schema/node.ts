/**
 * A version's schema read once into the shape the walks use (upstream reads it once too: the
 * structural schema and the kube-openapi validator are built when the definition is served).
 * A node holds what the schema says and what the walks ask of it often: property lookups,
 * which subtrees hold defaults, list types or embedded resources, the enum as sets, the
 * pattern compiled once.
 *
 * Nodes are kept per schema object (a WeakMap per profile and use), so a schema must not be
 * changed once compiled; the stored definition's schema never is.
 */
import type { JSONSchemaProps, SchemaExtensions } from './types';
import { type FormatCheck, formatCheck, isSupportedFormat, normalizeFormatName } from './formats';
import { compareGoStrings } from '../../../codecs/go-strings';
import { MAX_NESTING_DEPTH } from '../../../codecs/limits';
import { canonicalKey, goKind, goInt64, isInt64 } from './go-values';
import type * as Re2js from 're2js';

type RE2 = Re2js.RE2JS;

/**
 * Which validator the node feeds. `resource`: the custom resource's, built by apiextensions'
 * ConvertJSONSchemaProps (unsupported formats dropped, int-or-string typed `integer,string`).
 * `defaults`: the one CRD validation checks a `default` with, built from the structural
 * schema's ToKubeOpenAPI (formats kept as written, int-or-string untyped).
 */
export type NodeMode = 'resource' | 'defaults';

/** An enum as upstream compares a value with it (basicCommonValidator: Go conversions, then DeepEqual). */
export interface EnumSet {
  /** The schema's values, for the message. */
  readonly values: readonly unknown[];
  readonly strings: ReadonlySet<string>;
  readonly numbers: ReadonlySet<number>;
  readonly ints: ReadonlySet<number>;
  readonly bools: ReadonlySet<boolean>;
  /** Objects and arrays by their canonical JSON. */
  readonly composites: ReadonlySet<string>;
}

export interface SchemaNode {
  readonly schema: JSONSchemaProps;
  readonly ext: SchemaExtensions;
  readonly mode: NodeMode;

  readonly properties: ReadonlyMap<string, SchemaNode> | undefined;
  /** Property names in Go's byte order: the order errors about properties come in. */
  readonly propertyNames: readonly string[];
  /** additionalProperties is set (true, false or a schema): upstream's `AdditionalProperties != nil`. */
  readonly hasAdditional: boolean;
  /** additionalProperties as a boolean (`Allows`); true when a schema. */
  readonly additionalAllows: boolean;
  readonly additional: SchemaNode | undefined;
  readonly items: SchemaNode | undefined;
  readonly allOf: readonly SchemaNode[] | undefined;
  readonly anyOf: readonly SchemaNode[] | undefined;
  readonly oneOf: readonly SchemaNode[] | undefined;
  readonly not: SchemaNode | undefined;

  readonly preserveUnknown: boolean;
  readonly embedded: boolean;
  readonly listType: string | undefined;
  readonly listMapKeys: readonly string[] | undefined;

  readonly nullable: boolean;
  /** A non-null `default` (a null one is no default upstream). */
  readonly hasDefault: boolean;
  readonly default: unknown;

  /** The type list the type validator checks against, undefined when none. */
  readonly types: readonly string[] | undefined;
  readonly typeText: string;
  /** The format the type validator sees ('' when none or dropped). */
  readonly format: string;
  /** The registry's check for it, when strfmt knows it. */
  readonly formatCheck: FormatCheck | undefined;
  readonly enum: EnumSet | undefined;
  readonly required: readonly string[] | undefined;

  /** Any of allOf, anyOf, oneOf, not (the schemaProps validator has work). */
  readonly junctors: boolean;
  /** maxLength, minLength or pattern is set. */
  readonly stringChecks: boolean;
  /** multipleOf, minimum or maximum is set. */
  readonly numberChecks: boolean;
  /** The properties that have a default, in propertyNames' order. */
  readonly defaultProps: readonly string[];
  /** The properties with a default in their subtree: all defaulting looks at (in propertyNames' order). */
  readonly defaultWalk: readonly string[];
  /** Somewhere in this subtree (properties, additionalProperties, items) is a default. */
  readonly subtreeDefaults: boolean;
  /** Somewhere in this subtree is a list type `set` or `map`. */
  readonly subtreeListTypes: boolean;
  /** Somewhere in this subtree is an embedded resource. */
  readonly subtreeEmbedded: boolean;

  /** The pattern as Go's regexp compiles it, or its error; compiled on first use. */
  regex: PatternTest | string | undefined;
}

/** A schema nested past this is refused: the decode limits keep any real one far below. */
const MAX_SCHEMA_DEPTH = MAX_NESTING_DEPTH;

export class SchemaTooDeep extends Error {
  constructor() {
    super(`the schema is nested deeper than ${MAX_SCHEMA_DEPTH} levels`);
    this.name = 'SchemaTooDeep';
  }
}

/** Shared by every server in the process: pure memos keyed by the (constant) profile names and the schema objects. */
const nodeMemo = new WeakMap<SchemaExtensions, Record<NodeMode, WeakMap<JSONSchemaProps, SchemaNode>>>();

function memoFor(ext: SchemaExtensions, mode: NodeMode): WeakMap<JSONSchemaProps, SchemaNode> {
  let byMode = nodeMemo.get(ext);
  if (!byMode) nodeMemo.set(ext, (byMode = { resource: new WeakMap(), defaults: new WeakMap() }));
  return byMode[mode];
}

const isSchema = (v: unknown): v is JSONSchemaProps => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The node of `schema` for `mode`, compiled once per schema object. */
export function schemaNode(schema: JSONSchemaProps, ext: SchemaExtensions, mode: NodeMode = 'resource'): SchemaNode {
  return compileNode(schema, ext, mode, memoFor(ext, mode), 0);
}

function compileNode(schema: JSONSchemaProps, ext: SchemaExtensions, mode: NodeMode, memo: WeakMap<JSONSchemaProps, SchemaNode>, depth: number): SchemaNode {
  const known = memo.get(schema);
  if (known) return known;
  if (depth > MAX_SCHEMA_DEPTH) throw new SchemaTooDeep();
  const child = (s: unknown): SchemaNode | undefined => (isSchema(s) ? compileNode(s, ext, mode, memo, depth + 1) : undefined);
  const children = (list: unknown): SchemaNode[] | undefined => (Array.isArray(list) ? list.filter(isSchema).map((s) => child(s)!) : undefined);

  let properties: Map<string, SchemaNode> | undefined;
  let propertyNames: string[] = [];
  if (isSchema(schema.properties)) {
    properties = new Map();
    propertyNames = Object.keys(schema.properties).sort(compareGoStrings);
    for (const name of propertyNames) {
      const sub = child(schema.properties[name]);
      if (sub) properties.set(name, sub);
    }
    propertyNames = propertyNames.filter((n) => properties!.has(n));
  }
  const ap = schema.additionalProperties;
  const additional = child(ap);
  const hasAdditional = ap !== undefined && ap !== null;
  // A tuple `items` (a list) is not structural; only a single schema is followed.
  const items = child(schema.items);
  const allOf = children(schema.allOf);
  const anyOf = children(schema.anyOf);
  const oneOf = children(schema.oneOf);
  const not = child(schema.not);

  const intOrString = schema[ext.intOrString as `x-${string}`] === true;
  let types: string[] | undefined = typeof schema.type === 'string' && schema.type !== '' ? [schema.type] : undefined;
  // ConvertJSONSchemaProps types an int-or-string field; ToKubeOpenAPI (the defaults' validator) does not.
  if (intOrString && mode === 'resource') types = ['integer', 'string'];

  let format = typeof schema.format === 'string' ? schema.format : '';
  // StripUnsupportedFormatsPostProcess, for the custom resource's validator only.
  if (mode === 'resource' && format !== '' && !isSupportedFormat(format)) format = '';

  const hasDefault = schema.default !== undefined && schema.default !== null;
  const listType = typeof schema[ext.listType as `x-${string}`] === 'string' ? (schema[ext.listType as `x-${string}`] as string) : undefined;
  const keys = schema[ext.listMapKeys as `x-${string}`];
  const embedded = schema[ext.embeddedResource as `x-${string}`] === true;
  const structural = [...(properties?.values() ?? []), ...(additional ? [additional] : []), ...(items ? [items] : [])];

  const node: SchemaNode = {
    schema,
    ext,
    mode,
    properties,
    propertyNames,
    hasAdditional,
    additionalAllows: additional !== undefined || ap === true,
    additional,
    items,
    allOf,
    anyOf,
    oneOf,
    not,
    preserveUnknown: schema[ext.preserveUnknownFields as `x-${string}`] === true,
    embedded,
    listType,
    listMapKeys: Array.isArray(keys) ? keys.filter((k): k is string => typeof k === 'string') : undefined,
    nullable: schema.nullable === true,
    hasDefault,
    default: schema.default,
    types,
    typeText: types ? types.join(',') : '',
    format,
    formatCheck: format !== '' ? formatCheck(format) : undefined,
    enum: Array.isArray(schema.enum) && schema.enum.length > 0 ? enumSet(schema.enum) : undefined,
    required: Array.isArray(schema.required) && schema.required.length > 0 ? schema.required : undefined,
    junctors: !!(allOf?.length || anyOf?.length || oneOf?.length || not),
    stringChecks: typeof schema.maxLength === 'number' || typeof schema.minLength === 'number' || (typeof schema.pattern === 'string' && schema.pattern !== ''),
    numberChecks: typeof schema.multipleOf === 'number' || typeof schema.minimum === 'number' || typeof schema.maximum === 'number',
    defaultProps: propertyNames.filter((n) => properties!.get(n)!.hasDefault),
    defaultWalk: propertyNames.filter((n) => properties!.get(n)!.subtreeDefaults),
    subtreeDefaults: hasDefault || structural.some((n) => n.subtreeDefaults),
    subtreeListTypes: listType === 'set' || listType === 'map' || structural.some((n) => n.subtreeListTypes),
    subtreeEmbedded: embedded || structural.some((n) => n.subtreeEmbedded),
    regex: undefined,
  };
  memo.set(schema, node);
  return node;
}

/** The canonical text of an object or array, for set membership. */
export function canonicalJson(v: unknown): string {
  return canonicalKey(v);
}

function enumSet(values: unknown[]): EnumSet {
  const strings = new Set<string>();
  const numbers = new Set<number>();
  const ints = new Set<number>();
  const bools = new Set<boolean>();
  const composites = new Set<string>();
  for (const v of values) {
    switch (goKind(v)) {
      case 'string':
        strings.add(v as string);
        break;
      case 'int':
        numbers.add(v as number);
        ints.add(v as number);
        break;
      case 'float':
        numbers.add(v as number);
        break;
      case 'bool':
        bools.add(v as boolean);
        break;
      case 'map':
      case 'slice':
        composites.add(canonicalJson(v));
        break;
      // A null in an enum matches nothing (reflect.TypeOf(nil) is skipped).
    }
  }
  return { values, strings, numbers, ints, bools, composites };
}

/** `string(rune(n))` of an int64, which reflect's Convert makes of an integer meeting a string enum value. */
function runeString(n: number): string {
  const r = Number(BigInt.asIntN(32, BigInt(n)));
  return r < 0 || r > 0x10ffff || (r >= 0xd800 && r <= 0xdfff) ? '\ufffd' : String.fromCodePoint(r);
}

/**
 * basicCommonValidator's match: the value converted to each enum value's Go type where Go
 * converts it, then compared. So an integer matches a float enum value it equals and the
 * string of the rune it is (`65` matches `"A"`), and a float matches the integer it truncates
 * to (`1.5` matches `1`); null matches nothing.
 */
export function enumMatches(e: EnumSet, v: unknown): boolean {
  switch (goKind(v)) {
    case 'string':
      return e.strings.has(v as string);
    case 'int':
      return e.numbers.has(v as number) || (e.strings.size > 0 && e.strings.has(runeString(v as number)));
    case 'float':
      return e.numbers.has(v as number) || e.ints.has(goInt64(v as number));
    case 'bool':
      return e.bools.has(v as boolean);
    case 'map':
    case 'slice':
      return e.composites.size > 0 && e.composites.has(canonicalJson(v));
    default:
      return false;
  }
}

/** A compiled pattern: whether Go's regexp.MatchString finds a match in a string. */
export interface PatternTest {
  test(s: string): boolean;
}

/**
 * The X of a pattern `^X$` whose search is the same as a whole-string match of X: X has no
 * `|` outside parentheses (`^a|b$` searches for either end), no flag group (`(?m)` would change
 * the final `$`), no `\Q` quoting; `^` and `$` are not escaped. re2js answers a whole-string
 * match several times faster than a search, and most schema patterns have this shape.
 */
export function anchoredBody(pattern: string): string | undefined {
  if (pattern.length < 2 || pattern[0] !== '^' || pattern[pattern.length - 1] !== '$') return undefined;
  const body = pattern.slice(1, -1);
  let depth = 0;
  let inClass = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c === '\\') {
      // An escape at the very end would escape the final `$`.
      if (i + 1 >= body.length || body[i + 1] === 'Q') return undefined;
      i++;
      continue;
    }
    if (inClass) {
      if (c === '[' && body[i + 1] === ':') {
        const end = body.indexOf(':]', i + 2);
        if (end < 0) return undefined;
        i = end + 1;
      } else if (c === ']') {
        inClass = false;
      }
      continue;
    }
    if (c === '[') {
      inClass = true;
      // A `]` first in the class (after an optional `^`) is literal.
      if (body[i + 1] === '^') i++;
      if (body[i + 1] === ']') i++;
    } else if (c === '(') {
      if (body[i + 1] === '?' && body[i + 2] !== ':') return undefined;
      depth++;
    } else if (c === ')') {
      depth--;
    } else if (c === '|' && depth === 0) {
      return undefined;
    }
  }
  return inClass || depth !== 0 ? undefined : body;
}

/**
 * The node's pattern compiled by Go's rules (re2js: RE2 syntax and semantics, linear in the
 * input whatever the pattern, so no pattern can stall a write), once per schema node; or the
 * compile error's text, as Go's regexp words it.
 */
export function nodeRegex(node: SchemaNode): PatternTest | string {
  if (node.regex === undefined) {
    const { RE2JS } = require('re2js') as typeof Re2js;
    const pattern = node.schema.pattern ?? '';
    try {
      const re = RE2JS.compile(pattern);
      const body = anchoredBody(pattern);
      let whole: RE2 | undefined;
      if (body !== undefined) {
        try {
          whole = RE2JS.compile(body);
        } catch {
          whole = undefined;
        }
      }
      node.regex = whole ? { test: (s: string) => whole.matches(s) } : { test: (s: string) => re.test(s) };
    } catch (err) {
      node.regex = (err as Error).message;
    }
  }
  return node.regex;
}

export { isInt64, normalizeFormatName };
