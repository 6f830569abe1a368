/**
 * The v2 document as `application/com.github.proto-openapi.spec.v2@v1.0+protobuf`: gnostic's
 * `openapi.v2.Document` message (the form kubectl downloads `/openapi/v2` in). Upstream parses
 * its JSON document into gnostic's messages; this writes the same messages directly from the
 * JSON shapes documents.ts produces. Vendor extensions and other free values travel as gnostic
 * `Any` messages holding their YAML.
 *
 * Field numbers are gnostic's OpenAPIv2.proto.
 */
import YAML from 'yaml';
import { ProtoWriter } from '../../codecs/protobuf/writer';
import { isObject as isObjectOf } from '../../util/json-values';

type Json = Record<string, unknown>;

const LEN = 2;
const VARINT = 0;

class Out {
  readonly w = new ProtoWriter(1 << 16);

  str(no: number, v: unknown): void {
    if (typeof v === 'string' && v !== '') this.w.uint32((no << 3) | LEN).string(v);
  }

  strs(no: number, v: unknown): void {
    if (Array.isArray(v)) for (const s of v) this.w.uint32((no << 3) | LEN).string(String(s));
  }

  bool(no: number, v: unknown): void {
    if (v === true) this.w.uint32((no << 3) | VARINT).bool(true);
  }

  msg(no: number, body: () => void): void {
    this.w.uint32((no << 3) | LEN);
    const start = this.w.begin();
    body();
    this.w.end(start);
  }

  /** gnostic `NamedAny` entries for the `x-` keys of an object. */
  extensions(no: number, obj: Json): void {
    for (const [name, value] of Object.entries(obj)) {
      if (!name.startsWith('x-')) continue;
      this.msg(no, () => {
        this.str(1, name);
        this.msg(2, () => this.str(2, YAML.stringify(value)));
      });
    }
  }
}

const isObject = isObjectOf<Json>;

function schema(o: Out, s: Json): void {
  o.str(1, s.$ref);
  o.str(2, s.format);
  o.str(4, s.description);
  o.strs(19, s.required);
  if (isObject(s.additionalProperties)) o.msg(21, () => o.msg(1, () => schema(o, s.additionalProperties as Json)));
  if (typeof s.type === 'string') o.msg(22, () => o.strs(1, [s.type]));
  if (isObject(s.items)) o.msg(23, () => o.msg(1, () => schema(o, s.items as Json)));
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

/** Encode a v2 (swagger 2.0) document built by documents.ts. */
export function encodeV2Protobuf(doc: Json): Buffer {
  const o = new Out();
  o.str(1, doc.swagger);
  if (isObject(doc.info)) {
    const info = doc.info;
    o.msg(2, () => {
      o.str(1, info.title);
      o.str(2, info.version);
    });
  }
  o.msg(8, () => {
    for (const [path, item] of Object.entries((doc.paths as Record<string, Json>) ?? {})) {
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
  });
  o.msg(9, () => {
    for (const [name, s] of Object.entries((doc.definitions as Record<string, Json>) ?? {})) {
      o.msg(1, () => {
        o.str(1, name);
        o.msg(2, () => schema(o, s));
      });
    }
  });
  for (const requirement of (doc.security as Record<string, string[]>[] | undefined) ?? []) {
    o.msg(12, () => {
      for (const [name, scopes] of Object.entries(requirement)) {
        o.msg(1, () => {
          o.str(1, name);
          o.msg(2, () => o.strs(1, scopes));
        });
      }
    });
  }
  if (isObject(doc.securityDefinitions)) {
    o.msg(13, () => {
      for (const [name, d] of Object.entries(doc.securityDefinitions as Record<string, Json>)) {
        o.msg(1, () => {
          o.str(1, name);
          // api_key_security = 2: type, name, in, description
          o.msg(2, () =>
            o.msg(2, () => {
              o.str(1, d.type);
              o.str(2, d.name);
              o.str(3, d.in);
              o.str(4, d.description);
            }),
          );
        });
      }
    });
  }
  return o.w.finish();
}
