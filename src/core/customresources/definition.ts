/**
 * The served types of one CustomResourceDefinition: one ResourceDefinition per served version,
 * configuring the generic store as upstream's custom resource strategy configures its own
 * (apiextensions-apiserver's customresource registry): names from `status.acceptedNames`,
 * scope, the `status` and `scale` subresources, generation counting everything but metadata
 * (and status, with the status subresource), printer columns, selectable fields. Objects are
 * kept in the storage version; a served version other than it reads and writes through the
 * storage version's storage with its apiVersion rewritten (conversion `None`).
 */
import type { ApiObject } from '../api';
import type { Naming } from '../../naming';
import { ALL_VERBS, type EquivalentVersion, type ResourceDefinition, type ScaleSubresource, type StatusStrategy } from '../resources/definition';
import { deepCopy, jsonEqual } from '../../util/json-values';
import type { CrdScale, CrdVersion, CustomResourceDefinitionObject } from './crd';
import { type SelectableField, customResourceTable, selectableField } from '../table';
import { compileSchema, schemaExtensions } from '../validation/schema';
import type { JSONSchemaProps } from '../validation/schema/types';
import { type UnknownField, walkFields } from '../validation/unknown-fields';
import { handOver } from '../api';
import { type SchemaType, schemaRegistry } from '../../schema';
import { applySchemaType } from './apply-schema';

/** Read a simple JSON path (`.spec.replicas`), as the scale subresource's paths are. */
function readPath(obj: unknown, path: string): unknown {
  let at: unknown = obj;
  for (const part of path.split('.').slice(1)) {
    if (at === null || typeof at !== 'object' || Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

function writePath(obj: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.').slice(1);
  let at = obj;
  for (const part of parts.slice(0, -1)) {
    const next = at[part];
    if (next === null || typeof next !== 'object' || Array.isArray(next)) at[part] = {};
    at = at[part] as Record<string, unknown>;
  }
  at[parts[parts.length - 1]!] = value;
}

/** An integer at a path, 0 when absent (upstream's scale of a custom resource). */
function replicasAt(obj: ApiObject, path: string): number {
  const value = readPath(obj, path);
  return typeof value === 'number' && Number.isInteger(value) ? value : 0;
}

function scaleOf(paths: CrdScale): ScaleSubresource {
  return {
    specReplicas: (obj) => replicasAt(obj, paths.specReplicasPath),
    setSpecReplicas: (obj, replicas) => writePath(obj as Record<string, unknown>, paths.specReplicasPath, replicas),
    statusReplicas: (obj) => replicasAt(obj, paths.statusReplicasPath),
    selector: (obj) => {
      if (!paths.labelSelectorPath) return '';
      const value = readPath(obj, paths.labelSelectorPath);
      return typeof value === 'string' ? value : '';
    },
  };
}

/** `/status` of a custom resource changes status alone: everything else is the stored object's (managedFields excepted). */
const STATUS_STRATEGY: StatusStrategy = {
  prepareForUpdate(obj, old) {
    const managedFields = obj.metadata?.managedFields;
    const status = obj.status;
    for (const key of Object.keys(obj)) delete obj[key];
    Object.assign(obj, deepCopy(old));
    if (managedFields !== undefined) obj.metadata = { ...obj.metadata, managedFields };
    else if (obj.metadata) delete obj.metadata.managedFields;
    if (status !== undefined) obj.status = status;
    else delete obj.status;
  },
};

/** Everything but metadata (and status, when `/status` owns it): what `metadata.generation` counts. */
function withoutCounted(obj: ApiObject, status: boolean): Record<string, unknown> {
  const { metadata: _metadata, status: objStatus, ...rest } = obj;
  return status ? rest : { ...rest, status: objStatus };
}

/** A selectable field's value; one a value does not fit (several results) selects as empty. */
function selectableValueOf(field: SelectableField, obj: ApiObject): string {
  try {
    return field.value(obj);
  } catch {
    return '';
  }
}

export interface CustomTypeParts {
  naming: Naming;
}

/**
 * What a version's structural schema does to its objects, as upstream's custom resource
 * handler and strategy do: unknown fields pruned when a body is decoded (metadata's against
 * ObjectMeta, the rest against the schema; reported as warnings, or refused under Strict),
 * defaults filled on every write, validation on create, and on update with ratcheting (an
 * unchanged invalid value is not refused again).
 */
function schemaHooks(schema: JSONSchemaProps, naming: Naming): Partial<ResourceDefinition> {
  const ext = schemaExtensions(naming);
  const compiled = compileSchema(schema, ext);
  const meta = schemaRegistry(naming).type('meta.v1.ObjectMeta');
  let applyType: SchemaType | undefined;
  return {
    applyType: () => (applyType ??= applySchemaType(schema, ext)),
    walkFields: (body, options) => {
      const obj = body.value as Record<string, unknown>;
      const unknown: UnknownField[] = [];
      let mismatch: { message: string } | undefined;
      if (obj.metadata !== null && typeof obj.metadata === 'object' && !Array.isArray(obj.metadata)) {
        const walk = walkFields(handOver(obj.metadata as Record<string, unknown>), meta, options);
        for (const u of walk.unknown) unknown.push({ path: `metadata.${u.path}`, seq: u.seq });
        mismatch = walk.mismatch;
      }
      const pruned = compiled.prune(obj);
      for (const path of pruned.unknownFields) unknown.push({ path, seq: undefined });
      if (!mismatch && pruned.error) mismatch = { message: pruned.error.detail ?? String(pruned.error.detail) };
      return { unknown, open: [], ...(mismatch ? { mismatch } : {}) };
    },
    defaults: (obj) => compiled.default(obj),
    readDefaults: (obj) => compiled.default(obj),
    validate: (obj) => compiled.validate(obj),
    validateOnlyOnCreate: true,
    validateUpdate: (obj, old) => compiled.validateUpdate(obj, old),
  };
}

/** The served versions of an established definition as types, the storage version's first. */
export function customResourceTypes(crd: CustomResourceDefinitionObject, parts: CustomTypeParts): ResourceDefinition[] {
  const names = crd.status?.acceptedNames ?? crd.spec.names;
  const { group } = crd.spec;
  const storage = crd.spec.versions.find((v) => v.storage);
  if (!storage) return [];
  const served = crd.spec.versions.filter((v) => v.served);
  const storageApiVersion = `${group}/${storage.name}`;
  const terminating = !!crd.metadata?.deletionTimestamp;
  const defs: ResourceDefinition[] = [];
  for (const version of [storage, ...served.filter((v) => v !== storage)]) {
    if (version === storage && !version.served && served.length === 0) continue;
    defs.push(versionType(crd, version, names.kind, names.plural, version === storage ? undefined : storageApiVersion, terminating, parts.naming));
  }
  return defs;
}

function versionType(
  crd: CustomResourceDefinitionObject,
  version: CrdVersion,
  kind: string,
  plural: string,
  storedAs: string | undefined,
  terminating: boolean,
  naming: Naming,
): ResourceDefinition {
  const names = crd.status?.acceptedNames ?? crd.spec.names;
  const { group } = crd.spec;
  const apiVersion = `${group}/${version.name}`;
  const hasStatus = !!version.subresources?.status;
  const schema = version.schema?.openAPIV3Schema;
  const selectable = (version.selectableFields ?? []).map((f) => selectableField(f.jsonPath));
  const def: ResourceDefinition = {
    group,
    version: version.name,
    kind,
    resource: plural,
    singular: names.singular || kind.toLowerCase(),
    namespaced: crd.spec.scope === 'Namespaced',
    ...(names.shortNames?.length ? { shortNames: names.shortNames } : {}),
    ...(names.categories?.length ? { categories: names.categories } : {}),
    verbs: terminating ? ALL_VERBS.filter((v) => v !== 'create') : ALL_VERBS,
    nameRule: 'dns1123Subdomain',
    genericMetadata: true,
    tracksGeneration: true,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    custom: { crd: crd.metadata?.name ?? '', uid: crd.metadata?.uid ?? '', listKind: names.listKind || `${kind}List`, served: version },
    specChanged: (obj, old) => !jsonEqual(withoutCounted(obj, hasStatus), withoutCounted(old, hasStatus)),
    ...(hasStatus
      ? {
          status: STATUS_STRATEGY,
          prepareForCreate: (obj: ApiObject) => void delete obj.status,
          prepareForUpdate: (obj: ApiObject, old: ApiObject) => {
            if (old.status !== undefined) obj.status = deepCopy(old.status);
            else delete obj.status;
          },
        }
      : {}),
    ...(version.subresources?.scale ? { scale: scaleOf(version.subresources.scale) } : {}),
    table: customResourceTable(version.additionalPrinterColumns),
    ...(schema ? schemaHooks(schema, naming) : {}),
    ...(selectable.length ? { selectableFields: (obj: ApiObject) => Object.fromEntries(selectable.map((f) => [f.name, selectableValueOf(f, obj)])) } : {}),
  };
  if (storedAs) def.storedAs = rewriteApiVersion(storedAs, apiVersion);
  return def;
}

/** Conversion `None`: the same object under another apiVersion. */
function rewriteApiVersion(storedApiVersion: string, servedApiVersion: string): EquivalentVersion {
  const withVersion = (obj: ApiObject, to: string): ApiObject => (obj.apiVersion === undefined ? { ...obj } : { ...obj, apiVersion: to });
  return {
    apiVersion: storedApiVersion,
    fieldNames: {},
    toThat: (obj) => withVersion(obj, storedApiVersion),
    fromThat: (obj) => withVersion(obj, servedApiVersion),
  };
}
