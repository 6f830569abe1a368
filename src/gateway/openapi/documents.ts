/**
 * The OpenAPI documents: one v2 document (`/openapi/v2`, every group version and definition)
 * and one v3 document per group version (`/openapi/v3/apis/<group>/<version>`, with the
 * schemas its operations reach), rendered from the operation specs and the schemas. Each
 * operation carries `x-<vendor>-action` and `x-<vendor>-group-version-kind`, which kubectl
 * reads to find a kind's paths (field validation support, `explain`, client-side apply).
 */
import type { Naming } from '../../naming';
import { type SchemaRegistry, schemaRegistry } from '../../schema';
import type { ResourceIndex } from '../resource-index';
import { type OpenApiNames, openApiNames } from './names';
import { type OperationSpec, type ParamSpec, type PathSpec, type Payload, groupVersionPaths } from './operations';
import { type JsonSchema, type OpenApiVersion, SchemaBuilder, kindsByType, referencedNames, refPath } from './schemas';
import { PATCH_MEDIA_TYPES as PATCH_TYPES } from '../../core';

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

class Renderer {
  private readonly names: OpenApiNames;
  private readonly registry: SchemaRegistry;
  readonly schemas: Record<string, JsonSchema>;

  constructor(
    private readonly naming: Naming,
    private readonly version: OpenApiVersion,
    index: ResourceIndex,
  ) {
    this.names = openApiNames(naming);
    this.registry = schemaRegistry(naming);
    const gvs = index.groups().flatMap((g) => g.versions.map((version) => ({ group: g.name, version })));
    this.schemas = new SchemaBuilder(naming, this.names, this.registry, version, kindsByType(this.registry, gvs)).all();
  }

  /** The qualified schema type of a kind (`apps.v1.ReplicaSet`). */
  typeName = (group: string, version: string, kind: string): string => {
    const served = this.registry.kind(group ? `${group}/${version}` : version, kind);
    if (!served) throw new Error(`no schema for ${group}/${version} ${kind}`);
    return served.type.name;
  };

  private payloadSchema(p: Payload): JsonSchema {
    const name = 'type' in p ? this.names.typeName(p.type) : p.definition;
    return { $ref: refPath(this.version, name) };
  }

  private param(p: ParamSpec): JsonSchema {
    const out: JsonSchema = { name: p.name, in: p.in, description: p.description };
    if (p.required) out.required = true;
    if (this.version === 3) out.schema = { type: p.type, uniqueItems: true };
    else Object.assign(out, { type: p.type, uniqueItems: true });
    return out;
  }

  private mediaTypes(streams: boolean): string[] {
    const proto = this.naming.mediaTypes.protobuf;
    const types = ['application/json', 'application/yaml', proto];
    return streams ? [...types, 'application/json;stream=watch', `${proto};stream=watch`] : types;
  }

  private operation(o: OperationSpec): JsonSchema {
    const out: JsonSchema = { tags: [o.tag], description: o.description, operationId: o.operationId };
    const params = o.params.map((p) => this.param(p));
    const produces = this.mediaTypes(o.streams);
    const consumes = o.body?.kind === 'patch' ? PATCH_MEDIA_TYPES : ['*/*'];
    if (this.version === 2) {
      if (o.body) params.push({ name: 'body', in: 'body', required: o.body.required, schema: this.payloadSchema(o.body.payload) });
      Object.assign(out, { consumes, produces, schemes: ['https'] });
    } else if (o.body) {
      const schema = this.payloadSchema(o.body.payload);
      out.requestBody = { content: Object.fromEntries(consumes.map((m) => [m, { schema }])), required: o.body.required };
    }
    if (params.length) out.parameters = params;
    const responses: Record<string, JsonSchema> = {};
    for (const r of o.responses) {
      const response: JsonSchema = { description: r.description };
      if (r.payload) {
        const schema = this.payloadSchema(r.payload);
        if (this.version === 2) response.schema = schema;
        else response.content = Object.fromEntries(produces.map((m) => [m, { schema }]));
      }
      responses[r.code] = response;
    }
    out.responses = responses;
    if (o.action) out[this.naming.extension('action')] = o.action;
    if (o.gvk) out[this.naming.extension('group-version-kind')] = { ...o.gvk };
    return out;
  }

  paths(specs: readonly PathSpec[]): Record<string, JsonSchema> {
    const out: Record<string, JsonSchema> = {};
    for (const spec of specs) {
      const item: JsonSchema = {};
      for (const o of spec.operations) item[o.method] = this.operation(o);
      if (spec.params.length) item.parameters = spec.params.map((p) => this.param(p));
      out[spec.path] = item;
    }
    return out;
  }

  /** The schemas reachable from `roots`, following references. */
  reachable(roots: unknown): Record<string, JsonSchema> {
    const out: Record<string, JsonSchema> = {};
    const pending = [...referencedNames(roots, this.version)];
    while (pending.length) {
      const name = pending.pop()!;
      if (out[name] || !this.schemas[name]) continue;
      out[name] = this.schemas[name]!;
      pending.push(...referencedNames(this.schemas[name], this.version));
    }
    return Object.fromEntries(
      Object.keys(out)
        .sort()
        .map((k) => [k, out[k]!]),
    );
  }

  get namesOf(): OpenApiNames {
    return this.names;
  }
}

const SECURITY_SCHEME = { type: 'apiKey', description: 'Bearer Token authentication', name: 'authorization', in: 'header' };

function title(naming: Naming): string {
  return naming.word[0]!.toUpperCase() + naming.word.slice(1);
}

/** Build every document once: the schema and the served resources do not change while serving. */
export function buildOpenApiDocuments(naming: Naming, index: ResourceIndex, serverVersion: string): OpenApiDocuments {
  const info = { title: title(naming), version: serverVersion };
  const v2 = new Renderer(naming, 2, index);
  const v3 = new Renderer(naming, 3, index);
  const allV2Paths: Record<string, JsonSchema> = {};
  const groupDocs: GroupVersionDocument[] = [];
  for (const group of index.groups()) {
    for (const version of group.versions) {
      Object.assign(allV2Paths, v2.paths(groupVersionPaths(index, v2.namesOf, group.name, version, v2.typeName)));
      const paths = v3.paths(groupVersionPaths(index, v3.namesOf, group.name, version, v3.typeName));
      const document = {
        openapi: '3.0.0',
        info,
        paths,
        components: { schemas: v3.reachable(paths), securitySchemes: { BearerToken: SECURITY_SCHEME } },
        security: [{ BearerToken: [] }],
      };
      groupDocs.push({ group: group.name, version, path: v3.namesOf.v3Path(group.name, version), document });
    }
  }
  const definitions = Object.fromEntries(
    Object.keys(v2.schemas)
      .sort()
      .map((k) => [k, v2.schemas[k]!]),
  );
  const swagger = {
    swagger: '2.0',
    info,
    paths: allV2Paths,
    definitions,
    securityDefinitions: { BearerToken: SECURITY_SCHEME },
    security: [{ BearerToken: [] }],
  };
  return { v2: swagger, v3: groupDocs };
}
