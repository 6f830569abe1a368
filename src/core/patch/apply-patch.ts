/**
 * Applying a JSON, merge or strategic merge PATCH body to the current object (docs/API.md,
 * "Patch types"). Apply patches go through server-side apply (core/apply) instead. Strategic
 * merge patch reads merge keys and strategies from the kind's schema.
 */
import type { ApiObject, Patch } from '../api';
import type { SchemaType } from '../../schema';
import { unsupportedMediaType } from '../../status';
import { goShapeStruct } from '../apply';
import { applyJsonPatch, decodeJsonPatch } from './json-patch';
import { applyMergePatch } from './merge-patch';
import { strategicMergePatch } from './strategic';
import { SmpError, toStatusError } from './smp-errors';
import { deepCopy, dropNulls } from '../../util/json-values';
import { PATCH_MEDIA_TYPES } from './media-types';

/**
 * The object `patch` makes of `current`. JSON patch addresses the object as upstream encodes it
 * (its Go view: fields without `omitempty` present, zero `omitempty` fields absent), so paths
 * and `test` operations resolve as they do upstream.
 */
export function applyPatch(patch: Patch, current: ApiObject, type: SchemaType | undefined): ApiObject {
  switch (patch.type) {
    case 'merge':
      return applyMergePatch(current as Record<string, unknown>, patch.body) as ApiObject;
    case 'json': {
      const ops = decodeJsonPatch(patch.body);
      if (!type) return applyJsonPatch(current, ops) as ApiObject;
      const goView = { ...goShapeStruct(current as Record<string, unknown>, type), apiVersion: current.apiVersion, kind: current.kind };
      return dropNulls(applyJsonPatch(goView, ops)) as ApiObject;
    }
    case 'strategic': {
      if (!type) throw unsupportedMediaType([...PATCH_MEDIA_TYPES].filter(([, t]) => t !== 'strategic').map(([mediaType]) => mediaType));
      try {
        return strategicMergePatch(deepCopy(current) as Record<string, unknown>, deepCopy(patch.body), type) as ApiObject;
      } catch (err) {
        if (err instanceof SmpError) throw toStatusError(err);
        throw err;
      }
    }
    case 'apply':
      throw new Error('apply patches are applied by the field manager');
  }
}
