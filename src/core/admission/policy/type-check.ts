/**
 * Type checking of a ValidatingAdmissionPolicy's expressions against the served schema, as
 * upstream's policy status controller does: for every kind the policy's resource rules name
 * (wildcards are not resolved), each field an expression selects from `object` or `oldObject`
 * (and from `params`, against the parameter kind) must exist. Each problem is a warning worded
 * as cel-go's checker words it, with the expression and a caret under the selection:
 *
 *     apps/v1, Kind=ReplicaSet: ERROR: <input>:1:12: undefined field 'replicass'
 *      | object.spec.replicass > 1
 *      | ...........^
 *
 * Only selections through structs are checked: maps (labels, data), lists and the loop
 * variables of macros are left to run time, as they are `dyn` enough in upstream's checker too.
 */
import { cel } from '../../../util/cel';
import type { Naming } from '../../../naming';
import { type SchemaType, schemaRegistry } from '../../../schema/registry';
import type { ValueType } from '../../../schema/types';
import type { ResourceDefinition } from '../../resources';
import type { ValidatingAdmissionPolicy } from './types';

export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

interface Expr {
  id: bigint;
  // biome-ignore lint/suspicious/noExplicitAny: the parsed CEL tree, whose shape each case below reads as upstream's protobuf Expr
  exprKind: { case: string | undefined; value?: any };
}

interface Checked {
  gvk: string;
  type: SchemaType;
}

function typeOf(value: ValueType, registry: ReturnType<typeof schemaRegistry>): SchemaType | undefined {
  return value.kind === 'message' ? registry.findType(value.type) : undefined;
}

/** Problems in one expression: undefined fields of struct types along selections from the roots. */
function problems(
  expression: string,
  roots: Record<string, SchemaType | undefined>,
  registry: ReturnType<typeof schemaRegistry>,
): Array<{ offset: number; message: string }> {
  let parsed;
  try {
    parsed = cel().lib.parse(expression);
  } catch {
    return []; // Compile errors are refused when the policy is written.
  }
  const positions = parsed.sourceInfo?.positions ?? {};
  const out: Array<{ offset: number; message: string }> = [];
  /** The struct type an expression evaluates to, where known. */
  const visit = (e: Expr | undefined, shadowed: ReadonlySet<string>): SchemaType | undefined => {
    if (!e) return undefined;
    const v = e.exprKind.value;
    switch (e.exprKind.case) {
      case 'identExpr':
        return shadowed.has(v.name) ? undefined : roots[v.name];
      case 'selectExpr': {
        const operand = visit(v.operand, shadowed);
        if (!operand) return undefined;
        const prop = operand.property.get(v.field);
        if (!prop && operand.typeMeta && (v.field === 'kind' || v.field === 'apiVersion')) return undefined;
        if (!prop) {
          out.push({ offset: Number((positions as Record<string, number>)[String(e.id)] ?? 0), message: `undefined field '${v.field}'` });
          return undefined;
        }
        return typeOf(prop.field.type, registry);
      }
      case 'callExpr':
        visit(v.target, shadowed);
        for (const a of v.args ?? []) visit(a, shadowed);
        return undefined;
      case 'listExpr':
        for (const a of v.elements ?? []) visit(a, shadowed);
        return undefined;
      case 'structExpr':
        for (const entry of v.entries ?? []) {
          if (entry.keyKind?.case === 'mapKey') visit(entry.keyKind.value, shadowed);
          visit(entry.value, shadowed);
        }
        return undefined;
      case 'comprehensionExpr': {
        visit(v.iterRange, shadowed);
        visit(v.accuInit, shadowed);
        const inner = new Set(shadowed);
        for (const name of [v.iterVar, v.iterVar2, v.accuVar]) if (name) inner.add(name);
        visit(v.loopCondition, inner);
        visit(v.loopStep, inner);
        visit(v.result, inner);
        return undefined;
      }
      default:
        return undefined;
    }
  };
  visit(parsed.expr as Expr, new Set());
  return out;
}

function caret(expression: string, offset: number): { line: number; column: number; text: string } {
  const before = expression.slice(0, offset);
  const line = before.split('\n').length;
  const lineStart = before.lastIndexOf('\n') + 1;
  const column = offset - lineStart;
  const text = expression.split('\n')[line - 1] ?? '';
  return { line, column, text };
}

/** The kinds a policy's rules name exactly, as served definitions. */
function matchedKinds(policy: ValidatingAdmissionPolicy, resources: readonly ResourceDefinition[]): ResourceDefinition[] {
  const out: ResourceDefinition[] = [];
  for (const rule of policy.spec?.matchConstraints?.resourceRules ?? []) {
    for (const group of rule.apiGroups ?? []) {
      for (const version of rule.apiVersions ?? []) {
        for (const resource of rule.resources ?? []) {
          if ([group, version, resource].some((x) => x.includes('*'))) continue;
          const def = resources.find((d) => d.group === group && d.version === version && d.resource === resource.split('/')[0]);
          if (def && !out.includes(def)) out.push(def);
        }
      }
    }
  }
  return out;
}

/** The warnings of every checked expression of `policy`, in field order. */
export function typeCheckPolicy(policy: ValidatingAdmissionPolicy, resources: readonly ResourceDefinition[], naming: Naming): ExpressionWarning[] {
  const registry = schemaRegistry(naming);
  const spec = policy.spec ?? {};
  const paramKind = spec.paramKind;
  const params = paramKind ? registry.kind(paramKind.apiVersion ?? '', paramKind.kind ?? '')?.type : undefined;
  const kinds: Checked[] = [];
  for (const def of matchedKinds(policy, resources)) {
    const apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
    const type = registry.kind(apiVersion, def.kind)?.type;
    if (type) kinds.push({ gvk: `${def.group}/${def.version}, Kind=${def.kind}`, type });
  }
  if (kinds.length === 0) return [];
  const expressions: Array<[string, string]> = [];
  (spec.validations ?? []).forEach((v, i) => {
    expressions.push([`spec.validations[${i}].expression`, v.expression]);
    if (v.messageExpression) expressions.push([`spec.validations[${i}].messageExpression`, v.messageExpression]);
  });
  (spec.auditAnnotations ?? []).forEach((a, i) => expressions.push([`spec.auditAnnotations[${i}].valueExpression`, a.valueExpression]));
  (spec.matchConditions ?? []).forEach((m, i) => expressions.push([`spec.matchConditions[${i}].expression`, m.expression]));
  const warnings: ExpressionWarning[] = [];
  for (const [fieldRef, expression] of expressions) {
    const parts: string[] = [];
    for (const { gvk, type } of kinds) {
      for (const p of problems(expression ?? '', { object: type, oldObject: type, params }, registry)) {
        const { line, column, text } = caret(expression, p.offset);
        parts.push(`${gvk}: ERROR: <input>:${line}:${column + 1}: ${p.message}\n | ${text}\n | ${'.'.repeat(column)}^`);
      }
    }
    if (parts.length > 0) warnings.push({ fieldRef, warning: parts.join('\n') });
  }
  return warnings;
}
