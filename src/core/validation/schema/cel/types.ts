/**
 * What a validation rule's `self` is, read from its schema node as upstream's SchemaDeclType
 * reads it (apiserver/pkg/cel/common/schemas.go): objects with properties are objects whose
 * fields are the properties (names escaped for CEL), `additionalProperties` maps, arrays lists,
 * int-or-string and preserve-unknown-fields values `dyn`, strings of format `date`/`date-time`
 * timestamps and `duration` durations, `byte` bytes; an embedded resource (and the resource's
 * root) has `apiVersion`, `kind` and `metadata` (only `name` and `generateName`).
 *
 * Each type carries upstream's size bounds for the cost estimate: the schema's maxLength,
 * maxItems or maxProperties, else the most the request size limit (3 MiB) could hold, and how
 * many times a rule at the node can run at most (the product of its lists' and maps' bounds).
 */
import type { SchemaNode } from '../node';
import { CEL_RESERVED_WORDS } from '../../../../util/cel';

/** apiserver's MaxRequestSizeBytes (3 MiB): what unbounded sizes are estimated from. */
export const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;

export type CelKind = 'object' | 'map' | 'list' | 'string' | 'int' | 'double' | 'bool' | 'timestamp' | 'duration' | 'bytes' | 'intOrString' | 'dyn';

export interface CelTypeNode {
  readonly kind: CelKind;
  /** The schema node it is read from (absent for the synthetic metadata fields). */
  readonly node: SchemaNode | undefined;
  /** Strings: the longest; lists: the most items; maps: the most entries; 1 otherwise. */
  readonly maxElements: number;
  /** Object fields by their CEL (escaped) names. */
  readonly fields: ReadonlyMap<string, CelTypeNode> | undefined;
  /** The JSON property name of each CEL field name (they differ for escaped names). */
  readonly jsonNames: ReadonlyMap<string, string> | undefined;
  /** List items, map values. */
  readonly elem: CelTypeNode | undefined;
  /** The schema's `type` (upstream's value of the Invalid errors rules raise: `"object"`). */
  readonly schemaType: string;
  /** The root of a resource or an embedded resource (metadata is name and generateName only). */
  readonly resourceRoot: boolean;
}

const scalar = (kind: CelKind, maxElements = 1, schemaType = ''): CelTypeNode => ({
  kind,
  node: undefined,
  maxElements,
  fields: undefined,
  jsonNames: undefined,
  elem: undefined,
  schemaType,
  resourceRoot: false,
});

/** The metadata a rule sees of a resource: name and generateName (upstream's WithTypeAndObjectMeta). */
const MAX_NAME = 253;
const METADATA: CelTypeNode = {
  kind: 'object',
  node: undefined,
  maxElements: 1,
  fields: new Map([
    ['name', scalar('string', MAX_NAME, 'string')],
    ['generateName', scalar('string', MAX_NAME, 'string')],
  ]),
  jsonNames: new Map([
    ['name', 'name'],
    ['generateName', 'generateName'],
  ]),
  elem: undefined,
  schemaType: 'object',
  resourceRoot: false,
};

const ESCAPABLE = /^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$/;

/**
 * upstream's cel.Escape: a property name as a CEL field name (`__dash__`, `__dot__`,
 * `__slash__`, `__underscores__`, `__<keyword>__`), or undefined when it cannot be one.
 */
export function escapeName(name: string): string | undefined {
  if (CEL_RESERVED_WORDS.has(name)) return `__${name}__`;
  if (!ESCAPABLE.test(name)) return undefined;
  let out = '';
  for (let i = 0; i < name.length; i++) {
    const c = name[i]!;
    if (c === '_' && name[i + 1] === '_') {
      out += '__underscores__';
      i++;
    } else if (c === '.') out += '__dot__';
    else if (c === '-') out += '__dash__';
    else if (c === '/') out += '__slash__';
    else out += c;
  }
  return out;
}

/** The smallest JSON a value of the schema can be written as (upstream's estimateMinSizeJSON). */
function minSizeJSON(node: SchemaNode | undefined): number {
  if (!node) return 1;
  const s = node.schema;
  if (node.schema[node.ext.intOrString as `x-${string}`] === true) return 1;
  switch (s.type) {
    case 'boolean':
      return 4;
    case 'number':
    case 'integer':
      return 1;
    case 'string':
      return 2 + (typeof s.minLength === 'number' ? s.minLength : 0);
    case 'array':
    case 'object':
      return 2;
    default:
      return 1;
  }
}

const maxItemsFor = (items: SchemaNode | undefined) => Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (minSizeJSON(items) + 1));
/** A map entry's overhead: two quotes, a colon and a comma. */
const maxPropertiesFor = (values: SchemaNode | undefined) => Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (minSizeJSON(values) + 4));

function stringMax(node: SchemaNode): number {
  const s = node.schema;
  if (typeof s.maxLength === 'number') return s.maxLength;
  switch (s.format) {
    case 'date':
      return 10;
    case 'date-time':
    case 'duration':
      return 64;
    default:
      return MAX_REQUEST_SIZE_BYTES - 2;
  }
}

/** Shared by every server in the process: a pure memo keyed by the (constant) compiled schema nodes. */
const memo = new WeakMap<SchemaNode, { plain?: CelTypeNode; root?: CelTypeNode }>();

/** The CEL type of values of `node`; `resourceRoot` for the custom resource's root. */
export function celTypeOf(node: SchemaNode, resourceRoot = false): CelTypeNode {
  let m = memo.get(node);
  if (!m) memo.set(node, (m = {}));
  const isRoot = resourceRoot || node.embedded;
  const known = isRoot ? m.root : m.plain;
  if (known) return known;
  const t = build(node, isRoot);
  if (isRoot) m.root = t;
  else m.plain = t;
  return t;
}

function build(node: SchemaNode, resourceRoot: boolean): CelTypeNode {
  const s = node.schema;
  const schemaType = typeof s.type === 'string' ? s.type : '';
  const base = { node, fields: undefined, jsonNames: undefined, elem: undefined, schemaType, resourceRoot: false };
  if (s[node.ext.intOrString as `x-${string}`] === true) return { ...base, kind: 'intOrString', maxElements: MAX_REQUEST_SIZE_BYTES - 2 };
  switch (schemaType) {
    case 'boolean':
      return { ...base, kind: 'bool', maxElements: 1 };
    case 'integer':
      return { ...base, kind: 'int', maxElements: 1 };
    case 'number':
      return { ...base, kind: 'double', maxElements: 1 };
    case 'string': {
      const kind: CelKind =
        s.format === 'date' || s.format === 'date-time' ? 'timestamp' : s.format === 'duration' ? 'duration' : s.format === 'byte' ? 'bytes' : 'string';
      return { ...base, kind, maxElements: kind === 'string' || kind === 'bytes' ? stringMax(node) : 1 };
    }
    case 'array': {
      const elem = node.items ? celTypeOf(node.items) : scalar('dyn', MAX_REQUEST_SIZE_BYTES - 2);
      return { ...base, kind: 'list', elem, maxElements: typeof s.maxItems === 'number' ? s.maxItems : maxItemsFor(node.items) };
    }
    case 'object': {
      if (node.additional && !node.properties) {
        return {
          ...base,
          kind: 'map',
          elem: celTypeOf(node.additional),
          maxElements: typeof s.maxProperties === 'number' ? s.maxProperties : maxPropertiesFor(node.additional),
        };
      }
      if (node.preserveUnknown && !node.properties && !resourceRoot) return { ...base, kind: 'dyn', maxElements: MAX_REQUEST_SIZE_BYTES - 2 };
      const fields = new Map<string, CelTypeNode>();
      const jsonNames = new Map<string, string>();
      for (const name of node.propertyNames) {
        const escaped = escapeName(name);
        if (escaped === undefined) continue;
        fields.set(escaped, celTypeOf(node.properties!.get(name)!));
        jsonNames.set(escaped, name);
      }
      if (resourceRoot) {
        for (const name of ['apiVersion', 'kind']) {
          fields.set(name, scalar('string', MAX_NAME, 'string'));
          jsonNames.set(name, name);
        }
        fields.set('metadata', METADATA);
        jsonNames.set('metadata', 'metadata');
      }
      return { ...base, kind: 'object', fields, jsonNames, resourceRoot, maxElements: typeof s.maxProperties === 'number' ? s.maxProperties : fields.size };
    }
    default:
      return { ...base, kind: 'dyn', maxElements: MAX_REQUEST_SIZE_BYTES - 2 };
  }
}
