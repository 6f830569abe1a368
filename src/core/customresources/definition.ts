/**
 * The served types of one CustomResourceDefinition: one ResourceDefinition per served version,
 * configuring the generic store as upstream's custom resource strategy configures its own
 * (apiextensions-apiserver's customresource registry): names from `status.acceptedNames`,
 * scope, the `status` and `scale` subresources, generation counting everything but metadata
 * (and status, with the status subresource), printer columns, selectable fields. Objects are
 * kept in the storage version; a served version other than it reads and writes through the
 * storage version's storage, converted (conversion `None` rewrites apiVersion, `Webhook` calls
 * the definition's conversion webhook: conversion.ts), and coerced to the target version's
 * schema. Each version has its own schema, columns, subresources, selectable fields and
 * deprecation Warning.
 */
import type { ApiObject } from '../api';
import type { Naming } from '../../naming';
import { ALL_VERBS, type EquivalentVersion, type ResourceDefinition, type StatusStrategy } from '../resources/definition';
import { deepCopy, jsonEqual } from '../../util/json-values';
import type { CrdScale, CrdVersion, CustomResourceDefinitionObject } from './crd';
import { scaleErrors, scaleOf } from './scale';
import { type SelectableField, customResourceTable, selectableField } from '../table';
import { compileSchema, schemaExtensions } from '../validation/schema';
import type { JSONSchemaProps } from '../validation/schema/types';
import { type UnknownField, walkFields } from '../validation/unknown-fields';
import { handOver } from '../api';
import { type SchemaType, schemaRegistry } from '../../schema';
import { applySchemaType } from './apply-schema';
import type { Clock } from '../../clock';
import { systemClock } from '../../clock';
import { WebhookConverter } from './conversion';
import type { CompiledSchema } from '../validation/schema';
import type { ServiceResolver } from '../services/resolver';

/**
 * `/status` of a custom resource changes status alone: everything else is the stored object's
 * (managedFields excepted). Validated as upstream's status strategy validates: the status
 * against its schema, the list types and the rules of the whole object (ratcheted), the scale
 * subresource's status paths.
 */
function statusStrategy(compiled: CompiledSchema | undefined, scale: CrdScale | undefined): StatusStrategy {
  return {
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
    validateUpdate(obj, old) {
      const scaled = scale ? scaleErrors(obj, scale, { spec: false }) : [];
      return compiled ? compiled.validateStatusUpdate(obj, old, scaled) : scaled;
    },
  };
}

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
  /** For conversion webhooks: the clock their timeout runs on, and that timeout (default 30 s). */
  clock?: Clock;
  conversionTimeoutMs?: number;
  /** Where conversion webhooks' `service` references lead. */
  services?: ServiceResolver;
}

/**
 * What a version's structural schema does to its objects, as upstream's custom resource
 * handler and strategy do: unknown fields pruned when a body is decoded (metadata's against
 * ObjectMeta, the rest against the schema; reported as warnings, or refused under Strict),
 * defaults filled on every write, validation on create, and on update with ratcheting (an
 * unchanged invalid value is not refused again).
 */
function schemaHooks(schema: JSONSchemaProps, compiled: CompiledSchema, naming: Naming, scale: CrdScale | undefined): Partial<ResourceDefinition> {
  const ext = schemaExtensions(naming);
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
    validate: (obj) => compiled.validate(obj, undefined, scale && scaleErrors(obj, scale, { spec: true })),
    validateOnlyOnCreate: true,
    validateUpdate: (obj, old) => compiled.validateUpdate(obj, old, undefined, scale && scaleErrors(obj, scale, { spec: true })),
  };
}

/** The served versions of an established definition as types, the storage version's first. */
export function customResourceTypes(crd: CustomResourceDefinitionObject, parts: CustomTypeParts): ResourceDefinition[] {
  const names = crd.status?.acceptedNames ?? crd.spec.names;
  const storage = crd.spec.versions.find((v) => v.storage);
  if (!storage) return [];
  const served = crd.spec.versions.filter((v) => v.served);
  const terminating = !!crd.metadata?.deletionTimestamp;
  const versions = new Versions(crd, parts);
  const defs: ResourceDefinition[] = [];
  for (const version of [storage, ...served.filter((v) => v !== storage)]) {
    if (version === storage && !version.served && served.length === 0) continue;
    const def = versionType(crd, version, names.kind, names.plural, terminating, parts.naming, versions);
    if (version !== storage) def.storedAs = versions.conversion(version, storage);
    else if (versions.converts(storage)) def.custom = { ...def.custom!, readsOthers: versions.conversion(storage, storage) };
    defs.push(def);
  }
  return defs;
}

/** Kubernetes' version priority (upstream's CompareKubeAwareVersionStrings): positive when `a` ranks above `b`. */
function versionPriority(a: string, b: string): number {
  const re = /^v(\d+)(?:(alpha|beta)(\d+))?$/;
  const ma = re.exec(a);
  const mb = re.exec(b);
  if (!ma || !mb) return ma ? 1 : mb ? -1 : a < b ? 1 : a > b ? -1 : 0;
  const rank = (m: RegExpExecArray) => (m[2] === undefined ? 2 : m[2] === 'beta' ? 1 : 0);
  if (rank(ma) !== rank(mb)) return rank(ma) - rank(mb);
  if (ma[1] !== mb[1]) return Number(ma[1]) - Number(mb[1]);
  return Number(ma[3] ?? 0) - Number(mb[3] ?? 0);
}

/**
 * The Warning of a request to a deprecated version: its `deprecationWarning`, or upstream's
 * default naming the highest-priority served version ranking above it that is not deprecated.
 */
function deprecationText(crd: CustomResourceDefinitionObject, version: CrdVersion, kind: string): string {
  if (version.deprecationWarning !== undefined && version.deprecationWarning !== null) return version.deprecationWarning;
  const { group } = crd.spec;
  let text = `${group}/${version.name} ${kind} is deprecated`;
  const newer = crd.spec.versions
    .filter((v) => v.served && !v.deprecated && versionPriority(v.name, version.name) > 0)
    .sort((a, b) => versionPriority(b.name, a.name));
  if (newer.length) text += `; use ${group}/${newer[0]!.name} ${kind}`;
  return text;
}

/** The definition's versions: each one's compiled schema, and the conversions between them. */
class Versions {
  private readonly compiled = new Map<string, CompiledSchema | undefined>();
  /** Whether two versions' schemas differ, by `<from>\u0000<to>`. */
  private readonly differing = new Map<string, boolean>();
  private readonly webhook?: WebhookConverter;

  constructor(
    private readonly crd: CustomResourceDefinitionObject,
    private readonly parts: CustomTypeParts,
  ) {
    if (crd.spec.conversion?.strategy === 'Webhook') {
      this.webhook = new WebhookConverter(crd, {
        naming: parts.naming,
        clock: parts.clock ?? systemClock,
        timeoutMs: parts.conversionTimeoutMs,
        services: parts.services,
      });
    }
  }

  schema(version: CrdVersion): CompiledSchema | undefined {
    if (!this.compiled.has(version.name)) {
      const schema = version.schema?.openAPIV3Schema;
      this.compiled.set(version.name, schema ? compileSchema(schema, schemaExtensions(this.parts.naming)) : undefined);
    }
    return this.compiled.get(version.name);
  }

  /** Whether objects of other versions may be in the store besides `storage`'s (an earlier storage version's). */
  converts(storage: CrdVersion): boolean {
    return (this.crd.status?.storedVersions ?? []).some((v) => v !== storage.name);
  }

  /**
   * Whether an object of `apiVersion` (undefined: `fallback`'s) must be coerced to `target`'s
   * schema after conversion: the two versions' schemas differ (an unknown version's always).
   */
  private differs(apiVersion: string | undefined, fallback: CrdVersion, target: CrdVersion): boolean {
    const { group } = this.crd.spec;
    const source = apiVersion === undefined ? fallback : this.crd.spec.versions.find((v) => `${group}/${v.name}` === apiVersion);
    if (source === target) return false;
    const key = `${source?.name ?? apiVersion}\u0000${target.name}`;
    let differ = this.differing.get(key);
    if (differ === undefined) this.differing.set(key, (differ = !source || !jsonEqual(source.schema ?? null, target.schema ?? null)));
    return differ;
  }

  /**
   * How `version` reads and writes objects the store keeps as `storage`'s (or as an earlier
   * storage version's): `None` rewrites apiVersion, `Webhook` calls the webhook; either way the
   * result is coerced to the target version's schema (pruned; defaulted on the way out), as
   * upstream's converter is wrapped, where the schema of the object's own version differs.
   */
  conversion(version: CrdVersion, storage: CrdVersion): EquivalentVersion {
    const { group } = this.crd.spec;
    const servedApiVersion = `${group}/${version.name}`;
    const storedApiVersion = `${group}/${storage.name}`;
    const servedSchema = this.schema(version);
    const storedSchema = this.schema(storage);
    /** Coerce a converted object (a copy of its own) that was `from`'s to `target`'s schema. */
    const coerce =
      (target: CrdVersion, fallback: CrdVersion, schema: CompiledSchema | undefined, fill: boolean) =>
      (obj: ApiObject, from: string | undefined): ApiObject => {
        if (schema && this.differs(from, fallback, target)) {
          schema.prune(obj as Record<string, unknown>);
          if (fill) schema.default(obj);
        }
        return obj;
      };
    const toStored = coerce(storage, version, storedSchema, false);
    const toServed = coerce(version, storage, servedSchema, true);
    const withVersion = (obj: ApiObject, to: string): ApiObject => (obj.apiVersion === undefined ? { ...obj } : { ...obj, apiVersion: to });
    const rewritten = (obj: ApiObject, to: string, target: CrdVersion, fallback: CrdVersion, coerced: typeof toStored): ApiObject =>
      this.differs(obj.apiVersion, fallback, target) ? coerced(withVersion(deepCopy(obj), to), obj.apiVersion) : withVersion(obj, to);
    const equivalent: EquivalentVersion = {
      apiVersion: storedApiVersion,
      fieldNames: {},
      toThat: (obj) => rewritten(obj, storedApiVersion, storage, version, toStored),
      fromThat: (obj) => rewritten(obj, servedApiVersion, version, storage, toServed),
    };
    const webhook = this.webhook;
    if (webhook) {
      // Objects are sent with their own apiVersion (an earlier storage version's, on the way out).
      const convert = async (objs: readonly ApiObject[], to: string, coerced: typeof toStored): Promise<ApiObject[]> => {
        const groups = new Map<string, number[]>();
        objs.forEach((o, i) => {
          const from = typeof o.apiVersion === 'string' ? o.apiVersion : to;
          groups.set(from, [...(groups.get(from) ?? []), i]);
        });
        const out: ApiObject[] = new Array(objs.length);
        for (const [from, at] of groups) {
          const converted = await webhook.convert(
            at.map((i) => objs[i]!),
            from,
            to,
            objs.length > 1,
          );
          at.forEach((i, k) => {
            out[i] = coerced(converted[k]!, from);
          });
        }
        return out;
      };
      equivalent.waits = {
        toThat: (objs) => convert(objs, storedApiVersion, toStored),
        fromThat: (objs) => convert(objs, servedApiVersion, toServed),
      };
    }
    return equivalent;
  }
}

function versionType(
  crd: CustomResourceDefinitionObject,
  version: CrdVersion,
  kind: string,
  plural: string,
  terminating: boolean,
  naming: Naming,
  versions: Versions,
): ResourceDefinition {
  const names = crd.status?.acceptedNames ?? crd.spec.names;
  const { group } = crd.spec;
  const hasStatus = !!version.subresources?.status;
  const schema = version.schema?.openAPIV3Schema;
  const compiled = versions.schema(version);
  const selectable = (version.selectableFields ?? []).map((f) => selectableField(f.jsonPath));
  const scale = version.subresources?.scale ?? undefined;
  const def: ResourceDefinition = {
    group,
    version: version.name,
    kind,
    resource: plural,
    singular: names.singular || kind.toLowerCase(),
    namespaced: crd.spec.scope === 'Namespaced',
    ...(names.shortNames?.length ? { shortNames: names.shortNames } : {}),
    ...(names.categories?.length ? { categories: names.categories } : {}),
    ...(version.deprecated ? { deprecation: { warning: deprecationText(crd, version, kind) } } : {}),
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
          status: statusStrategy(compiled, scale),
          prepareForCreate: (obj: ApiObject) => void delete obj.status,
          prepareForUpdate: (obj: ApiObject, old: ApiObject) => {
            if (old.status !== undefined) obj.status = deepCopy(old.status);
            else delete obj.status;
          },
        }
      : {}),
    ...(scale ? { scale: scaleOf(scale) } : {}),
    table: customResourceTable(version.additionalPrinterColumns),
    ...(schema && compiled ? schemaHooks(schema, compiled, naming, scale) : {}),
    ...(selectable.length ? { selectableFields: (obj: ApiObject) => Object.fromEntries(selectable.map((f) => [f.name, selectableValueOf(f, obj)])) } : {}),
  };
  return def;
}
