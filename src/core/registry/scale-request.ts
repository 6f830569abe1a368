/**
 * Writes to the `/scale` subresource (PUT, any PATCH, apply): the request addresses an
 * autoscaling/v1 Scale made from the object; its `spec.replicas` goes back into the object.
 * Field ownership is tracked on the Scale with subresource `scale` and carried over to the
 * object's managedFields as upstream's ScaleHandler does (core/apply/scale.ts). JSON, merge and
 * strategic merge patches honour `fieldValidation` against the Scale's schema, as upstream's
 * patch handler decodes a subresource's patched object into the subresource's own type.
 */
import { type ApiObject, type ManagedFieldsEntry, type Patch, type WriteResult, handOver } from '../api';
import { badRequest, conflict } from '../../status';
import {
  ApplyConflicts,
  ApplyValidationError,
  FieldSet,
  SCALE_API_VERSION,
  type ScaleMapping,
  applyConfiguration,
  conflictError,
  fieldElement,
  managedFieldsAfterUpdate,
  parentEntriesFromScale,
  scaleEntriesFromParent,
  typedPatchError,
} from '../apply';
import { schemaRegistry } from '../../schema';
import { rfc3339 } from '../../clock';

import { applyPatch } from '../patch';
import { deepCopy } from '../../util/json-values';
import { checkPatchedFields, schemaWalker } from '../validation/field-validation';
import { type ScaleObject, getScale, scaleFromBody } from './scale';
import { gvkString } from './patch-request';
import type { ResourceWrites } from './resource-writes';
import type { WriteRequest } from './write-request';

/** How the new Scale comes about: a PUT body, a patch, or an apply. */
export type ScaleWrite = { readonly kind: 'put'; readonly body: ApiObject } | { readonly kind: 'patch'; readonly patch: Patch };

/** upstream's replicas path mapping of the scalable built-in types. */
const REPLICAS_PATH = [fieldElement('spec'), fieldElement('replicas')];

function scaleScope(writes: ResourceWrites) {
  const type = schemaRegistry(writes.naming).type('autoscaling.v1.Scale');
  return { type, apiVersion: SCALE_API_VERSION, kind: 'Scale', subresource: 'scale', ignore: new FieldSet(), now: rfc3339(writes.now()) };
}

function gvk(config: ApiObject): string {
  return gvkString(config.apiVersion, config.kind);
}

/** The new Scale and its managedFields. */
function nextScale(writes: ResourceWrites, req: WriteRequest, write: ScaleWrite, oldScale: ScaleObject): { scale: ScaleObject; entries: ManagedFieldsEntry[] } {
  const scope = scaleScope(writes);
  if (write.kind === 'put' || write.patch.type !== 'apply') {
    const body = write.kind === 'put' ? write.body : applyPatch(write.patch, deepCopy(oldScale) as ApiObject, scope.type);
    // Unknown and repeated fields of a patch (its result is new, ours to prune): a 400 under
    // Strict, warnings under Warn (docs/API.md, "Field validation").
    if (write.kind === 'patch')
      checkPatchedFields({
        patch: write.patch,
        patched: handOver(body),
        walker: schemaWalker(scope.type),
        directive: req.options.fieldValidation,
        ctx: req.ctx,
      });
    const scale = scaleFromBody(body, req.name, req.namespace);
    const withUid = body.metadata?.uid ? { ...scale, metadata: { ...scale.metadata, uid: body.metadata.uid } } : scale;
    return { scale: withUid, entries: managedFieldsAfterUpdate(oldScale, { ...body, spec: scale.spec }, req.manager, scope) };
  }
  const config = (write.patch.body ?? {}) as ApiObject;
  if (config.apiVersion !== SCALE_API_VERSION || config.kind !== 'Scale') throw badRequest(`invalid object type: ${gvk(config)}`);
  if (Array.isArray(config.metadata?.managedFields)) throw badRequest('metadata.managedFields must be nil');
  try {
    const applied = applyConfiguration(oldScale, config, req.manager, req.options.force === true, scope);
    const scale = scaleFromBody(applied.object, req.name, req.namespace);
    return { scale, entries: applied.object.metadata?.managedFields ?? [] };
  } catch (err) {
    if (err instanceof ApplyConflicts) throw conflictError(err);
    if (err instanceof ApplyValidationError) {
      throw typedPatchError(
        `failed to create typed patch object (${config.metadata?.namespace ?? ''}/${config.metadata?.name ?? ''}; ${gvk(config)}): ${err.message}`,
      );
    }
    throw err;
  }
}

/** Run a `/scale` write; answers with the Scale of the stored object. */
export async function writeScale(writes: ResourceWrites, req: WriteRequest, write: ScaleWrite): Promise<WriteResult> {
  const { def } = writes;
  const scaleDef = def.scale!;
  const mapping: ScaleMapping = { apiVersion: writes.apiVersion, replicasPath: REPLICAS_PATH };
  const scaleResource = { group: writes.groupResource.group, resource: `${writes.groupResource.resource}/scale` };
  // `/scale` never creates: an absent object is the parent's 404, for applies too (upstream's ScaleREST).
  // The round reads the current object and writes a copy of its own with the new replicas.
  const result = await writes.guaranteedUpdate(req, {
    reads: (current) => {
      const oldScale = getScale(def, current!);
      const parentEntries = current!.metadata?.managedFields;
      oldScale.metadata = { ...oldScale.metadata, managedFields: scaleEntriesFromParent(parentEntries, mapping) } as ScaleObject['metadata'];
      const { scale, entries } = nextScale(writes, req, write, oldScale);
      if (scale.metadata.uid && scale.metadata.uid !== current!.metadata?.uid) {
        throw conflict(
          scaleResource,
          req.name,
          `Precondition failed: UID in precondition: ${scale.metadata.uid}, UID in object meta: ${current!.metadata?.uid}`,
        );
      }
      const parent = deepCopy<ApiObject>(current!);
      scaleDef.setSpecReplicas(parent, scale.spec.replicas);
      if (scale.metadata.resourceVersion) parent.metadata = { ...parent.metadata, resourceVersion: scale.metadata.resourceVersion };
      return writes.prepareUpdate(req, { body: handOver(parent), current: current!, managedFields: parentEntriesFromScale(parentEntries, entries, mapping) });
    },
  });
  return { object: getScale(def, result.object), created: false };
}
