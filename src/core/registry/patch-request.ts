/**
 * One PATCH request against a resource (upstream's patch handler over the generic store's
 * Update): JSON, merge and strategic merge patches are applied to the current object (the
 * algorithms live in core/patch) and the result goes through the update path (strategy,
 * validation, admission, compare-and-swap, the writer's ownership as operation `Update`); an
 * apply patch is merged by the field manager, and creates the object when it is absent.
 */
import { type ApiObject, type ManagedFieldsEntry, type Owned, type Patch, type WriteResult, handOver } from '../api';
import { StatusError, badRequest, conflict, invalid } from '../../status';
import { fieldErrors } from '../validation/field-errors';
import { checkApplyPatch, checkPatchedFields, fieldWalker, resourceType } from '../validation/field-validation';
import { walkFields } from '../validation/unknown-fields';
import {
  ApplyConflicts,
  ApplyValidationError,
  type FieldManagerScope,
  ManagedFieldsError,
  applyConfiguration,
  conflictError,
  typedPatchError,
  unknownError,
} from '../apply';
import { applyPatch } from '../patch';
import { deepCopy, dropNulls, isObject } from '../../util/json-values';
import { fieldManagerScope } from './managed-fields';
import { type ResourceWrites, checkName } from './resource-writes';
import type { WriteRequest } from './write-request';

/** JSON, merge or strategic merge patch: patch the current object, then update. Absent objects are 404. */
export async function patchObject(writes: ResourceWrites, req: WriteRequest, patch: Patch): Promise<WriteResult> {
  const type = resourceType(writes.naming, writes.def);
  const walker = fieldWalker(writes.naming, writes.def);
  // Every patch type and prepareUpdate only read the current object: it is given as it is, not copied.
  const result = await writes.guaranteedUpdate(req, {
    reads: (current) => {
      const patched = applyPatch(patch, current!, type);
      if (!isObject(patched)) throw badRequest('the patched object is not an object');
      // Every patch type makes a new object, shared with nothing: the round's own, checked and changed without a copy.
      const body = handOver(patched as ApiObject);
      if (walker) checkPatchedFields({ patch, patched: body, walker, directive: req.options.fieldValidation, ctx: req.ctx });
      return writes.prepareUpdate(req, { body, current: current! });
    },
  });
  return writes.finishIfFinalized(req, result);
}

/** Group, version and kind as upstream prints a GroupVersionKind: `apps/v1, Kind=ReplicaSet`, `/v1, Kind=Pod`. */
export function gvkString(apiVersion: unknown, kind: unknown): string {
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

/** Server-side apply of the request's configuration; creates the object when it is absent. */
export async function applyObject(writes: ResourceWrites, req: WriteRequest, patch: Patch): Promise<WriteResult> {
  const { def } = writes;
  if (!req.options.fieldManager) {
    throw invalid({ group: writes.naming.groups.meta, kind: 'PatchOptions' }, '', [fieldErrors.required('fieldManager', 'is required for apply patch')]);
  }
  const config = patch.body ?? {};
  if (!isObject(config)) {
    throw badRequest(
      `error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal ${Array.isArray(config) ? 'array' : typeof config} into Go value of type map[string]interface {}`,
    );
  }
  if (config.apiVersion !== writes.apiVersion || config.kind !== def.kind) {
    throw badRequest(`invalid object type: ${gvkString(config.apiVersion, config.kind)}`);
  }
  const meta = isObject(config.metadata) ? config.metadata : {};
  if (Array.isArray(meta.managedFields)) throw badRequest('metadata.managedFields must be nil');
  const scope = fieldManagerScope(def, writes.apiVersion, req.subresource, writes.now(), writes.naming);
  if (!scope) throw unknownError(`no schema for ${def.kind}`);
  let result: WriteResult;
  try {
    // Only the main resource is created by an apply; subresources of absent objects are 404.
    // The apply reads the current object (its Go view, its managedFields): given as it is, not copied.
    result = await writes.guaranteedUpdate(
      req,
      {
        reads: (current) => {
          const applied = runApply(current, config as ApiObject, req, scope);
          // Repeated keys in the body are judged after the apply itself succeeded, before anything is stored.
          checkApplyPatch(req.options.fieldValidation, req.ctx);
          if (!current) {
            const uid = applied.object.metadata?.uid;
            if (uid) throw conflict(writes.groupResource, req.name, `uid mismatch: the provided object specified uid ${uid}, and no existing object was found`);
            checkName(applied.object, req.name);
            throw new CreateInstead(applied.object, applied.object.metadata?.managedFields ?? []);
          }
          // A changed object is new throughout (dropNulls rebuilds it): the round's own without a
          // copy. An unchanged one is the current object again, as a copy of the round's own.
          const body = applied.changed ? goZeroValues(writes, handOver(dropNulls(applied.object) as ApiObject)) : handOver(deepCopy<ApiObject>(current));
          checkName(body.value, req.name);
          return writes.prepareUpdate(req, { body, current, managedFields: applied.object.metadata?.managedFields ?? [] });
        },
      },
      req.subresource === '',
    );
  } catch (err) {
    if (!(err instanceof CreateInstead)) throw err;
    // New throughout (dropNulls rebuilds it): the write's own, whoever asked.
    const object = goZeroValues(writes, handOver(dropNulls(err.object) as ApiObject));
    delete object.value.metadata?.managedFields;
    return writes.create({ ...req, appliedManagedFields: err.managedFields }, object);
  }
  return writes.finishIfFinalized(req, result);
}

/**
 * An applied object as Go would hold it: null list elements and non-pointer structs become zero
 * values (`rules: [null]` → `[{}]`), so the type's strategy sees the shapes it expects and answers
 * with validation errors, as upstream does.
 */
function goZeroValues(writes: ResourceWrites, body: Owned<ApiObject>): Owned<ApiObject> {
  const type = resourceType(writes.naming, writes.def);
  if (!type) return body;
  const walk = walkFields(body, type, { keyOrder: 'document' });
  // A value the typed merge let through that Go could not decode: the configuration is wrong.
  if (walk.mismatch) {
    const object = body.value;
    const meta = object.metadata ?? {};
    throw typedPatchError(
      `failed to create typed patch object (${meta.namespace ?? ''}/${meta.name ?? ''}; ${gvkString(object.apiVersion, object.kind)}): ${walk.mismatch.message}`,
    );
  }
  return body;
}

function runApply(current: ApiObject | undefined, config: ApiObject, req: WriteRequest, scope: FieldManagerScope) {
  try {
    return applyConfiguration(current, config, req.manager, req.options.force === true, scope);
  } catch (err) {
    if (err instanceof ApplyConflicts) throw conflictError(err);
    if (err instanceof ApplyValidationError) {
      const meta = isObject(config.metadata) ? config.metadata : {};
      const where = `${typeof meta.namespace === 'string' ? meta.namespace : ''}/${typeof meta.name === 'string' ? meta.name : ''}`;
      throw typedPatchError(`failed to create typed patch object (${where}; ${gvkString(config.apiVersion, config.kind)}): ${err.message}`);
    }
    if (err instanceof ManagedFieldsError) throw unknownError(`failed to decode managed fields: ${err.message}`);
    if (err instanceof StatusError) throw err;
    throw unknownError((err as Error).message);
  }
}
