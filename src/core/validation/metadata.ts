/**
 * ObjectMeta validation, as upstream's `ValidateObjectMeta` / `ValidateObjectMetaUpdate`, plus
 * the finalizer-name check upstream applies to the built-in types. Pure functions over plain metadata; the registry runs them on
 * every write (docs/API.md, "Object metadata").
 */
import type { ManagedFieldsEntry, ObjectMeta, OwnerReference } from '../api';
import type { NameRule } from './names';
import { fieldErrors, FieldPath, type FieldError } from './field-errors';
import { GO_NIL, goStringSlice, goTime, immutableWithRendering, invalidWithRendering } from './go-format';
import { byteLength, isQualifiedName, isValidLabelValue, labelValueOk, qualifiedNameOk, validateName } from './names';

/** Upstream's TotalAnnotationSizeLimitB: keys plus values, 256 KiB. */
export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;
export const FIELD_MANAGER_MAX_LENGTH = 128;
export const MAX_SUBRESOURCE_NAME_LENGTH = 256;
export const IS_NEGATIVE_ERROR_MSG = 'must be greater than or equal to 0';

export const FINALIZER_ORPHAN_DEPENDENTS = 'orphan';
export const FINALIZER_DELETE_DEPENDENTS = 'foregroundDeletion';
/** The namespace lifecycle finalizer (upstream `core.FinalizerKubernetes`, a literal, not a domain). */
export const FINALIZER_NAMESPACE = 'kubernetes';

/** Finalizer names without a domain prefix that built-in types accept. */
const STANDARD_FINALIZERS = new Set([FINALIZER_NAMESPACE, FINALIZER_ORPHAN_DEPENDENTS, FINALIZER_DELETE_DEPENDENTS]);

export interface ObjectMetaRules {
  namespaced: boolean;
  nameRule: NameRule;
  /**
   * Custom resources use apimachinery's checks only; built-in types (the default) also refuse
   * unprefixed finalizer names other than the standard ones.
   */
  customResource?: boolean;
}

const META = FieldPath.root('metadata');

export function validateNonnegative(value: number | undefined, path: FieldPath): FieldError[] {
  return value !== undefined && value < 0 ? [fieldErrors.invalid(path, value, IS_NEGATIVE_ERROR_MSG)] : [];
}

/** A label key (upstream ValidateLabelName): a qualified name. */
export function validateLabelName(key: string, path: FieldPath): FieldError[] {
  return isQualifiedName(key).map((msg) => fieldErrors.invalid(path, key, msg));
}

/** Label keys and values; errors name the map, not the entry, as upstream's do. */
export function validateLabels(labels: Record<string, string> | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!labels) return errs;
  // Keys and values that pass cost no lists (every create checks several label maps).
  for (const k in labels) {
    const v = labels[k];
    if (!qualifiedNameOk(k)) errs.push(...validateLabelName(k, path));
    const value = String(v);
    if (!labelValueOk(value)) for (const msg of isValidLabelValue(value)) errs.push(fieldErrors.invalid(path, v, msg));
  }
  return errs;
}

export function annotationsSize(annotations: Record<string, string> | undefined): number {
  let total = 0;
  if (!annotations) return 0;
  for (const k in annotations) total += byteLength(k) + byteLength(String(annotations[k]));
  return total;
}

/** Annotation keys are qualified names regardless of case; all keys and values together at most 256 KiB. */
export function validateAnnotations(annotations: Record<string, string> | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  for (const k in annotations ?? {}) {
    const key = k.toLowerCase();
    if (!qualifiedNameOk(key)) errs.push(...isQualifiedName(key).map((msg) => fieldErrors.invalid(path, k, msg)));
  }
  if (annotationsSize(annotations) > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push(fieldErrors.tooLong(path, TOTAL_ANNOTATION_SIZE_LIMIT));
  return errs;
}

/** Split an apiVersion as upstream's schema.ParseGroupVersion (an unparsable one has no version). */
function parseApiVersion(apiVersion: string): { group: string; version: string } {
  if (apiVersion === '' || apiVersion === '/') return { group: '', version: '' };
  const parts = apiVersion.split('/');
  if (parts.length === 1) return { group: '', version: apiVersion };
  if (parts.length === 2) return { group: parts[0]!, version: parts[1]! };
  return { group: '', version: '' };
}

function validateOwnerReference(ref: OwnerReference, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const gv = parseApiVersion(ref.apiVersion ?? '');
  if (!gv.version) errs.push(fieldErrors.invalid(path.child('apiVersion'), ref.apiVersion ?? '', 'version must not be empty'));
  if (!ref.kind) errs.push(fieldErrors.invalid(path.child('kind'), ref.kind ?? '', 'must not be empty'));
  if (!ref.name) errs.push(fieldErrors.invalid(path.child('name'), ref.name ?? '', 'must not be empty'));
  if (!ref.uid) errs.push(fieldErrors.invalid(path.child('uid'), ref.uid ?? '', 'must not be empty'));
  // upstream BannedOwners: core/v1 Events may not own anything.
  if (gv.group === '' && gv.version === 'v1' && ref.kind === 'Event') {
    errs.push(fieldErrors.invalid(path, ref, '/v1, Kind=Event is disallowed from being an owner'));
  }
  return errs;
}

/** Each reference needs apiVersion, kind, name and uid; at most one may be the controller. */
export function validateOwnerReferences(refs: OwnerReference[] | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  let firstController = '';
  for (const ref of refs ?? []) {
    errs.push(...validateOwnerReference(ref, path));
    if (ref.controller === true) {
      const current = `${ref.kind}/${ref.name}`;
      if (firstController) {
        errs.push(
          fieldErrors.invalid(
            path,
            refs,
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${current}`,
          ),
        );
      } else firstController = current;
    }
  }
  return errs;
}

export function validateFinalizerName(name: string, path: FieldPath): FieldError[] {
  return isQualifiedName(name).map((msg) => fieldErrors.invalid(path, name, msg));
}

/** Built-in types: an unprefixed finalizer must be one of the standard ones (upstream validateKubeFinalizerName). */
export function validateStandardFinalizerName(name: string, path: FieldPath): FieldError[] {
  if (name.split('/').length === 1 && !STANDARD_FINALIZERS.has(name)) {
    return [fieldErrors.invalid(path, name, 'name is neither a standard finalizer name nor is it fully qualified')];
  }
  return [];
}

/** Qualified names; `orphan` and `foregroundDeletion` exclude each other. */
export function validateFinalizers(finalizers: string[] | undefined, path: FieldPath): FieldError[] {
  const list = finalizers ?? [];
  const errs = list.flatMap((f) => validateFinalizerName(f, path));
  if (list.includes(FINALIZER_ORPHAN_DEPENDENTS) && list.includes(FINALIZER_DELETE_DEPENDENTS)) {
    errs.push(
      invalidWithRendering(path, list, goStringSlice(list), `finalizer ${FINALIZER_ORPHAN_DEPENDENTS} and ${FINALIZER_DELETE_DEPENDENTS} cannot be both set`),
    );
  }
  return errs;
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

function hasUnprintable(text: string): { char: string; index: number } | undefined {
  // Printable ASCII (the space included) is the common case: no per-character checks.
  if (PRINTABLE_ASCII.test(text)) return undefined;
  let index = 0;
  for (const ch of text) {
    if (/[\p{C}\p{Zl}\p{Zp}]/u.test(ch) || (/\s/u.test(ch) && ch !== ' ')) return { char: ch, index };
    index += byteLength(ch);
  }
  return undefined;
}

export function validateFieldManager(manager: string | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const text = manager ?? '';
  if (text.length > FIELD_MANAGER_MAX_LENGTH) errs.push(fieldErrors.tooLong(path, FIELD_MANAGER_MAX_LENGTH));
  const bad = hasUnprintable(text);
  if (bad) {
    const code = bad.char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
    errs.push(fieldErrors.invalid(path, text, `invalid character U+${code} (at position ${bad.index})`));
  }
  return errs;
}

export function validateManagedFields(entries: ManagedFieldsEntry[] | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  (entries ?? []).forEach((entry, i) => {
    const p = path.index(i);
    if (entry.operation !== 'Apply' && entry.operation !== 'Update') {
      errs.push(fieldErrors.invalid(p.child('operation'), entry.operation ?? '', 'must be `Apply` or `Update`'));
    }
    if (entry.fieldsType && entry.fieldsType !== 'FieldsV1') {
      errs.push(fieldErrors.invalid(p.child('fieldsType'), entry.fieldsType, 'must be `FieldsV1`'));
    }
    errs.push(...validateFieldManager(entry.manager, p.child('manager')));
    if ((entry.subresource ?? '').length > MAX_SUBRESOURCE_NAME_LENGTH) {
      errs.push(fieldErrors.tooLong(p.child('subresource'), MAX_SUBRESOURCE_NAME_LENGTH));
    }
  });
  return errs;
}

/** Parts shared by create and update: labels, annotations, owners, managed fields. */
function validateCommonParts(meta: ObjectMeta): FieldError[] {
  return [
    ...validateLabels(meta.labels, META.child('labels')),
    ...validateAnnotations(meta.annotations, META.child('annotations')),
    ...validateOwnerReferences(meta.ownerReferences, META.child('ownerReferences')),
  ];
}

function validateStandardFinalizers(meta: ObjectMeta): FieldError[] {
  return (meta.finalizers ?? []).flatMap((f, i) => validateStandardFinalizerName(f, META.child('finalizers').index(i)));
}

/**
 * Metadata of an object being created (name generation already done): name or generateName,
 * namespace by scope, generation, labels, annotations, owner references, finalizers, managed fields.
 */
export function validateObjectMeta(meta: ObjectMeta, rules: ObjectMetaRules): FieldError[] {
  const errs: FieldError[] = [];
  if (meta.generateName) {
    for (const msg of validateName(meta.generateName, rules.nameRule, true)) {
      errs.push(fieldErrors.invalid(META.child('generateName'), meta.generateName, msg));
    }
  }
  if (!meta.name) errs.push(fieldErrors.required(META.child('name'), 'name or generateName is required'));
  else for (const msg of validateName(meta.name, rules.nameRule)) errs.push(fieldErrors.invalid(META.child('name'), meta.name, msg));

  if (rules.namespaced) {
    if (!meta.namespace) errs.push(fieldErrors.required(META.child('namespace')));
    else for (const msg of validateName(meta.namespace, 'dns1123Label')) errs.push(fieldErrors.invalid(META.child('namespace'), meta.namespace, msg));
  } else if (meta.namespace) {
    errs.push(fieldErrors.forbidden(META.child('namespace'), 'not allowed on this type'));
  }

  errs.push(...validateNonnegative(meta.generation, META.child('generation')));
  errs.push(...validateCommonParts(meta));
  errs.push(...validateFinalizers(meta.finalizers, META.child('finalizers')));
  errs.push(...validateManagedFields(meta.managedFields, META.child('managedFields')));
  if (!rules.customResource) errs.push(...validateStandardFinalizers(meta));
  return errs;
}

function nullableTime(value: string | null | undefined): string {
  return value ? goTime(value) : GO_NIL;
}

/**
 * Metadata of an update: identity and deletion fields are immutable, generation never goes
 * back, a deleting object takes no new finalizers, and the free-form parts stay valid.
 */
export function validateObjectMetaUpdate(newMeta: ObjectMeta, oldMeta: ObjectMeta, options: { customResource?: boolean } = {}): FieldError[] {
  const errs: FieldError[] = [];
  if (oldMeta.deletionTimestamp) {
    const old = new Set(oldMeta.finalizers ?? []);
    const extra = [...new Set((newMeta.finalizers ?? []).filter((f) => !old.has(f)))].sort();
    if (extra.length > 0) {
      errs.push(
        fieldErrors.forbidden(
          META.child('finalizers'),
          `no new finalizers can be added if the object is being deleted, found new finalizers ${goStringSlice(extra)}`,
        ),
      );
    }
  }
  if (!newMeta.resourceVersion) errs.push(fieldErrors.invalid(META.child('resourceVersion'), newMeta.resourceVersion ?? '', 'must be specified for an update'));
  if ((newMeta.generation ?? 0) < (oldMeta.generation ?? 0)) {
    errs.push(fieldErrors.invalid(META.child('generation'), newMeta.generation ?? 0, 'must not be decremented'));
  }
  const same = (a: unknown, b: unknown) => (a ?? '') === (b ?? '');
  if (!same(newMeta.name, oldMeta.name)) errs.push(fieldErrors.immutable(META.child('name'), newMeta.name ?? ''));
  if (!same(newMeta.namespace, oldMeta.namespace)) errs.push(fieldErrors.immutable(META.child('namespace'), newMeta.namespace ?? ''));
  if (!same(newMeta.uid, oldMeta.uid)) errs.push(fieldErrors.immutable(META.child('uid'), newMeta.uid ?? ''));
  if (!same(newMeta.creationTimestamp, oldMeta.creationTimestamp)) {
    errs.push(immutableWithRendering(META.child('creationTimestamp'), newMeta.creationTimestamp, goTime(newMeta.creationTimestamp)));
  }
  if (!same(newMeta.deletionTimestamp, oldMeta.deletionTimestamp)) {
    errs.push(immutableWithRendering(META.child('deletionTimestamp'), newMeta.deletionTimestamp, nullableTime(newMeta.deletionTimestamp)));
  }
  if (newMeta.deletionGracePeriodSeconds !== oldMeta.deletionGracePeriodSeconds) {
    const v = newMeta.deletionGracePeriodSeconds;
    errs.push(immutableWithRendering(META.child('deletionGracePeriodSeconds'), v, v === undefined ? GO_NIL : String(v)));
  }
  errs.push(...validateCommonParts(newMeta));
  errs.push(...validateManagedFields(newMeta.managedFields, META.child('managedFields')));
  if (!options.customResource) errs.push(...validateStandardFinalizers(newMeta));
  return errs;
}
