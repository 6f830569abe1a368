/**
 * JSON merge patch (RFC 7386, `application/merge-patch+json`) as upstream applies it
 * (evanphx/json-patch v4 MergePatch): objects merge key by key, `null` deletes, anything else
 * replaces; nulls inside newly set objects are dropped. A `null` patch is a 400; a patch that
 * is not an object replaces the whole document, which then cannot decode (422).
 */
import { badRequest, invalid } from '../../status';
import { fieldErrors } from '../validation/field-errors';
import { deepCopy, isObject as isObjectOf } from '../../util/json-values';

type JsonMap = Record<string, unknown>;

const isObject = isObjectOf<JsonMap>;

function pruneNulls(v: unknown): unknown {
  if (isObject(v)) {
    const out: JsonMap = {};
    for (const [k, x] of Object.entries(v)) if (x !== null) out[k] = pruneNulls(x);
    return out;
  }
  if (Array.isArray(v)) return v.map((x) => (x === null ? x : pruneNulls(x)));
  return v;
}

function mergeDocs(doc: JsonMap, patch: JsonMap): JsonMap {
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) {
      delete doc[k];
      continue;
    }
    const cur = doc[k];
    if (cur === undefined || cur === null) doc[k] = pruneNulls(v);
    else if (!isObject(cur)) doc[k] = pruneNulls(v);
    else if (!isObject(v)) doc[k] = v;
    else doc[k] = mergeDocs(cur, v);
  }
  return doc;
}

/** Apply a merge patch to a copy of `doc` (an object). */
export function applyMergePatch(doc: JsonMap, patch: unknown): JsonMap {
  if (patch === null || patch === undefined) throw badRequest('Invalid JSON Patch');
  if (!isObject(patch)) {
    const text = JSON.stringify(patch);
    const kind = Array.isArray(patch) ? 'array' : typeof patch;
    throw invalid({ group: '', kind: '' }, '', [
      fieldErrors.invalid(
        'patch',
        text,
        `couldn't get version/kind; json parse error: json: cannot unmarshal ${kind} into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }`,
      ),
    ]);
  }
  return mergeDocs(deepCopy(doc) as JsonMap, deepCopy(patch) as JsonMap);
}
