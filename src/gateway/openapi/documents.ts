/**
 * The OpenAPI documents: one v2 document (`/openapi/v2`, every group version and definition)
 * and one v3 document per group version (`/openapi/v3/apis/<group>/<version>`, with the
 * schemas its operations reach), rendered from the operation specs and the schemas. Each
 * operation carries `x-<vendor>-action` and `x-<vendor>-group-version-kind`, which kubectl
 * reads to find a kind's paths (field validation support, `explain`, client-side apply).
 *
 * The documents are made of parts, each built once and kept while it is served: the built-in
 * types' part (paths, every definition, the v3 document of each built-in group version), made
 * once per set of built-in types, and one part per custom resource type (its definitions and
 * paths in v2 and v3, rendered on demand: served.ts keeps their bytes), made once per
 * ResourceDefinition object — the custom resource machinery makes a new one when its
 * CustomResourceDefinition changes and keeps the old one otherwise. As upstream merges its CRD specs into the static spec (apiextensions' openapi
 * controller, MergeSpecs: the static spec's paths and definitions win a conflict), the v2
 * document is the built-in part followed by the custom parts; a group version served only by
 * custom resources has its own v3 document as apiextensions' openapiv3 controller publishes it
 * (title `<Vendor> CRD Swagger`, version `v0.1.0`, no security schemes).
 */
import type { Naming } from '../../naming';
import { type SchemaRegistry, schemaRegistry } from '../../schema';
import { type ResourceDefinition, PATCH_MEDIA_TYPES as PATCH_TYPES } from '../../core';
import { ResourceIndex } from '../resource-index';
import { customDefinitions, servedVersion } from './custom';
import { type OpenApiNames, openApiNames } from './names';
import { type OperationSpec, type ParamSpec, type PathSpec, type Payload, customResourcePaths, groupVersionPaths } from './operations';
import { type JsonSchema, type OpenApiVersion, SchemaBuilder, kindsByType, referencedNames, refPath } from './schemas';

/** The patch media types as upstream's OpenAPI lists them: sorted. */
export const PATCH_MEDIA_TYPES = [...PATCH_TYPES.keys()].sort();

export interface GroupVersionDocument {
  group: string;
  version: string;
  /** The key in the v3 index: `api/v1`, `apis/apps/v1`. */
  path: string;
  document: JsonSchema;
}

export interface OpenApiDocuments {
  v2: JsonSchema;
  v3: GroupVersionDocument[];
}

/**
 * Renders operation specs as one document version's JSON shapes. What is the same in many
 * operations (parameters, references, media types, responses) is made once and shared by every
 * operation that has it: with a thousand custom resources the documents hold tens of thousands
 * of operations, and the objects made for them are what the memory and the collector pay for.
 */
class Renderer {
  private readonly shared = new Map<string, unknown>();
  private local = new Map<string, unknown>();
  private readonly params = new WeakMap<ParamSpec, JsonSchema>();
  private readonly lists = new Map<string, readonly string[]>();

  constructor(
    private readonly naming: Naming,
    private readonly names: OpenApiNames,
    private readonly version: OpenApiVersion,
  ) {}

  /**
   * What is made for a key, made once: for as long as the renderer lives when it names only
   * built-in types (shared by every document), else for one `paths` call (a custom resource's
   * definitions come and go, and are not to be remembered after them).
   */
  private once<T>(key: string, make: () => T, builtin = true): T {
    const memo = builtin ? this.shared : this.local;
    let v = memo.get(key) as T | undefined;
    if (!v) memo.set(key, (v = make()));
    return v;
  }

  /** Whether a payload is a built-in type (a custom resource's kind and list are definitions; Patch is one of both). */
  private builtinPayload(p: Payload): boolean {
    return 'type' in p || p.definition === this.names.patch;
  }

  /** The same list of strings as one array (media types: a fixed few). */
  private list(items: readonly string[]): readonly string[] {
    const key = items.join('\n');
    let v = this.lists.get(key);
    if (!v) this.lists.set(key, (v = [...items]));
    return v;
  }

  private payloadName(p: Payload): string {
    return 'type' in p ? this.names.typeName(p.type) : p.definition;
  }

  private ref(name: string, builtin: boolean): JsonSchema {
    return this.once(`ref ${name}`, () => ({ $ref: refPath(this.version, name) }), builtin);
  }

  /** `{<media type>: {schema}}` for each media type (v3 bodies and responses). */
  private content(mediaTypes: readonly string[], name: string, builtin: boolean): JsonSchema {
    return this.once(
      `content ${name} ${mediaTypes.join(' ')}`,
      () => {
        const schema = this.ref(name, builtin);
        return Object.fromEntries(mediaTypes.map((m) => [m, { schema }]));
      },
      builtin,
    );
  }

  private param(p: ParamSpec): JsonSchema {
    let out = this.params.get(p);
    if (out) return out;
    out = { name: p.name, in: p.in, description: p.description };
    if (p.required) out.required = true;
    if (this.version === 3) out.schema = { type: p.type, uniqueItems: true };
    else Object.assign(out, { type: p.type, uniqueItems: true });
    this.params.set(p, out);
    return out;
  }

  private mediaTypes(streams: boolean): readonly string[] {
    const proto = this.naming.mediaTypes.protobuf;
    const types = ['application/json', 'application/yaml', proto];
    return this.list(streams ? [...types, 'application/json;stream=watch', `${proto};stream=watch`] : types);
  }

  private operation(o: OperationSpec): JsonSchema {
    // A group version's tag, for one `paths` call (custom groups come and go).
    const tags = this.once(`tags ${o.tag}`, () => [o.tag], false);
    const out: JsonSchema = { tags, description: o.description, operationId: o.operationId };
    const params = o.params.map((p) => this.param(p));
    const produces = o.produces ? this.list(o.produces) : this.mediaTypes(o.streams);
    const consumes = this.list(o.consumes ? o.consumes : o.body?.kind === 'patch' ? PATCH_MEDIA_TYPES : ['*/*']);
    if (this.version === 2) {
      if (o.body) {
        const { payload, required } = o.body;
        const name = this.payloadName(payload);
        const shared = this.builtinPayload(payload);
        const body = this.once(`body ${name} ${required}`, () => ({ name: 'body', in: 'body', required, schema: this.ref(name, shared) }), shared);
        if (o.bodyFirst) params.unshift(body);
        else params.push(body);
      }
      Object.assign(out, { consumes, produces, schemes: this.list(['https']) });
    } else if (o.body) {
      const { payload, required } = o.body;
      const name = this.payloadName(payload);
      const shared = this.builtinPayload(payload);
      out.requestBody = this.once(
        `requestBody ${name} ${required} ${consumes.join(' ')}`,
        () => ({ content: this.content(consumes, name, shared), required }),
        shared,
      );
    }
    if (params.length) out.parameters = params;
    const responses: Record<string, JsonSchema> = {};
    for (const r of o.responses) {
      const name = r.payload && this.payloadName(r.payload);
      const shared = !r.payload || this.builtinPayload(r.payload);
      responses[r.code] = this.once(
        `response ${r.description} ${name} ${produces.join(' ')}`,
        () => {
          const response: JsonSchema = { description: r.description };
          if (name) {
            if (this.version === 2) response.schema = this.ref(name, shared);
            else response.content = this.content(produces, name, shared);
          }
          return response;
        },
        shared,
      );
    }
    out.responses = responses;
    if (o.action) out[this.naming.extension('action')] = o.action;
    if (o.gvk) out[this.naming.extension('group-version-kind')] = this.once(`gvk ${o.gvk.group} ${o.gvk.version} ${o.gvk.kind}`, () => ({ ...o.gvk }), false);
    return out;
  }

  paths(specs: readonly PathSpec[]): Record<string, JsonSchema> {
    this.local = new Map();
    const out: Record<string, JsonSchema> = {};
    for (const spec of specs) {
      const item: JsonSchema = {};
      for (const o of spec.operations) item[o.method] = this.operation(o);
      if (spec.params.length) item.parameters = spec.params.map((p) => this.param(p));
      out[spec.path] = item;
    }
    return out;
  }
}

/** The schemas of `schemas` reachable from `roots`, following references, by name. */
function reachable(roots: unknown, schemas: Readonly<Record<string, JsonSchema>>, version: OpenApiVersion): string[] {
  const out = new Set<string>();
  const pending = [...referencedNames(roots, version)];
  while (pending.length) {
    const name = pending.pop()!;
    if (out.has(name) || !schemas[name]) continue;
    out.add(name);
    pending.push(...referencedNames(schemas[name], version));
  }
  return [...out].sort();
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

const SECURITY_SCHEME = { type: 'apiKey', description: 'Bearer Token authentication', name: 'authorization', in: 'header' };

function title(naming: Naming): string {
  return naming.word[0]!.toUpperCase() + naming.word.slice(1);
}

/** The built-in types' part of the documents, made once per set of built-in types. */
export interface BuiltinPart {
  /** The built-in definitions it was made from, in the index's order. */
  readonly defs: readonly ResourceDefinition[];
  readonly v2Paths: Readonly<Record<string, JsonSchema>>;
  /** Every definition, by name. */
  readonly v2Definitions: Readonly<Record<string, JsonSchema>>;
  /** Every v3 schema, by name: what custom resources' documents reference is found here. */
  readonly v3Schemas: Readonly<Record<string, JsonSchema>>;
  /** The v3 document of each group version with built-in types, by v3 index key. */
  readonly v3: ReadonlyMap<string, GroupVersionDocument>;
}

/** One custom resource type's half of a document version: its paths and definitions. */
export interface CustomHalf {
  readonly paths: Readonly<Record<string, JsonSchema>>;
  /** The kind's and the list's definitions, by name. */
  readonly definitions: readonly [string, JsonSchema][];
  /** v3: the built-in schemas its paths and definitions reach (ObjectMeta, Status, Scale, ...), by name. */
  readonly references: readonly string[];
}

/**
 * One custom resource type's part of the documents, one per ResourceDefinition object. Its
 * halves are rendered afresh each time they are asked for and not kept: the handler keeps their
 * bytes (served.ts), and a thousand types' objects would hold far more memory than that.
 */
export interface CustomPart {
  readonly def: ResourceDefinition;
  /** The built-in part its v3 references were found in. */
  readonly builtin: BuiltinPart;
  /** The names of its v2 definitions (the kind's and the list's), sorted. */
  readonly definitionNames: readonly string[];
  v2(): CustomHalf;
  v3(): CustomHalf;
}

/** A served group version and the parts its v3 document is made of. */
export interface GroupVersionLayout {
  group: string;
  version: string;
  path: string;
  /** The built-in document of this group version, if built-in types are served in it. */
  builtin?: GroupVersionDocument;
  /** Its custom resource types, in the index's order. */
  custom: readonly CustomPart[];
}

/** What the documents are made of for one state of the index. */
export interface DocumentLayout {
  builtin: BuiltinPart;
  /** Every custom resource type, in the index's order (group, version, resource). */
  custom: readonly CustomPart[];
  groupVersions: readonly GroupVersionLayout[];
  /** Definition names of the v2 document in order, and whose each is: built-in and custom, sorted, the built-in one on a clash. */
  v2DefinitionOrder(): readonly { name: string; from: BuiltinPart | CustomPart }[];
}

/**
 * Makes the documents' parts and keeps them: one per server (its naming profile and served
 * types), asked again whenever the index changes.
 */
export class OpenApiBuilder {
  readonly names: OpenApiNames;
  private readonly registry: SchemaRegistry;
  private readonly renderers: Record<OpenApiVersion, Renderer>;
  private builtin?: BuiltinPart;
  private readonly customParts = new WeakMap<ResourceDefinition, CustomPart>();
  private readonly closures = new WeakMap<BuiltinPart, Map<string, readonly string[]>>();
  readonly info: { title: string; version: string };
  /** upstream's CRD builder config: the v3 documents of custom group versions keep it. */
  readonly customInfo: { title: string; version: string };

  constructor(
    readonly naming: Naming,
    serverVersion: string,
  ) {
    this.names = openApiNames(naming);
    this.registry = schemaRegistry(naming);
    this.renderers = { 2: new Renderer(naming, this.names, 2), 3: new Renderer(naming, this.names, 3) };
    this.info = { title: title(naming), version: serverVersion };
    this.customInfo = { title: `${title(naming)} CRD Swagger`, version: 'v0.1.0' };
  }

  /** The qualified schema type of a built-in kind (`apps.v1.ReplicaSet`). */
  private typeName = (group: string, version: string, kind: string): string => {
    const served = this.registry.kind(group ? `${group}/${version}` : version, kind);
    if (!served) throw new Error(`no schema for ${group}/${version} ${kind}`);
    return served.type.name;
  };

  /** The built-in part for the index's built-in types: the kept one while they are the same objects. */
  builtinPart(index: ResourceIndex): BuiltinPart {
    const defs = index.definitions.filter((d) => !d.custom);
    const kept = this.builtin;
    if (kept && kept.defs.length === defs.length && kept.defs.every((d, i) => d === defs[i])) return kept;
    // The built-in types as an index of their own, in the served index's order (built-in groups
    // come first and never move when custom resources come and go).
    const builtinIndex = new ResourceIndex(defs);
    const gvs = builtinIndex.groups().flatMap((g) => g.versions.map((version) => ({ group: g.name, version })));
    const gvks = kindsByType(this.registry, gvs);
    const v2Schemas = new SchemaBuilder(this.naming, this.names, this.registry, 2, gvks).all();
    const v3Schemas = new SchemaBuilder(this.naming, this.names, this.registry, 3, gvks).all();
    const v2Paths: Record<string, JsonSchema> = {};
    const v3 = new Map<string, GroupVersionDocument>();
    for (const { group, version } of gvs) {
      Object.assign(v2Paths, this.renderers[2].paths(groupVersionPaths(builtinIndex, this.names, group, version, this.typeName)));
      const paths = this.renderers[3].paths(groupVersionPaths(builtinIndex, this.names, group, version, this.typeName));
      const schemas = Object.fromEntries(reachable(paths, v3Schemas, 3).map((k) => [k, v3Schemas[k]!]));
      const document = {
        openapi: '3.0.0',
        info: this.info,
        paths,
        components: { schemas, securitySchemes: { BearerToken: SECURITY_SCHEME } },
        security: [{ BearerToken: [] }],
      };
      const path = this.names.v3Path(group, version);
      v3.set(path, { group, version, path, document });
    }
    const v2Definitions = Object.fromEntries(
      Object.keys(v2Schemas)
        .sort(compareNames)
        .map((k) => [k, v2Schemas[k]!]),
    );
    this.builtin = { defs, v2Paths, v2Definitions, v3Schemas, v3 };
    return this.builtin;
  }

  /** A custom resource type's part: the kept one while its definition is the same object. */
  customPart(def: ResourceDefinition, builtin: BuiltinPart): CustomPart {
    let part = this.customParts.get(def);
    if (part?.builtin === builtin) return part;
    const listKind = def.custom?.listKind || `${def.kind}List`;
    part = {
      def,
      builtin,
      definitionNames: [this.names.customTypeName(def.group, def.version, def.kind), this.names.customTypeName(def.group, def.version, listKind)].sort(
        compareNames,
      ),
      v2: () => this.half(def, 2, builtin),
      v3: () => this.half(def, 3, builtin),
    };
    this.customParts.set(def, part);
    return part;
  }

  private half(def: ResourceDefinition, version: OpenApiVersion, builtin: BuiltinPart): CustomHalf {
    const sub = servedVersion(def).subresources;
    const defs = customDefinitions(def, this.naming, this.names, version);
    const specs = customResourcePaths(def, this.names, { kind: defs.kind[0], list: defs.list[0], status: !!sub?.status, scale: !!sub?.scale });
    const paths = this.renderers[version].paths(specs);
    const definitions = [defs.kind, defs.list].sort((a, b) => compareNames(a[0], b[0]));
    if (version === 2) return { paths, definitions, references: [] };
    // The built-in schemas its document needs: what its schemas reference (ObjectMeta, ListMeta)
    // and its operations' bodies and responses (Status, DeleteOptions, Patch, Scale), with
    // theirs; found from the specs, without walking the rendered paths.
    const roots = new Set(referencedNames(definitions, 3));
    for (const spec of specs) {
      for (const o of spec.operations) {
        for (const p of [o.body?.payload, ...o.responses.map((r) => r.payload)]) if (p) roots.add('type' in p ? this.names.typeName(p.type) : p.definition);
      }
    }
    return { paths, definitions, references: this.closure([...roots], builtin) };
  }

  /** The built-in v3 schemas reachable from `roots` (names), remembered per set of roots. */
  private closure(roots: readonly string[], builtin: BuiltinPart): readonly string[] {
    const key = [...roots].sort().join(' ');
    let memo = this.closures.get(builtin);
    if (!memo) this.closures.set(builtin, (memo = new Map()));
    let names = memo.get(key);
    if (!names)
      memo.set(
        key,
        (names = reachable(
          roots.map((name) => ({ $ref: refPath(3, name) })),
          builtin.v3Schemas,
          3,
        )),
      );
    return names;
  }

  /** What the documents are made of for the index as it is now. */
  layout(index: ResourceIndex): DocumentLayout {
    const builtin = this.builtinPart(index);
    const custom: CustomPart[] = [];
    const groupVersions: GroupVersionLayout[] = [];
    for (const group of index.groups()) {
      for (const version of group.versions) {
        const path = this.names.v3Path(group.name, version);
        const parts: CustomPart[] = [];
        for (const def of index.resourcesOf(group.name, version)) if (def.custom) parts.push(this.customPart(def, builtin));
        custom.push(...parts);
        groupVersions.push({ group: group.name, version, path, builtin: builtin.v3.get(path), custom: parts });
      }
    }
    let order: ReturnType<DocumentLayout['v2DefinitionOrder']> | undefined;
    return {
      builtin,
      custom,
      groupVersions,
      v2DefinitionOrder: () => (order ??= mergeDefinitions(builtin, custom)),
    };
  }

  /** The v3 document of a group version, as objects (the handler puts the same together from kept pieces). */
  groupVersionDocument(gv: GroupVersionLayout, builtin: BuiltinPart): JsonSchema {
    if (!gv.custom.length) return gv.builtin!.document;
    const halves = gv.custom.map((part) => part.v3());
    const paths: Record<string, JsonSchema> = { ...((gv.builtin?.document.paths as Record<string, JsonSchema> | undefined) ?? {}) };
    for (const half of halves) Object.assign(paths, half.paths);
    const own = new Map<string, JsonSchema>();
    for (const half of halves) for (const [name, schema] of half.definitions) own.set(name, schema);
    const builtinNames = new Set(halves.flatMap((h) => h.references));
    for (const name of Object.keys((gv.builtin?.document.components as { schemas: JsonSchema } | undefined)?.schemas ?? {})) builtinNames.add(name);
    const schemas: Record<string, JsonSchema> = {};
    for (const name of [...new Set([...own.keys(), ...builtinNames])].sort(compareNames)) {
      schemas[name] = builtinNames.has(name) ? builtin.v3Schemas[name]! : own.get(name)!;
    }
    if (gv.builtin) {
      return { ...gv.builtin.document, paths, components: { ...(gv.builtin.document.components as JsonSchema), schemas } };
    }
    return { openapi: '3.0.0', info: this.customInfo, paths, components: { schemas } };
  }

  /** The v2 document's members but its paths and definitions. */
  v2Frame(): { swagger: string; info: JsonSchema; securityDefinitions: JsonSchema; security: JsonSchema[] } {
    return { swagger: '2.0', info: this.info, securityDefinitions: { BearerToken: SECURITY_SCHEME }, security: [{ BearerToken: [] }] };
  }

  /** Every document as objects. */
  documents(index: ResourceIndex): OpenApiDocuments {
    const layout = this.layout(index);
    const paths: Record<string, JsonSchema> = { ...layout.builtin.v2Paths };
    const own = new Map<string, JsonSchema>();
    for (const part of layout.custom) {
      const half = part.v2();
      for (const [path, item] of Object.entries(half.paths)) if (!(path in layout.builtin.v2Paths)) paths[path] = item;
      for (const [name, schema] of half.definitions) own.set(name, schema);
    }
    const definitions = Object.fromEntries(
      layout.v2DefinitionOrder().map((d) => [d.name, d.from === layout.builtin ? layout.builtin.v2Definitions[d.name]! : own.get(d.name)!]),
    );
    const { swagger, info, securityDefinitions, security } = this.v2Frame();
    const v2 = { swagger, info, paths, definitions, securityDefinitions, security };
    const v3 = layout.groupVersions.map((gv) => ({
      group: gv.group,
      version: gv.version,
      path: gv.path,
      document: this.groupVersionDocument(gv, layout.builtin),
    }));
    return { v2, v3 };
  }
}

/** The v2 definitions in name order; a built-in one wins over a custom one of the same name (upstream's MergeSpecs). */
function mergeDefinitions(builtin: BuiltinPart, custom: readonly CustomPart[]): { name: string; from: BuiltinPart | CustomPart }[] {
  const own: { name: string; from: CustomPart }[] = [];
  for (const part of custom) for (const name of part.definitionNames) if (!(name in builtin.v2Definitions)) own.push({ name, from: part });
  own.sort((a, b) => compareNames(a.name, b.name));
  const out: { name: string; from: BuiltinPart | CustomPart }[] = [];
  let i = 0;
  for (const name of Object.keys(builtin.v2Definitions)) {
    while (i < own.length && own[i]!.name < name) out.push(own[i++]!);
    out.push({ name, from: builtin });
  }
  while (i < own.length) out.push(own[i++]!);
  return out;
}

/** Every document at once, as objects (tests and tools; the handler keeps an OpenApiBuilder and serializes piecewise). */
export function buildOpenApiDocuments(naming: Naming, index: ResourceIndex, serverVersion: string): OpenApiDocuments {
  return new OpenApiBuilder(naming, serverVersion).documents(index);
}
