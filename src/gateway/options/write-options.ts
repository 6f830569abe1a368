/**
 * The WRITE and PATCH parameter sets (docs/API.md, "Endpoints") decoded into `WriteOptions` and
 * checked with upstream's ValidateCreateOptions / ValidateUpdateOptions / ValidatePatchOptions
 * (422 `CreateOptions.meta... "" is invalid: ...`).
 */
import { type FieldValidation, type PatchType, type WriteOptions, type FieldError, fieldErrors } from '../../core';
import type { Naming } from '../../naming';
import { invalid } from '../../status';
import { goStringSlice, notSupportedRendered, queryList, queryOptionalBool } from './query';

export const FIELD_MANAGER_MAX_LENGTH = 128;
const DRY_RUN_VALUES = ['All'];
/** Sorted as upstream's set lists them. */
const FIELD_VALIDATION_VALUES = ['', 'Ignore', 'Strict', 'Warn'];

export type WriteOptionsKind = 'CreateOptions' | 'UpdateOptions' | 'PatchOptions';

function isPrintable(ch: string): boolean {
  return !/[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}]/u.test(ch) && (ch === ' ' || !/\p{Zs}/u.test(ch));
}

export function validateFieldManager(fieldManager: string, field = 'fieldManager'): FieldError[] {
  const errs: FieldError[] = [];
  if (Buffer.byteLength(fieldManager, 'utf8') > FIELD_MANAGER_MAX_LENGTH) errs.push(fieldErrors.tooLong(field, FIELD_MANAGER_MAX_LENGTH));
  let position = 0;
  for (const ch of fieldManager) {
    if (!isPrintable(ch)) {
      const code = ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');
      errs.push(fieldErrors.invalid(field, fieldManager, `invalid character U+${code} (at position ${position})`));
    }
    position += Buffer.byteLength(ch, 'utf8');
  }
  return errs;
}

export function validateDryRun(dryRun: readonly string[] | undefined, field = 'dryRun'): FieldError[] {
  if (!dryRun || dryRun.every((v) => DRY_RUN_VALUES.includes(v))) return [];
  return [notSupportedRendered(field, goStringSlice(dryRun), DRY_RUN_VALUES)];
}

function validateFieldValidation(value: string): FieldError[] {
  return FIELD_VALIDATION_VALUES.includes(value) ? [] : [fieldErrors.notSupported('fieldValidation', value, FIELD_VALIDATION_VALUES)];
}

/**
 * Decode the WRITE set (plus `force` for PATCH) and validate it; `patchType` is given for PATCH.
 * Booleans and strings cannot be malformed here, so the only failures are 422s.
 */
export function parseWriteOptions(query: URLSearchParams, naming: Naming, kind: WriteOptionsKind, patchType?: PatchType): WriteOptions {
  const dryRun = queryList(query, 'dryRun');
  const fieldManager = query.get('fieldManager') ?? '';
  const fieldValidation = query.get('fieldValidation') ?? '';
  const force = kind === 'PatchOptions' ? queryOptionalBool(query, 'force') : undefined;

  const errs: FieldError[] = [];
  if (kind === 'PatchOptions') {
    if (patchType !== 'apply') {
      if (force !== undefined) errs.push(fieldErrors.forbidden('force', 'may not be specified for non-apply patch'));
    } else if (fieldManager === '') {
      errs.push(fieldErrors.required('fieldManager', 'is required for apply patch'));
    }
  }
  errs.push(...validateFieldManager(fieldManager), ...validateDryRun(dryRun), ...validateFieldValidation(fieldValidation));
  if (errs.length) throw invalid({ group: naming.groups.meta, kind }, '', errs);

  const options: WriteOptions = {};
  if (dryRun) options.dryRun = dryRun;
  if (fieldManager) options.fieldManager = fieldManager;
  if (fieldValidation) options.fieldValidation = fieldValidation as FieldValidation;
  if (force !== undefined) options.force = force;
  return options;
}
