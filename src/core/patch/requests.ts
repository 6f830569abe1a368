/**
 * One PATCH request against a resource's store (upstream's handlers/patch.go over the generic
 * store's Update): JSON, merge and strategic merge patches are applied to the current object
 * and the result goes through the update path (strategy, validation, compare-and-swap, the
 * writer's ownership as operation `Update`); an apply patch is merged by the field manager,
 * and creates the object when it is absent (SPEC "Modifying requests" 2, 5).
 */
import type { ApiObject, ManagedFieldsEntry, Patch, RequestContext, WriteOptions, WriteResult } from '../api';
import type { SchemaType } from '../../schema';
import { StatusError, badRequest, conflict, invalid } from '../../status';
import { fieldErrors } from '../validation/field-errors';
import {
  ApplyConflicts,
  ApplyValidationError,
  type FieldManagerScope,
  ManagedFieldsError,
  applyConfiguration,
  conflictError,
  unknownError,
} from '../apply';
import { applyPatch } from '../registry/patch';

/** What a patch request needs from the resource's store. */
export interface PatchHost {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespaced: boolean;
  readonly groupResource: { group: string; resource: string };
  /** The `meta` group name of the naming profile (PatchOptions errors). */
  readonly metaGroup: string;
  readonly schemaType: SchemaType | undefined;
  fieldManagerScope(subresource: string): FieldManagerScope | undefined;
  guaranteedUpdate(tryUpdate: (current: ApiObject | undefined) => ApiObject, allowCreate: boolean): Promise<WriteResult>;
  /** The update path for the patched object; `managedFields` given when the field manager already ran (apply). */
  prepareUpdate(body: ApiObject, current: ApiObject, managedFields?: ManagedFieldsEntry[]): ApiObject;
  /** The create path, with the apply's managedFields. */
  create(object: ApiObject, managedFields: ManagedFieldsEntry[]): Promise<WriteResult>;
  /** Hook for fieldValidation of the object a non-apply patch produced. */
  checkPatched?(patch: Patch, patched: ApiObject): void;
  /** Hook for fieldValidation of an apply patch, after it succeeded. */
  checkApplied?(patch: Patch): void;
}

export interface PatchRequest {
  readonly name: string;
  /** '' for the main resource, or `status`. */
  readonly subresource: string;
  readonly patch: Patch;
  readonly manager: string;
  readonly options: WriteOptions;
  readonly ctx: RequestContext;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** JSON, merge or strategic merge patch: patch the current object, then update. Absent objects are 404. */
export function patchObject(host: PatchHost, req: PatchRequest): Promise<WriteResult> {
  return host.guaranteedUpdate((current) => {
    const patched = applyPatch(req.patch, current!, host.schemaType);
    if (!isObject(patched)) throw badRequest('the patched object is not an object');
    host.checkPatched?.(req.patch, patched);
    return host.prepareUpdate(patched, current!);
  }, false);
}

/** Group, version and kind as upstream prints a GroupVersionKind: `apps/v1, Kind=ReplicaSet`, `/v1, Kind=Pod`. */
function gvkString(apiVersion: unknown, kind: unknown): string {
  const av = typeof apiVersion === 'string' ? apiVersion : '';
  const slash = av.indexOf('/');
  const group = slash < 0 ? '' : av.slice(0, slash);
  const version = slash < 0 ? av : av.slice(slash + 1);
  return `${group}/${version}, Kind=${typeof kind === 'string' ? kind : ''}`;
}

class CreateInstead {
  constructor(
    readonly object: ApiObject,
    readonly managedFields: ManagedFieldsEntry[],
  ) {}
}

function dropNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropNulls);
  if (isObject(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) if (x !== null) out[k] = dropNulls(x);
    return out;
  }
  return v;
}

/** Server-side apply of the request's configuration; creates the object when it is absent. */
export async function applyObject(host: PatchHost, req: PatchRequest): Promise<WriteResult> {
  if (!req.options.fieldManager) {
    throw invalid({ group: host.metaGroup, kind: 'PatchOptions' }, '', [fieldErrors.required('fieldManager', 'is required for apply patch')]);
  }
  const config = req.patch.body ?? {};
  if (!isObject(config)) {
    throw badRequest(`error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal ${Array.isArray(config) ? 'array' : typeof config} into Go value of type map[string]interface {}`);
  }
  if (config.apiVersion !== host.apiVersion || config.kind !== host.kind) {
    throw badRequest(`invalid object type: ${gvkString(config.apiVersion, config.kind)}`);
  }
  const meta = isObject(config.metadata) ? config.metadata : {};
  if (Array.isArray(meta.managedFields)) throw badRequest('metadata.managedFields must be nil');
  const scope = host.fieldManagerScope(req.subresource);
  if (!scope) throw unknownError(`no schema for ${host.kind}`);
  let result: WriteResult;
  try {
    // Only the main resource is created by an apply; subresources of absent objects are 404.
    result = await host.guaranteedUpdate((current) => {
      const applied = runApply(current, config as ApiObject, req, scope);
      // Repeated keys in the body are judged after the apply itself succeeded, before anything is stored.
      host.checkApplied?.(req.patch);
      if (!current) {
        const uid = applied.object.metadata?.uid;
        if (uid) throw conflict(host.groupResource, req.name, `uid mismatch: the provided object specified uid ${uid}, and no existing object was found`);
        checkName(applied.object, req.name);
        throw new CreateInstead(applied.object, applied.object.metadata?.managedFields ?? []);
      }
      const body = applied.changed ? (dropNulls(applied.object) as ApiObject) : { ...current, metadata: { ...current.metadata } };
      checkName(body, req.name);
      return host.prepareUpdate(body, current, applied.object.metadata?.managedFields ?? []);
    }, req.subresource === '');
  } catch (err) {
    if (!(err instanceof CreateInstead)) throw err;
    const object = dropNulls(err.object) as ApiObject;
    delete object.metadata?.managedFields;
    result = await host.create(object, err.managedFields);
  }
  return result;
}

function checkName(obj: ApiObject, name: string): void {
  const own = obj.metadata?.name ?? '';
  if (own !== name) throw badRequest(`the name of the object (${own}) does not match the name on the URL (${name})`);
}

function runApply(current: ApiObject | undefined, config: ApiObject, req: PatchRequest, scope: FieldManagerScope) {
  try {
    return applyConfiguration(current, config, req.manager, req.options.force === true, scope);
  } catch (err) {
    if (err instanceof ApplyConflicts) throw conflictError(err);
    if (err instanceof ApplyValidationError) {
      const meta = isObject(config.metadata) ? config.metadata : {};
      const where = `${typeof meta.namespace === 'string' ? meta.namespace : ''}/${typeof meta.name === 'string' ? meta.name : ''}`;
      throw unknownError(`failed to create typed patch object (${where}; ${gvkString(config.apiVersion, config.kind)}): ${err.message}`);
    }
    if (err instanceof ManagedFieldsError) throw unknownError(`failed to decode managed fields: ${err.message}`);
    if (err instanceof StatusError) throw err;
    throw unknownError((err as Error).message);
  }
}
