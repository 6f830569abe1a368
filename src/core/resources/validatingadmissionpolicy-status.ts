/**
 * ValidatingAdmissionPolicy's status, which the type-checking controller writes through
 * `/status` (upstream's ValidateValidatingAdmissionPolicyStatusUpdate): expression warnings with
 * a JSONPath field reference, and metav1 Conditions (upstream's ValidateConditions).
 */
import { fieldErrors, FieldPath, type FieldError } from '../validation/field-errors';
import { validateLabelName } from '../validation/metadata';
import { regexError } from '../validation/names';

/** metav1.Condition. */
export interface Condition {
  type: string;
  status: string;
  observedGeneration?: number;
  lastTransitionTime: string | null;
  reason: string;
  message: string;
}

/** A type-checking warning about one expression (`spec.validations[0].expression`). */
export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

export interface TypeChecking {
  expressionWarnings?: ExpressionWarning[];
}

export interface ValidatingAdmissionPolicyStatus {
  observedGeneration?: number;
  typeChecking?: TypeChecking;
  conditions?: Condition[];
}

const CONDITION_STATUSES = ['False', 'True', 'Unknown'];
const MAX_REASON_LENGTH = 1024;
const MAX_MESSAGE_LENGTH = 32 * 1024;
const REASON_FMT = '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?';
const REASON_RE = new RegExp(`^${REASON_FMT}$`);
const REASON_MSG =
  "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'";

/** upstream ValidateCondition. */
function validateCondition(c: Condition, path: FieldPath): FieldError[] {
  const errs = validateLabelName(c.type ?? '', path.child('type'));
  if (!CONDITION_STATUSES.includes(c.status)) errs.push(fieldErrors.notSupported(path.child('status'), c.status ?? '', CONDITION_STATUSES));
  if ((c.observedGeneration ?? 0) < 0)
    errs.push(fieldErrors.invalid(path.child('observedGeneration'), c.observedGeneration, 'must be greater than or equal to zero'));
  if (!c.lastTransitionTime) errs.push(fieldErrors.required(path.child('lastTransitionTime'), 'must be set'));
  const reason = c.reason ?? '';
  if (reason.length === 0) errs.push(fieldErrors.required(path.child('reason'), 'must be set'));
  else {
    if (!REASON_RE.test(reason))
      errs.push(
        fieldErrors.invalid(
          path.child('reason'),
          reason,
          regexError(REASON_MSG, REASON_FMT, 'my_name', 'MY_NAME', 'MyName', 'ReasonA,ReasonB', 'ReasonA:ReasonB'),
        ),
      );
    if (Buffer.byteLength(reason) > MAX_REASON_LENGTH) errs.push(fieldErrors.tooLong(path.child('reason'), MAX_REASON_LENGTH));
  }
  if (Buffer.byteLength(c.message ?? '') > MAX_MESSAGE_LENGTH) errs.push(fieldErrors.tooLong(path.child('message'), MAX_MESSAGE_LENGTH));
  return errs;
}

/** upstream ValidateConditions: unique types, each condition valid. */
export function validateConditions(conditions: readonly Condition[] | undefined, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  const types = new Set<string>();
  (conditions ?? []).forEach((c, i) => {
    if (types.has(c.type)) errs.push(fieldErrors.duplicate(path.index(i).child('type'), c.type));
    else types.add(c.type);
    errs.push(...validateCondition(c, path.index(i)));
  });
  return errs;
}

/** The field reference must be a JSONPath; only an unclosed `[` is recognised as malformed here. */
function validateFieldRef(fieldRef: string, path: FieldPath): FieldError[] {
  const ref = (fieldRef ?? '').trim();
  if (ref === '') return [fieldErrors.required(path, '')];
  let depth = 0;
  for (const c of ref) {
    if (c === '[') depth++;
    else if (c === ']') depth = Math.max(0, depth - 1);
  }
  return depth > 0 ? [fieldErrors.invalid(path, ref, 'invalid JSONPath: unclosed array expect ]')] : [];
}

/** upstream validateValidatingAdmissionPolicyStatus. */
export function validatePolicyStatus(status: ValidatingAdmissionPolicyStatus | undefined): FieldError[] {
  const path = FieldPath.root('status');
  const errs: FieldError[] = [];
  (status?.typeChecking?.expressionWarnings ?? []).forEach((w, i) => {
    const at = path.child('typeChecking', 'expressionWarnings').index(i);
    if (!w.warning) errs.push(fieldErrors.required(at.child('warning'), ''));
    errs.push(...validateFieldRef(w.fieldRef, at.child('fieldRef')));
  });
  errs.push(...validateConditions(status?.conditions, path.child('conditions')));
  return errs;
}
