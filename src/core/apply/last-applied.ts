/**
 * Interplay with kubectl's client-side apply, which records its configuration in the
 * `kubectl.<key domain>/last-applied-configuration` annotation. As upstream does for the
 * manager named `kubectl` only: a server-side apply may take over fields that client-side apply
 * set and that still hold the annotation's values, and it keeps the annotation up to date.
 * The annotation key comes from the naming profile (FieldManagerScope.lastAppliedAnnotation).
 */
import type { ApiObject } from '../api';
import type { FieldManagerScope } from './field-manager';
import { goJson } from './fieldpath';
import { goShapeStruct } from './normalize';
import type { FieldSet } from './set';
import { isObject, rootAtom } from './typed';
import { compareValues, fieldSetOf, type ValidationError } from './walk';
import { deepCopy } from '../../util/json-values';

/** upstream's total annotation size limit (ValidateAnnotationsSize). */
const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;

/**
 * The fields a conflicting `kubectl` apply may take without force: those of the annotation's
 * configuration whose values the live object still has. Undefined when there is no usable
 * annotation.
 */
export function allowedByLastApplied(live: ApiObject, scope: FieldManagerScope): FieldSet | undefined {
  const key = scope.lastAppliedAnnotation;
  const text = key ? live.metadata?.annotations?.[key] : undefined;
  if (!text) return undefined;
  let lastApplied: unknown;
  try {
    lastApplied = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(lastApplied) || lastApplied.apiVersion !== scope.apiVersion) return undefined;
  const atom = rootAtom(scope.type);
  const errors: ValidationError[] = [];
  const set = fieldSetOf(lastApplied, atom, errors);
  if (errors.length > 0) return undefined;
  const liveView = goShapeStruct(live as Record<string, unknown>, scope.type);
  liveView.apiVersion = scope.apiVersion;
  liveView.kind = scope.kind;
  const cmp = compareValues(lastApplied, liveView, atom);
  return set.difference(cmp.modified).difference(cmp.added).difference(cmp.removed);
}

/** `object` with the annotation set to `config` (without the annotation itself, newline-terminated as Go's JSON encoder writes it), unless that makes annotations too large. */
export function withLastApplied(object: ApiObject, config: ApiObject, key: string): ApiObject {
  const copy = deepCopy(config);
  const configAnnotations = copy.metadata?.annotations;
  if (configAnnotations) delete configAnnotations[key];
  const annotations: Record<string, string> = { ...(object.metadata?.annotations ?? {}), [key]: `${goJson(copy)}\n` };
  let size = 0;
  for (const [k, v] of Object.entries(annotations)) size += Buffer.byteLength(k) + Buffer.byteLength(v);
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) delete annotations[key];
  return { ...object, metadata: { ...object.metadata, annotations } };
}
