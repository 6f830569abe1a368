/**
 * What a CustomResourceDefinition's write asks of its validation rules, as upstream's
 * ValidateCustomResourceDefinitionOpenAPISchema does once the schema is structural (its CEL
 * part): at every node of the structural spine (properties, additionalProperties, items; not
 * inside allOf/anyOf/oneOf/not) whose subtree has no schema error, each rule compiled with
 * `self` typed from the node, and refused at `…x-…-validations[i].rule` when it does not compile
 * or its estimated cost times the node's cardinality passes the per-expression limit; its
 * messageExpression likewise at `….messageExpression`; a rule naming `oldSelf` under a list that
 * is not a `map` list; `optionalOldSelf` on a rule without `oldSelf`. Then the whole schema's
 * estimated total against the per-definition limit, naming its four most expensive rules.
 * Errors come in upstream's order: children before the node, after every schema error.
 */
import { type FieldError, type FieldPath, fieldErrors } from '../../field-errors';
import { invalidWithRendering } from '../../go-format';
import { type SchemaNode, schemaNode } from '../node';
import type { JSONSchemaProps, SchemaExtensions, ValidationRule } from '../types';
import { nodeRules } from './compile';
import { MAX_COST } from './cost';
import { celTypeOf } from './types';

/** apiextensions' StaticEstimatedCostLimit: the most one rule may be estimated to cost (times its cardinality). */
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
/** apiextensions' StaticEstimatedCRDCostLimit: the most all of a schema's rules may be estimated to cost. */
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;

/** upstream's getCostErrorMessage. */
export function costErrorMessage(costName: string, cost: number, limit: number): string {
  const factor = cost / limit;
  const text = factor > 100 ? 'more than 100x' : factor < 1.5 ? `${factor.toFixed(6)}x` : `${factor.toFixed(1)}x`;
  return `${costName} exceeds budget by factor of ${text} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}

const goQuote = (s: string): string => JSON.stringify(s);

/** The rule as Go's %#v prints upstream's internal ValidationRule. */
function renderRule(rule: ValidationRule): string {
  const reason =
    rule.reason === undefined || rule.reason === null
      ? '(*apiextensions.FieldValueErrorReason)(nil)'
      : `(*apiextensions.FieldValueErrorReason)(${goQuote(rule.reason)})`;
  const optional = rule.optionalOldSelf === undefined || rule.optionalOldSelf === null ? '(*bool)(nil)' : `(*bool)(${rule.optionalOldSelf})`;
  return `apiextensions.ValidationRule{Rule:${goQuote(String(rule.rule ?? ''))}, Message:${goQuote(String(rule.message ?? ''))}, MessageExpression:${goQuote(
    String(rule.messageExpression ?? ''),
  )}, Reason:${reason}, FieldPath:${goQuote(String(rule.fieldPath ?? ''))}, OptionalOldSelf:${optional}}`;
}

interface Total {
  total: number;
  mostExpensive: { path: FieldPath; cost: number }[];
}

function observe(t: Total, path: FieldPath, cost: number): void {
  t.total = Math.min(MAX_COST, t.total + cost);
  if (cost < STATIC_ESTIMATED_CRD_COST_LIMIT / 100) return;
  t.mostExpensive.push({ path, cost });
  t.mostExpensive.sort((a, b) => b.cost - a.cost);
  if (t.mostExpensive.length > 4) t.mostExpensive.length = 4;
}

/** Whether a schema error lies at `path` or under it. */
function errorsUnder(schemaErrors: readonly FieldError[], path: string): boolean {
  return schemaErrors.some((e) => e.field === path || (e.field.startsWith(path) && (e.field[path.length] === '.' || e.field[path.length] === '[')));
}

const hasRulesBelow = (s: JSONSchemaProps | undefined, ext: SchemaExtensions): boolean => {
  if (!s || typeof s !== 'object') return false;
  const rules = s[ext.validations as `x-${string}`];
  if (Array.isArray(rules) && rules.length > 0) return true;
  if (s.properties && Object.values(s.properties).some((p) => hasRulesBelow(p, ext))) return true;
  if (typeof s.additionalProperties === 'object' && s.additionalProperties !== null && hasRulesBelow(s.additionalProperties, ext)) return true;
  return !Array.isArray(s.items) && hasRulesBelow(s.items as JSONSchemaProps | undefined, ext);
};

/**
 * The CEL errors of a structural schema's rules (upstream's CELErrors), then the per-definition
 * total; `schemaErrors` are the OpenAPI checks' errors (a node with one at or under it is not
 * compiled, as upstream skips it). `suppressPerExpressionCost`: a definition's update that
 * leaves this version's schema as it was does not refuse a rule for its own estimated cost
 * (upstream's suppressExpressionCostForUnchangedSchema); the total still counts.
 */
export function validateSchemaRules(
  schema: JSONSchemaProps,
  ext: SchemaExtensions,
  path: FieldPath,
  schemaErrors: readonly FieldError[],
  { suppressPerExpressionCost = false }: { suppressPerExpressionCost?: boolean } = {},
): FieldError[] {
  if (!hasRulesBelow(schema, ext)) return [];
  const errs: FieldError[] = [];
  const total: Total = { total: 0, mostExpensive: [] };
  walk(schemaNode(schema, ext, 'resource'), path, true, 1, undefined, schemaErrors, errs, total, !suppressPerExpressionCost);
  if (total.total > STATIC_ESTIMATED_CRD_COST_LIMIT) {
    for (const e of total.mostExpensive)
      errs.push(fieldErrors.forbidden(e.path, 'contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema'));
    errs.push(
      fieldErrors.forbidden(
        path,
        costErrorMessage(`${ext.validations} estimated rule cost total for entire OpenAPIv3 schema`, total.total, STATIC_ESTIMATED_CRD_COST_LIMIT),
      ),
    );
  }
  return errs;
}

function walk(
  node: SchemaNode,
  path: FieldPath,
  root: boolean,
  cardinality: number,
  forbidOldSelf: FieldPath | undefined,
  schemaErrors: readonly FieldError[],
  errs: FieldError[],
  total: Total,
  checkExpressionCost: boolean,
): void {
  const type = celTypeOf(node, root);
  if (node.additional) {
    walk(
      node.additional,
      path.child('additionalProperties'),
      false,
      Math.min(MAX_COST, cardinality * type.maxElements),
      forbidOldSelf,
      schemaErrors,
      errs,
      total,
      checkExpressionCost,
    );
  }
  if (node.properties) {
    const mapType = node.schema[node.ext.mapType as `x-${string}`];
    const correlatable = mapType === undefined || mapType === null || mapType === 'granular' || mapType === 'atomic';
    for (const name of node.propertyNames) {
      walk(
        node.properties.get(name)!,
        path.child('properties').key(name),
        false,
        cardinality,
        forbidOldSelf ?? (correlatable ? undefined : path),
        schemaErrors,
        errs,
        total,
        checkExpressionCost,
      );
    }
  }
  if (node.items) {
    const items = node.items;
    walk(
      items,
      path.child('items'),
      false,
      Math.min(MAX_COST, cardinality * type.maxElements),
      forbidOldSelf ?? (node.listType !== 'map' ? path : undefined),
      schemaErrors,
      errs,
      total,
      checkExpressionCost,
    );
  }
  const raw = node.schema[node.ext.validations as `x-${string}`];
  if (!Array.isArray(raw) || raw.length === 0 || errorsUnder(schemaErrors, path.toString())) return;
  const compiled = nodeRules(node, root || node.embedded);
  if (!compiled) return;
  const at = path.child(node.ext.validations);
  compiled.rules.forEach((cr, i) => {
    const rulePath = at.index(i).child('rule');
    const cost = cr.cost === 0 ? 0 : Math.min(MAX_COST, cr.cost * cardinality);
    if (checkExpressionCost && cost > STATIC_ESTIMATED_COST_LIMIT)
      errs.push(fieldErrors.forbidden(rulePath, costErrorMessage('estimated rule cost', cost, STATIC_ESTIMATED_COST_LIMIT)));
    observe(total, rulePath, cost);
    if (cr.error) {
      errs.push(
        cr.error.required ? fieldErrors.required(rulePath, cr.error.detail) : invalidWithRendering(rulePath, cr.rule, renderRule(cr.rule), cr.error.detail),
      );
    }
    const messagePath = at.index(i).child('messageExpression');
    if (cr.messageError) errs.push(invalidWithRendering(messagePath, cr.rule, renderRule(cr.rule), cr.messageError));
    else if (cr.messageProgram) {
      if (checkExpressionCost && cr.messageCost > STATIC_ESTIMATED_COST_LIMIT)
        errs.push(fieldErrors.forbidden(messagePath, costErrorMessage('estimated messageExpression cost', cr.messageCost, STATIC_ESTIMATED_COST_LIMIT)));
      observe(total, messagePath, cr.messageCost);
    }
    if (cr.usesOldSelf) {
      if (forbidOldSelf)
        errs.push(
          fieldErrors.invalid(rulePath, cr.rule.rule, `oldSelf cannot be used on the uncorrelatable portion of the schema within ${forbidOldSelf.toString()}`),
        );
    } else if (cr.rule.optionalOldSelf !== undefined && cr.rule.optionalOldSelf !== null) {
      errs.push(fieldErrors.invalid(at.index(i).child('optionalOldSelf'), cr.rule.optionalOldSelf, 'may not be set if oldSelf is not used in rule'));
    }
  });
}
