/**
 * The v2 document as `application/com.github.proto-openapi.spec.v2@v1.0+protobuf`: gnostic's
 * `openapi.v2.Document` message (the form kubectl downloads `/openapi/v2` in). Upstream parses
 * its JSON document into gnostic's messages; this writes the same messages directly from the
 * JSON shapes documents.ts produces. Vendor extensions and other free values travel as gnostic
 * `Any` messages holding their YAML.
 *
 * Field numbers are gnostic's OpenAPIv2.proto. Scalars at their zero value are left out, as
 * gnostic's (proto3) messages leave them. The document is also written in pieces — each path
 * and each definition an entry of its own, which concatenate (repeated fields) — so that a
 * document of many custom resources is put together from entries made once each.
 */
import YAML from 'yaml';
import { ProtoWriter } from '../../codecs/protobuf/writer';
import { isObject as isObjectOf } from '../../util/json-values';

type Json = Record<string, unknown>;

const LEN = 2;
const VARINT = 0;
const FIXED64 = 1;

class Out {
  readonly w = new ProtoWriter(1 << 12);

  str(no: number, v: unknown): void {
    if (typeof v === 'string' && v !== '') this.w.uint32((no << 3) | LEN).string(v);
  }

  strs(no: number, v: unknown): void {
    if (Array.isArray(v)) for (const s of v) this.w.uint32((no << 3) | LEN).string(String(s));
  }

  bool(no: number, v: unknown): void {
    if (v === true) this.w.uint32((no << 3) | VARINT).bool(true);
  }

  int(no: number, v: unknown): void {
    if (typeof v === 'number' && v !== 0) this.w.uint32((no << 3) | VARINT).int64(v);
  }

  double(no: number, v: unknown): void {
    if (typeof v === 'number' && v !== 0) this.w.uint32((no << 3) | FIXED64).double(v);
  }

  msg(no: number, body: () => void): void {
    this.w.uint32((no << 3) | LEN);
    const start = this.w.begin();
    body();
    this.w.end(start);
  }

  /** gnostic `Any`: the value as YAML. */
  any(no: number, value: unknown): void {
    this.msg(no, () => this.str(2, yamlOf(value)));
  }

  /** gnostic `NamedAny` entries for the `x-` keys of an object. */
  extensions(no: number, obj: Json): void {
    for (const [name, value] of Object.entries(obj)) {
      if (!name.startsWith('x-')) continue;
      this.msg(no, () => {
        this.str(1, name);
        this.any(2, value);
      });
    }
  }
}

const isObject = isObjectOf<Json>;

/** YAML 1.2's words that a plain scalar would read as something else than a string. */
const NOT_PLAIN = /^(?:true|false|null|True|False|Null|TRUE|FALSE|NULL|y|n|yes|no|on|off)$/i;
const PLAIN = /^[A-Za-z_][A-Za-z0-9_./-]*$/;

function plain(v: unknown): v is string {
  return typeof v === 'string' && PLAIN.test(v) && !NOT_PLAIN.test(v);
}

/**
 * A value as the YAML gnostic's `Any` holds. The shapes the documents are full of (booleans,
 * names, group-version-kinds and lists of them) are written directly, as the yaml library
 * writes them; anything else goes through it.
 */
export function yamlOf(value: unknown): string {
  if (value === true || value === false) return `${value}\n`;
  if (plain(value)) return `${value}\n`;
  const flat = (o: unknown, indent: string): string | undefined => {
    if (!isObject(o)) return undefined;
    const keys = Object.keys(o);
    if (!keys.length || !keys.every((k) => plain(k) && plain(o[k]))) return undefined;
    return keys.map((k, i) => `${i ? indent : ''}${k}: ${o[k]}\n`).join('');
  };
  const asObject = flat(value, '');
  if (asObject !== undefined) return asObject;
  if (Array.isArray(value) && value.length) {
    const items = value.map((item) => flat(item, '  '));
    if (items.every((x) => x !== undefined)) return items.map((x) => `- ${x}`).join('');
  }
  return YAML.stringify(value);
}

function schema(o: Out, s: Json): void {
  o.str(1, s.$ref);
  o.str(2, s.format);
  o.str(3, s.title);
  o.str(4, s.description);
  if (s.default !== undefined) o.any(5, s.default);
  o.double(6, s.multipleOf);
  o.double(7, s.maximum);
  o.bool(8, s.exclusiveMaximum);
  o.double(9, s.minimum);
  o.bool(10, s.exclusiveMinimum);
  o.int(11, s.maxLength);
  o.int(12, s.minLength);
  o.str(13, s.pattern);
  o.int(14, s.maxItems);
  o.int(15, s.minItems);
  o.bool(16, s.uniqueItems);
  o.int(17, s.maxProperties);
  o.int(18, s.minProperties);
  o.strs(19, s.required);
  if (Array.isArray(s.enum)) for (const value of s.enum) o.any(20, value);
  if (isObject(s.additionalProperties)) o.msg(21, () => o.msg(1, () => schema(o, s.additionalProperties as Json)));
  else if (typeof s.additionalProperties === 'boolean') {
    const allows = s.additionalProperties;
    // A oneof member is written even at its zero value: `false` must say so.
    o.msg(21, () => o.w.uint32((2 << 3) | VARINT).bool(allows));
  }
  if (typeof s.type === 'string') o.msg(22, () => o.strs(1, [s.type]));
  if (isObject(s.items)) o.msg(23, () => o.msg(1, () => schema(o, s.items as Json)));
  if (Array.isArray(s.allOf)) for (const x of s.allOf) if (isObject(x)) o.msg(24, () => schema(o, x));
  if (isObject(s.properties)) {
    o.msg(25, () => {
      for (const [name, value] of Object.entries(s.properties as Json)) {
        o.msg(1, () => {
          o.str(1, name);
          o.msg(2, () => schema(o, value as Json));
        });
      }
    });
  }
  if (s.example !== undefined) o.any(30, s.example);
  o.extensions(31, s);
}

function parameter(o: Out, p: Json): void {
  o.msg(1, () => {
    if (p.in === 'body') {
      o.msg(1, () => {
        o.str(1, p.description);
        o.str(2, p.name);
        o.str(3, p.in);
        o.bool(4, p.required);
        if (isObject(p.schema)) o.msg(5, () => schema(o, p.schema as Json));
      });
      return;
    }
    o.msg(2, () => {
      // query_parameter_sub_schema = 3 (unique_items = 20), path_parameter_sub_schema = 4 (unique_items = 19)
      const query = p.in === 'query';
      o.msg(query ? 3 : 4, () => {
        o.bool(1, p.required);
        o.str(2, p.in);
        o.str(3, p.description);
        o.str(4, p.name);
        o.str(query ? 6 : 5, p.type);
        o.bool(query ? 20 : 19, p.uniqueItems);
      });
    });
  });
}

function operation(o: Out, op: Json): void {
  o.strs(1, op.tags);
  o.str(3, op.description);
  o.str(5, op.operationId);
  o.strs(6, op.produces);
  o.strs(7, op.consumes);
  for (const p of (op.parameters as Json[] | undefined) ?? []) o.msg(8, () => parameter(o, p));
  if (isObject(op.responses)) {
    o.msg(9, () => {
      for (const [code, r] of Object.entries(op.responses as Record<string, Json>)) {
        o.msg(1, () => {
          o.str(1, code);
          o.msg(2, () =>
            o.msg(1, () => {
              o.str(1, r.description);
              if (isObject(r.schema)) o.msg(2, () => o.msg(1, () => schema(o, r.schema as Json)));
            }),
          );
        });
      }
    });
  }
  o.strs(10, op.schemes);
  o.extensions(13, op);
}

const METHOD_FIELDS: Record<string, number> = { get: 2, put: 3, post: 4, delete: 5, options: 6, head: 7, patch: 8 };

/** `Paths.path` entries (field 2, `NamedPathItem`), tags included: the bytes of any run of them concatenate. */
export function encodePathEntries(paths: Record<string, Json>): Buffer {
  const o = new Out();
  for (const [path, item] of Object.entries(paths)) {
    o.msg(2, () => {
      o.str(1, path);
      o.msg(2, () => {
        for (const [method, no] of Object.entries(METHOD_FIELDS)) {
          if (isObject(item[method])) o.msg(no, () => operation(o, item[method] as Json));
        }
        for (const p of (item.parameters as Json[] | undefined) ?? []) o.msg(9, () => parameter(o, p));
      });
    });
  }
  return o.w.finish();
}

/** One `Definitions.additional_properties` entry (field 1, `NamedSchema`), tag included. */
export function encodeDefinitionEntry(name: string, s: Json): Buffer {
  const o = new Out();
  o.msg(1, () => {
    o.str(1, name);
    o.msg(2, () => schema(o, s));
  });
  return o.w.finish();
}

function lengthPrefix(no: number, length: number): Buffer {
  const w = new ProtoWriter(16);
  w.uint32((no << 3) | LEN).uint32(length);
  return w.finish();
}

/**
 * The document in pieces to send in order: its head, the `Paths` message around the given path
 * entries, the `Definitions` message around the given definition entries, and its tail.
 */
export function v2ProtobufPieces(doc: Json, pathEntries: readonly Buffer[], definitionEntries: readonly Buffer[]): Buffer[] {
  const head = new Out();
  head.str(1, doc.swagger);
  if (isObject(doc.info)) {
    const info = doc.info;
    head.msg(2, () => {
      head.str(1, info.title);
      head.str(2, info.version);
    });
  }
  const sum = (list: readonly Buffer[]) => list.reduce((n, b) => n + b.length, 0);
  const tail = new Out();
  for (const requirement of (doc.security as Record<string, string[]>[] | undefined) ?? []) {
    tail.msg(12, () => {
      for (const [name, scopes] of Object.entries(requirement)) {
        tail.msg(1, () => {
          tail.str(1, name);
          tail.msg(2, () => tail.strs(1, scopes));
        });
      }
    });
  }
  if (isObject(doc.securityDefinitions)) {
    tail.msg(13, () => {
      for (const [name, d] of Object.entries(doc.securityDefinitions as Record<string, Json>)) {
        tail.msg(1, () => {
          tail.str(1, name);
          // api_key_security = 2: type, name, in, description
          tail.msg(2, () =>
            tail.msg(2, () => {
              tail.str(1, d.type);
              tail.str(2, d.name);
              tail.str(3, d.in);
              tail.str(4, d.description);
            }),
          );
        });
      }
    });
  }
  return [head.w.finish(), lengthPrefix(8, sum(pathEntries)), ...pathEntries, lengthPrefix(9, sum(definitionEntries)), ...definitionEntries, tail.w.finish()];
}

/** Encode a whole v2 (swagger 2.0) document built by documents.ts. */
export function encodeV2Protobuf(doc: Json): Buffer {
  const paths = [encodePathEntries((doc.paths as Record<string, Json>) ?? {})];
  const definitions = Object.entries((doc.definitions as Record<string, Json>) ?? {}).map(([name, s]) => encodeDefinitionEntry(name, s));
  return Buffer.concat(v2ProtobufPieces(doc, paths, definitions));
}
