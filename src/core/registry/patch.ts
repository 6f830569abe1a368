/**
 * Applying a PATCH body to the current object. JSON patch (RFC 6902) through fast-json-patch,
 * merge patch (RFC 7386) here. Strategic merge patch and server-side apply need each type's
 * merge markers and arrive with the writes issue; until then they are refused with 415.
 */
import * as jsonpatch from 'fast-json-patch';
import type { ApiObject, Patch } from '../api';
import { StatusError, badRequest, unsupportedMediaType } from '../../status';
import { deepCopy } from './object-codec';

/** The patch media types this core applies, in upstream's order for the 415 message. */
export const SUPPORTED_PATCH_MEDIA_TYPES = ['application/json-patch+json', 'application/merge-patch+json'];

function unprocessable(message: string): StatusError {
  return new StatusError({ kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message, reason: 'Invalid', code: 422 });
}

/** RFC 7386: objects merge recursively, `null` deletes, anything else replaces. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return deepCopy(patch);
  const base: Record<string, unknown> =
    target !== null && typeof target === 'object' && !Array.isArray(target) ? { ...(target as Record<string, unknown>) } : {};
  for (const [k, v] of Object.entries(patch as Record<string, unknown>)) {
    if (v === null) delete base[k];
    else base[k] = mergePatch(base[k], v);
  }
  return base;
}

export function applyPatch(patch: Patch, current: ApiObject): ApiObject {
  switch (patch.type) {
    case 'merge': {
      if (patch.body === null || typeof patch.body !== 'object' || Array.isArray(patch.body)) {
        throw badRequest('error decoding patch: merge patch must be a JSON object');
      }
      return mergePatch(current, patch.body) as ApiObject;
    }
    case 'json': {
      if (!Array.isArray(patch.body)) throw badRequest('json: cannot unmarshal object into Go value of type jsonpatch.Patch');
      const ops = patch.body as jsonpatch.Operation[];
      const error = jsonpatch.validate(ops, deepCopy(current));
      if (error) {
        if (error.name === 'TEST_OPERATION_FAILED') throw unprocessable(`the server rejected our request due to an error in our request: testing value ${JSON.stringify(error.operation && (error.operation as { path?: string }).path)} failed: test operation failed`);
        if (['SEQUENCE_NOT_AN_ARRAY', 'OPERATION_NOT_AN_OBJECT', 'OPERATION_OP_INVALID', 'OPERATION_PATH_INVALID', 'OPERATION_FROM_REQUIRED', 'OPERATION_VALUE_REQUIRED'].includes(error.name)) {
          throw badRequest(`the server rejected our request due to an error in our request: ${error.message.split('\n')[0]}`);
        }
        throw unprocessable(`the server rejected our request due to an error in our request: ${error.message.split('\n')[0]}`);
      }
      try {
        return jsonpatch.applyPatch(deepCopy(current), ops, false, false).newDocument as ApiObject;
      } catch (err) {
        throw unprocessable(`the server rejected our request due to an error in our request: ${(err as Error).message.split('\n')[0]}`);
      }
    }
    case 'strategic':
    case 'apply':
      throw unsupportedMediaType(SUPPORTED_PATCH_MEDIA_TYPES);
  }
}
