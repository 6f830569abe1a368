/**
 * The documents as bytes, for one server's handler, kept across changes of the index: each
 * part's JSON and protobuf pieces are made once (the built-in part's when the built-in types
 * are first served, a custom resource type's when its ResourceDefinition first is) and a
 * document is put together from the pieces when it is first asked for after a change:
 *
 * - `/openapi/v2`: the built-in paths, each custom type's paths, and every definition's entry,
 *   in name order; its ETag is the SHA-512 of the pieces' own digests (not of the bytes, which
 *   with many custom resources are tens of megabytes: upstream, likewise, does not hash its
 *   merged v2 document but names each merge with a new UUID), so it changes with the content;
 * - the v3 document of a group version: built again only when its parts changed (another
 *   custom type, or the same type from a new definition), others kept with their hashes;
 *   its ETag, and the index's `?hash=`, are the SHA-512 of its bytes, as kube-openapi's;
 * - the v3 index, from the kept documents' hashes.
 *
 * A document is a list of pieces sent in order (no copy into one buffer of the whole: a fresh
 * buffer of many megabytes is costly to fill).
 */
import { createHash } from 'node:crypto';
import zlib from 'node:zlib';
import type { Naming } from '../../naming';
import type { ResourceIndex } from '../resource-index';
import { type BuiltinPart, type CustomPart, type DocumentLayout, type GroupVersionLayout, OpenApiBuilder } from './documents';
import type { JsonSchema } from './schemas';
import { PieceCompressor } from './gzip-pieces';
import { encodeDefinitionEntry, encodePathEntries, v2ProtobufPieces } from './v2-protobuf';
import { mergeRemoteV2, type RemoteOpenApi, type RemoteV2Spec } from './remote';

/**
 * gzip's fastest level, as the API's own responses are compressed (respond.ts, upstream's
 * compression filter): a v2 document with many custom resources is many megabytes (kube-openapi's
 * handler compresses at gzip's default).
 */
const GZIP_LEVEL = 1;

/** A document ready to send. */
export interface ServedDocument {
  /** The body, in pieces sent in order. */
  readonly pieces: readonly Buffer[];
  readonly length: number;
  /** Upper-case hex SHA-512 (of the bytes, or for the v2 document of its parts' digests). */
  readonly etag: string;
  /** The gzipped body, in pieces, made on first use (ServedDocuments.gzipped). */
  gzipped?: { readonly pieces: readonly Buffer[]; readonly length: number };
}

function sha512(data: string | Buffer): string {
  return createHash('sha512').update(data).digest('hex').toUpperCase();
}

function whole(bytes: Buffer): ServedDocument {
  return { pieces: [bytes], length: bytes.length, etag: sha512(bytes) };
}

function pieced(pieces: Buffer[], etag: string): ServedDocument {
  return { pieces, length: pieces.reduce((n, p) => n + p.length, 0), etag };
}

/** A piece of JSON text (`"key":value,…`, an object's members) and the digest that stands for it in a composite ETag. */
interface Piece {
  readonly bytes: Buffer;
  readonly digest: string;
}

function piece(text: string): Piece {
  const bytes = Buffer.from(text);
  return { bytes, digest: createHash('sha256').update(bytes).digest('base64') };
}

/** An object's members as JSON text, without the braces. */
function members(o: object): string {
  return JSON.stringify(o).slice(1, -1);
}

function member(name: string, value: unknown): string {
  return `${JSON.stringify(name)}:${JSON.stringify(value)}`;
}

/** Forget the runs the current document no longer has (custom definitions between them came or went). */
function prune(runs: Map<string, unknown>, used: ReadonlySet<string>): void {
  for (const key of runs.keys()) if (!used.has(key)) runs.delete(key);
}

const COMMA = Buffer.from(',');
const V2_MIDDLE = Buffer.from('},"definitions":{');

interface BuiltinPieces {
  readonly part: BuiltinPart;
  readonly v2Paths: Piece;
  readonly v2Definitions: ReadonlyMap<string, Piece>;
  /**
   * Runs of consecutive built-in definitions (no custom one between them) joined into one
   * piece each, by first and last name: the pieces a document is sent and compressed in.
   */
  readonly v2Runs: Map<string, Piece>;
  /** `"name":schema` of every v3 schema, made on first use. */
  readonly v3Schemas: Map<string, string>;
  /** The built-in group versions' v3 documents. */
  readonly v3: Map<string, ServedDocument>;
  proto?: { paths: Buffer; definitions: Map<string, Buffer>; runs: Map<string, Buffer> };
}

/** A custom type's v2 pieces, JSON and protobuf, made from one rendering of its v2 half. */
interface CustomV2Pieces {
  /** The built-in part its paths were checked against (a built-in path wins). */
  readonly builtin: BuiltinPart;
  readonly paths: Piece | undefined;
  /** The paths it adds (the remote parts' are checked against them). */
  readonly pathNames: readonly string[];
  readonly definitions: ReadonlyMap<string, Piece>;
  readonly schemas: ReadonlyMap<string, JsonSchema>;
  readonly protoPaths: Buffer;
  readonly protoDefinitions: ReadonlyMap<string, Buffer>;
}

/** A custom type's v3 pieces. */
interface CustomV3Pieces {
  readonly paths: string;
  readonly schemas: ReadonlyMap<string, string>;
  readonly references: readonly string[];
}

/** What is served for one state of the index; each document is made on first use. */
interface Snapshot {
  /** The index's generation and the remote parts'. */
  readonly generation: string;
  readonly layout: DocumentLayout;
  readonly lastModified: string;
  readonly groupVersions: ReadonlyMap<string, GroupVersionLayout>;
  v2Json?: ServedDocument;
  v2Proto?: ServedDocument;
  index?: ServedDocument;
  /** The extension servers' v2 parts as merged into this state's document. */
  remoteV2?: { spec: RemoteV2Spec; paths?: Piece; definitions?: Piece; protoPaths?: Buffer; protoDefinitions?: Buffer[] };
}

export class ServedDocuments {
  readonly builder: OpenApiBuilder;
  private snapshot?: Snapshot;
  private builtinPieces?: BuiltinPieces;
  private readonly customV2 = new WeakMap<CustomPart, CustomV2Pieces>();
  private readonly customV3 = new WeakMap<CustomPart, CustomV3Pieces>();
  /** Group versions with custom types: their document and the parts it was made of. */
  private readonly customDocs = new Map<string, { parts: readonly unknown[]; doc: ServedDocument }>();
  /** Each piece compressed once after the pieces it follows, kept for as long as some document holds it. */
  private readonly compressor = new PieceCompressor(GZIP_LEVEL);
  private frame?: { head: Buffer; tail: Buffer; doc: JsonSchema };
  /** Extension servers' v3 documents as served, by the bytes they came as. */
  private readonly remoteDocs = new WeakMap<Buffer, ServedDocument>();

  constructor(
    naming: Naming,
    serverVersion: string,
    private readonly index: ResourceIndex,
    /** Extension servers' documents (the aggregator's), merged in; none when absent. */
    private readonly remote?: RemoteOpenApi,
  ) {
    this.builder = new OpenApiBuilder(naming, serverVersion);
  }

  /** The index's current state: a new one (documents made again on demand) once the index changed. */
  private current(): Snapshot {
    const s = this.snapshot;
    const generation = `${this.index.generation}/${this.remote?.generation() ?? 0}`;
    if (s && s.generation === generation) return s;
    const layout = this.builder.layout(this.index);
    const groupVersions = new Map(layout.groupVersions.map((gv) => [gv.path, gv]));
    for (const path of this.customDocs.keys()) if (!groupVersions.get(path)?.custom.length) this.customDocs.delete(path);
    this.snapshot = { generation, layout, lastModified: new Date().toUTCString(), groupVersions };
    return this.snapshot;
  }

  get lastModified(): string {
    return this.current().lastModified;
  }

  private builtin(part: BuiltinPart): BuiltinPieces {
    if (this.builtinPieces?.part === part) return this.builtinPieces;
    this.builtinPieces = {
      part,
      v2Paths: piece(members(part.v2Paths)),
      v2Definitions: new Map(Object.entries(part.v2Definitions).map(([name, schema]) => [name, piece(member(name, schema))])),
      v2Runs: new Map(),
      v3Schemas: new Map(),
      v3: new Map(),
    };
    return this.builtinPieces;
  }

  private v2Of(part: CustomPart, builtin: BuiltinPart): CustomV2Pieces {
    const kept = this.customV2.get(part);
    if (kept?.builtin === builtin) return kept;
    const half = part.v2();
    const paths = Object.fromEntries(Object.entries(half.paths).filter(([path]) => !(path in builtin.v2Paths)));
    const made: CustomV2Pieces = {
      builtin,
      paths: Object.keys(paths).length ? piece(members(paths)) : undefined,
      pathNames: Object.keys(paths),
      definitions: new Map(half.definitions.map(([name, schema]) => [name, piece(member(name, schema))])),
      schemas: new Map(half.definitions),
      protoPaths: encodePathEntries(paths),
      protoDefinitions: new Map(half.definitions.map(([name, schema]) => [name, encodeDefinitionEntry(name, schema)])),
    };
    this.customV2.set(part, made);
    return made;
  }

  private v3Of(part: CustomPart): CustomV3Pieces {
    let kept = this.customV3.get(part);
    if (kept) return kept;
    const half = part.v3();
    kept = {
      paths: members(half.paths),
      schemas: new Map(half.definitions.map(([name, schema]) => [name, member(name, schema)])),
      references: half.references,
    };
    this.customV3.set(part, kept);
    return kept;
  }

  /**
   * The v2 definitions in document order as runs: each custom definition alone, consecutive
   * built-in ones together.
   */
  private definitionRuns(layout: DocumentLayout): ({ builtin: readonly string[] } | { custom: CustomPart; name: string })[] {
    const out: ({ builtin: string[] } | { custom: CustomPart; name: string })[] = [];
    for (const d of layout.v2DefinitionOrder()) {
      if (d.from !== layout.builtin) {
        out.push({ custom: d.from as CustomPart, name: d.name });
        continue;
      }
      const last = out[out.length - 1];
      if (last && 'builtin' in last) last.builtin.push(d.name);
      else out.push({ builtin: [d.name] });
    }
    return out;
  }

  /** The remote v2 parts merged against this state's own paths and definitions (made once per state). */
  private remoteV2(s: Snapshot): NonNullable<Snapshot['remoteV2']> {
    if (s.remoteV2) return s.remoteV2;
    const { layout } = s;
    const custom = layout.custom.map((part) => this.v2Of(part, layout.builtin));
    const paths = new Set([...Object.keys(layout.builtin.v2Paths), ...custom.flatMap((c) => c.pathNames)]);
    const definition = (name: string) => layout.builtin.v2Definitions[name] ?? custom.find((c) => c.schemas.has(name))?.schemas.get(name);
    const spec = mergeRemoteV2({ paths, definition }, this.remote?.v2() ?? []);
    const hasPaths = Object.keys(spec.paths).length > 0;
    const names = Object.keys(spec.definitions).sort();
    s.remoteV2 = {
      spec,
      ...(hasPaths ? { paths: piece(members(spec.paths)) } : {}),
      ...(names.length ? { definitions: piece(names.map((name) => member(name, spec.definitions[name])).join(',')) } : {}),
    };
    return s.remoteV2;
  }

  v2Json(): ServedDocument {
    const s = this.current();
    if (s.v2Json) return s.v2Json;
    const { layout } = s;
    const builtin = this.builtin(layout.builtin);
    const frame = (this.frame ??= v2Frame(this.builder));
    const pieces: Buffer[] = [frame.head];
    const digests: string[] = [frame.head.toString()];
    let first = true;
    const add = (p: Piece | undefined) => {
      if (!p?.bytes.length) return;
      if (!first) pieces.push(COMMA);
      first = false;
      pieces.push(p.bytes);
      digests.push(p.digest);
    };
    add(builtin.v2Paths);
    for (const part of layout.custom) add(this.v2Of(part, layout.builtin).paths);
    const remote = this.remoteV2(s);
    add(remote.paths);
    pieces.push(V2_MIDDLE);
    digests.push('definitions');
    first = true;
    const used = new Set<string>();
    for (const run of this.definitionRuns(layout)) {
      if ('custom' in run) {
        add(this.v2Of(run.custom, layout.builtin).definitions.get(run.name));
        continue;
      }
      const key = `${run.builtin[0]} ${run.builtin[run.builtin.length - 1]}`;
      used.add(key);
      let joined = builtin.v2Runs.get(key);
      if (!joined) builtin.v2Runs.set(key, (joined = piece(run.builtin.map((name) => builtin.v2Definitions.get(name)!.bytes.toString()).join(','))));
      add(joined);
    }
    add(remote.definitions);
    pieces.push(frame.tail);
    digests.push(frame.tail.toString());
    prune(builtin.v2Runs, used);
    s.v2Json = pieced(pieces, sha512(digests.join('\n')));
    return s.v2Json;
  }

  v2Proto(): ServedDocument {
    const s = this.current();
    if (s.v2Proto) return s.v2Proto;
    const { layout } = s;
    const builtin = this.builtin(layout.builtin);
    const builtinProto = (builtin.proto ??= {
      paths: encodePathEntries(layout.builtin.v2Paths as Record<string, JsonSchema>),
      definitions: new Map(Object.entries(layout.builtin.v2Definitions).map(([name, schema]) => [name, encodeDefinitionEntry(name, schema)])),
      runs: new Map(),
    });
    const remote = this.remoteV2(s);
    remote.protoPaths ??= encodePathEntries(remote.spec.paths);
    remote.protoDefinitions ??= Object.keys(remote.spec.definitions)
      .sort()
      .map((name) => encodeDefinitionEntry(name, remote.spec.definitions[name]!));
    const paths = [builtinProto.paths, ...layout.custom.map((part) => this.v2Of(part, layout.builtin).protoPaths), remote.protoPaths];
    const definitions: Buffer[] = [];
    const used = new Set<string>();
    for (const run of this.definitionRuns(layout)) {
      if ('custom' in run) {
        definitions.push(this.v2Of(run.custom, layout.builtin).protoDefinitions.get(run.name)!);
        continue;
      }
      const key = `${run.builtin[0]} ${run.builtin[run.builtin.length - 1]}`;
      used.add(key);
      let joined = builtinProto.runs.get(key);
      if (!joined) builtinProto.runs.set(key, (joined = Buffer.concat(run.builtin.map((name) => builtinProto.definitions.get(name)!))));
      definitions.push(joined);
    }
    definitions.push(...remote.protoDefinitions);
    prune(builtinProto.runs, used);
    // The JSON document's ETag: both are the same document.
    s.v2Proto = pieced(v2ProtobufPieces((this.frame ??= v2Frame(this.builder)).doc, paths, definitions), this.v2Json().etag);
    return s.v2Proto;
  }

  /** The v3 document of a group version (`apis/apps/v1`), or undefined when none is served. */
  groupVersion(path: string): ServedDocument | undefined {
    const s = this.current();
    const gv = s.groupVersions.get(path);
    if (!gv) return this.remoteGroupVersion(path);
    const builtin = this.builtin(s.layout.builtin);
    if (!gv.custom.length) {
      let doc = builtin.v3.get(path);
      if (!doc) builtin.v3.set(path, (doc = whole(Buffer.from(JSON.stringify(gv.builtin!.document)))));
      return doc;
    }
    const parts = [gv.builtin, ...gv.custom];
    const kept = this.customDocs.get(path);
    if (kept && kept.parts.length === parts.length && kept.parts.every((p, i) => p === parts[i])) return kept.doc;
    const doc = whole(Buffer.from(gv.builtin ? JSON.stringify(this.builder.groupVersionDocument(gv, s.layout.builtin)) : this.customDocument(gv, builtin)));
    this.customDocs.set(path, { parts, doc });
    return doc;
  }

  /** An extension server's v3 document, as it came (its ETag and hash of its bytes). */
  private remoteGroupVersion(path: string): ServedDocument | undefined {
    const bytes = this.remote?.v3().get(path);
    if (!bytes) return undefined;
    let kept = this.remoteDocs.get(bytes);
    if (!kept) this.remoteDocs.set(bytes, (kept = whole(bytes)));
    return kept;
  }

  /** A group version served only by custom resources, from its parts' kept JSON. */
  private customDocument(gv: GroupVersionLayout, builtin: BuiltinPieces): string {
    const layout = this.current().layout;
    const own = new Map<string, string>();
    const references = new Set<string>();
    const paths: string[] = [];
    for (const part of gv.custom) {
      const pieces = this.v3Of(part);
      if (pieces.paths) paths.push(pieces.paths);
      for (const [name, json] of pieces.schemas) own.set(name, json);
      for (const name of pieces.references) references.add(name);
    }
    const schemas: string[] = [];
    for (const name of [...new Set([...own.keys(), ...references])].sort()) {
      if (references.has(name)) {
        let json = builtin.v3Schemas.get(name);
        if (json === undefined) builtin.v3Schemas.set(name, (json = member(name, layout.builtin.v3Schemas[name])));
        schemas.push(json);
      } else {
        schemas.push(own.get(name)!);
      }
    }
    const info = JSON.stringify(this.builder.customInfo);
    return `{"openapi":"3.0.0","info":${info},"paths":{${paths.join(',')}},"components":{"schemas":{${schemas.join(',')}}}}`;
  }

  /**
   * The document gzipped: one piece whole; many each compressed once (kept while a document
   * holds it) and joined into one gzip stream (gzip-pieces.ts).
   */
  gzipped(doc: ServedDocument): { readonly pieces: readonly Buffer[]; readonly length: number } {
    if (doc.gzipped) return doc.gzipped;
    let pieces: Buffer[];
    if (doc.pieces.length === 1) {
      pieces = [zlib.gzipSync(doc.pieces[0]!, { level: GZIP_LEVEL })];
    } else {
      pieces = this.compressor.gzip(doc.pieces);
    }
    doc.gzipped = { pieces, length: pieces.reduce((n, p) => n + p.length, 0) };
    return doc.gzipped;
  }

  /** `/openapi/v3`: every group version's URL with its document's hash. */
  v3Index(): ServedDocument {
    const s = this.current();
    if (s.index) return s.index;
    const paths: Record<string, { serverRelativeURL: string }> = {};
    for (const gv of s.layout.groupVersions) {
      paths[gv.path] = { serverRelativeURL: `/openapi/v3/${gv.path}?hash=${this.groupVersion(gv.path)!.etag}` };
    }
    for (const path of this.remote?.v3().keys() ?? []) {
      if (!(path in paths)) paths[path] = { serverRelativeURL: `/openapi/v3/${path}?hash=${this.remoteGroupVersion(path)!.etag}` };
    }
    s.index = whole(Buffer.from(JSON.stringify({ paths })));
    return s.index;
  }
}

/** The v2 document's fixed members around its paths and definitions, as documents.ts writes them. */
function v2Frame(builder: OpenApiBuilder): { head: Buffer; tail: Buffer; doc: JsonSchema } {
  const doc = builder.v2Frame();
  const { swagger, info, securityDefinitions, security } = doc;
  return {
    head: Buffer.from(`{"swagger":${JSON.stringify(swagger)},"info":${JSON.stringify(info)},"paths":{`),
    tail: Buffer.from(`},"securityDefinitions":${JSON.stringify(securityDefinitions)},"security":${JSON.stringify(security)}}`),
    doc,
  };
}
