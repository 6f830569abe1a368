/**
 * Evaluation of a custom resource's validation rules on create and update, as upstream's
 * schema/cel Validator does it: every rule at every node the object has (the node's rules, then
 * its properties and additionalProperties in the object's order, then list items), `self` the
 * node's value, on update `oldSelf` the correlated old value (by property name, and by list-map
 * keys in `map` lists; other lists' items have none). A rule naming `oldSelf` runs only when
 * there is an old value, unless `optionalOldSelf`. A failed rule is one error at the node's path
 * (its `fieldPath` appended) with its messageExpression's result, its message or `failed rule:
 * <rule>`, typed by its `reason`.
 *
 * Ratcheting (CRDValidationRatcheting): on update, an error of a rule without `oldSelf` at a
 * value deep-equal to its correlated old value (or, where values do not correlate, to the
 * nearest correlated ancestor's) is dropped.
 *
 * Cost: each evaluation is metered against the per-call limit, and all of one object's against
 * the runtime budget; past either the write is refused with upstream's messages and no further
 * rule runs.
 */
import { jsonEqual } from '../../../../util/json-values';
import { type FieldError, type FieldPath, fieldErrors } from '../../field-errors';
import type { SchemaNode } from '../node';
import { toCelInput } from './values';
import { type CompiledRule, type NodeRules, nodeRules, runProgram, subtreeHasRules } from './compile';

/** apiserver's RuntimeCELCostBudget: what all rules of one object may cost together. */
export const RUNTIME_COST_BUDGET = 10_000_000;

/** apiserver's MaxEvaluatedMessageExpressionSizeBytes. */
const MAX_MESSAGE_BYTES = 5 * 1024;

/** A path built only when an error needs its text. */
class Path {
  constructor(
    private readonly parent: Path | string,
    private readonly segment: string,
    private readonly bracketed: boolean,
  ) {}
  text(): string {
    const above = typeof this.parent === 'string' ? this.parent : this.parent.text();
    return this.bracketed ? `${above}[${this.segment}]` : above ? `${above}.${this.segment}` : this.segment;
  }
}
type AnyPath = Path | string;
const textOf = (p: AnyPath): string => (typeof p === 'string' ? p : p.text());
const child = (p: AnyPath, name: string): Path => new Path(p, name, false);
const bracket = (p: AnyPath, key: string | number): Path => new Path(p, String(key), true);

/** Where an update's value stands for ratcheting: its correlated old value, or the nearest correlated ancestor. */
interface Correlation {
  /** The node's value has a correlated old value. */
  readonly correlated: boolean;
  readonly value: unknown;
  readonly old: unknown;
  /** The nearest correlated ancestor (for an uncorrelated node). */
  readonly parent: Correlation | undefined;
  equal?: boolean;
}

function unchanged(c: Correlation | undefined): boolean {
  if (!c) return false;
  if (!c.correlated) return unchanged(c.parent);
  c.equal ??= jsonEqual(c.value, c.old);
  return c.equal;
}

class Run {
  remaining = RUNTIME_COST_BUDGET;
  stopped = false;
  readonly errs: FieldError[] = [];
  constructor(readonly update: boolean) {}

  budgetError(path: AnyPath, schemaType: string): void {
    this.errs.push(
      fieldErrors.invalid(textOf(path), schemaType, 'validation failed due to running out of cost budget, no further validation rules will be run'),
    );
    this.stopped = true;
  }

  validate(node: SchemaNode, path: AnyPath, value: unknown, old: unknown, corr: Correlation | undefined, root: boolean): void {
    if (this.stopped || value === null || value === undefined || !subtreeHasRules(node)) return;
    const rules = nodeRules(node, root || node.embedded);
    if (rules) this.expressions(rules, path, value, old === null ? undefined : old, corr);
    if (this.stopped) return;
    if (Array.isArray(value)) {
      if (!node.items) return;
      const olds = this.update && Array.isArray(old) ? correlateMapList(node, old) : undefined;
      for (let i = 0; i < value.length && !this.stopped; i++) {
        const oldItem = olds?.(value[i]);
        const c = this.update ? itemCorrelation(corr, value[i], oldItem) : undefined;
        this.validate(node.items, bracket(path, i), value[i], oldItem, c, false);
      }
      return;
    }
    if (typeof value !== 'object') return;
    const obj = value as Record<string, unknown>;
    const oldObj = typeof old === 'object' && old !== null && !Array.isArray(old) ? (old as Record<string, unknown>) : undefined;
    if (node.additional && subtreeHasRules(node.additional)) {
      for (const k of Object.keys(obj)) {
        if (this.stopped) return;
        const oldV = oldObj?.[k];
        this.validate(node.additional, bracket(path, k), obj[k], oldV, this.update ? keyCorrelation(corr, obj[k], oldV, oldObj, k) : undefined, false);
      }
    }
    if (node.properties) {
      for (const k of Object.keys(obj)) {
        if (this.stopped) return;
        const sub = node.properties.get(k);
        if (!sub || !subtreeHasRules(sub)) continue;
        const oldV = oldObj?.[k];
        let c = this.update ? keyCorrelation(corr, obj[k], oldV, oldObj, k) : undefined;
        // apiVersion and kind are not ratcheted (old and new are of one version).
        if (root && (k === 'apiVersion' || k === 'kind')) c = undefined;
        this.validate(sub, child(path, k), obj[k], oldV, c, false);
      }
    }
  }

  private expressions(rules: NodeRules, path: AnyPath, value: unknown, old: unknown, corr: Correlation | undefined): void {
    if (this.remaining <= 0) {
      this.budgetError(path, rules.schemaType);
      return;
    }
    let self: unknown;
    let oldSelf: unknown;
    let converted = false;
    const convert = () => {
      if (converted) return;
      converted = true;
      self = toInput(value, rules);
      oldSelf = old === undefined ? undefined : toInput(old, rules);
    };
    for (const compiled of rules.rules) {
      if (compiled.error) {
        this.errs.push(fieldErrors.invalid(textOf(path), rules.schemaType, `rule compile error: ${compiled.error.detail}`));
        continue;
      }
      if (!compiled.program) continue;
      if (compiled.usesOldSelf && old === undefined && !compiled.optionalOldSelf) continue;
      convert();
      const vars: Record<string, unknown> = { self };
      if (compiled.usesOldSelf) {
        if (compiled.optionalOldSelf) vars.oldSelf = optionalOf(oldSelf);
        else vars.oldSelf = oldSelf;
      } else if (oldSelf !== undefined) vars.oldSelf = oldSelf;
      const r = runProgram(compiled.program, vars, compiled.baseCost);
      if (r.cost > this.remaining) {
        this.budgetError(path, rules.schemaType);
        return;
      }
      this.remaining -= r.cost;
      if (r.error !== undefined) {
        const ruleText = ruleErrorString(compiled);
        if (r.exceeded) {
          this.errs.push(
            fieldErrors.invalid(
              textOf(path),
              rules.schemaType,
              `'${r.error}': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleText}`,
            ),
          );
          this.stopped = true;
          return;
        }
        if (r.error.startsWith('no such overload') || r.error.startsWith('unbound function') || r.error.includes('no matching overload')) {
          this.errs.push(
            fieldErrors.invalid(
              textOf(path),
              rules.schemaType,
              `'${r.error}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleText}`,
            ),
          );
        } else {
          this.errs.push(fieldErrors.invalid(textOf(path), rules.schemaType, `${r.error} evaluating rule: ${ruleText}`));
        }
        continue;
      }
      if (r.value === true) continue;
      const at = compiled.fieldPath ? compiled.fieldPath.reduce<AnyPath>((p, s) => (s.key ? bracket(p, s.name) : child(p, s.name)), path) : path;
      const ratchet = !compiled.usesOldSelf && unchanged(corr);
      let detail: string | undefined;
      if (compiled.messageProgram) {
        const vars: Record<string, unknown> = { self };
        if (oldSelf !== undefined) vars.oldSelf = oldSelf;
        const m = runProgram(compiled.messageProgram, vars, compiled.messageBaseCost);
        if (m.exceeded) {
          if (!ratchet)
            this.errs.push(
              fieldErrors.invalid(
                textOf(at),
                rules.schemaType,
                `no further validation rules will be run due to call cost exceeds limit for messageExpression: ${JSON.stringify(compiled.rule.messageExpression)}`,
              ),
            );
          this.stopped = true;
          return;
        }
        if (m.cost > this.remaining) {
          if (!ratchet)
            this.errs.push(
              fieldErrors.invalid(
                textOf(at),
                rules.schemaType,
                'messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run',
              ),
            );
          this.stopped = true;
          return;
        }
        this.remaining -= m.cost;
        if (m.error === undefined && typeof m.value === 'string') {
          const trimmed = m.value.trim();
          if (trimmed !== '' && !/\n/.test(trimmed) && Buffer.byteLength(trimmed) <= MAX_MESSAGE_BYTES) detail = trimmed;
        }
      }
      detail ??= ruleMessageOrDefault(compiled);
      if (ratchet) continue;
      this.errs.push(errorForReason(textOf(at), rules.schemaType, detail, compiled.rule.reason));
    }
  }
}

function toInput(value: unknown, rules: NodeRules): unknown {
  return toCelInput(value, rules.type);
}

/** An optional oldSelf (`optionalOldSelf: true`): the value, or none when there is no old value. */
function optionalOf(old: unknown): unknown {
  return old === undefined ? null : old;
}

function ruleErrorString(c: CompiledRule): string {
  const message = typeof c.rule.message === 'string' ? c.rule.message : '';
  return message.length > 0 ? message.trim() : String(c.rule.rule ?? '').trim();
}

function ruleMessageOrDefault(c: CompiledRule): string {
  const message = typeof c.rule.message === 'string' ? c.rule.message : '';
  return message.length === 0 ? `failed rule: ${ruleErrorString(c)}` : message.trim();
}

function errorForReason(path: string, schemaType: string, detail: string, reason: string | undefined): FieldError {
  switch (reason) {
    case 'FieldValueForbidden':
      return fieldErrors.forbidden(path, detail);
    case 'FieldValueRequired':
      return fieldErrors.required(path, detail);
    case 'FieldValueDuplicate':
      return fieldErrors.duplicate(path, schemaType);
    default:
      return fieldErrors.invalid(path, schemaType, detail);
  }
}

function keyCorrelation(
  parent: Correlation | undefined,
  value: unknown,
  oldV: unknown,
  oldObj: Record<string, unknown> | undefined,
  k: string,
): Correlation | undefined {
  if (!parent) return undefined;
  const anchor = parent.correlated ? parent : parent.parent;
  if (!parent.correlated || !oldObj || !Object.hasOwn(oldObj, k)) return { correlated: false, value, old: undefined, parent: anchor };
  return { correlated: true, value, old: oldV, parent: anchor };
}

function itemCorrelation(parent: Correlation | undefined, value: unknown, oldItem: unknown): Correlation | undefined {
  if (!parent) return undefined;
  const anchor = parent.correlated ? parent : parent.parent;
  if (!parent.correlated || oldItem === undefined) return { correlated: false, value, old: undefined, parent: anchor };
  return { correlated: true, value, old: oldItem, parent: anchor };
}

/** For a `map` list, the old item with the same keys as a new one; other lists' items do not correlate. */
function correlateMapList(node: SchemaNode, old: unknown[]): ((item: unknown) => unknown) | undefined {
  const keys = node.listType === 'map' ? node.listMapKeys : undefined;
  if (!keys || keys.length === 0) return undefined;
  const keyOf = (item: unknown): string | undefined => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) return undefined;
    const o = item as Record<string, unknown>;
    const items = node.items!;
    return JSON.stringify(keys.map((k) => (Object.hasOwn(o, k) ? o[k] : items.properties?.get(k)?.default)));
  };
  const byKey = new Map<string, unknown>();
  for (const item of old) {
    const k = keyOf(item);
    if (k !== undefined && !byKey.has(k)) byKey.set(k, item);
  }
  return (item) => {
    const k = keyOf(item);
    return k === undefined ? undefined : byKey.get(k);
  };
}

/** The path a caller passes (none for a custom resource). */
function basePath(fldPath: FieldPath | string | undefined): string {
  return fldPath === undefined ? '' : String(fldPath);
}

/** The rules of a create: every rule at every node the object has. */
export function validateRules(node: SchemaNode, value: unknown, fldPath?: FieldPath | string): FieldError[] {
  if (!subtreeHasRules(node)) return [];
  const run = new Run(false);
  run.validate(node, basePath(fldPath), value, undefined, undefined, true);
  return run.errs;
}

/** The rules of an update: `oldSelf` correlated, errors of unchanged values ratcheted. */
export function validateRulesUpdate(node: SchemaNode, value: unknown, old: unknown, fldPath?: FieldPath | string): FieldError[] {
  if (!subtreeHasRules(node)) return [];
  const run = new Run(true);
  run.validate(node, basePath(fldPath), value, old, { correlated: true, value, old, parent: undefined }, true);
  return run.errs;
}

/**
 * upstream's hasBlockingErr: type, required, enum, too long and too many errors leave the
 * object unfit for rules, which are then not run; one error says so.
 */
export function blockingError(errs: readonly FieldError[]): FieldError | undefined {
  const blocking = errs.some(
    (e) =>
      e.type === 'FieldValueNotSupported' ||
      e.type === 'FieldValueRequired' ||
      e.type === 'FieldValueTooLong' ||
      e.type === 'FieldValueTooMany' ||
      e.type === 'FieldValueTypeInvalid',
  );
  return blocking
    ? fieldErrors.invalid('', null, 'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation')
    : undefined;
}
