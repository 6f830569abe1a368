/**
 * rbac/v1 ClusterRole: cluster-wide rules (non-resource URLs allowed) and an optional
 * aggregation rule whose selectors a controller uses to fill `rules` (docs/API.md, "RBAC kinds").
 */
import type { ApiObject } from '../api';
import { fieldErrors, FieldPath, type FieldError } from '../validation/field-errors';
import { GO_NIL, invalidWithRendering } from '../validation/go-format';
import { isConvertibleLabelSelector, validateLabelSelector, type MetaLabelSelector } from '../validation/selectors';
import { defineTyped } from './common';
import type { DefineResource } from './definition';
import { RBAC_VERBS, RBAC_VERSION, validateRules, type PolicyRule } from './rbac-common';

export interface AggregationRule {
  clusterRoleSelectors?: MetaLabelSelector[];
}

export interface ClusterRole extends ApiObject {
  rules?: PolicyRule[];
  aggregationRule?: AggregationRule | null;
}

const SELECTORS = FieldPath.root('aggregationRule', 'clusterRoleSelectors');

export function validateAggregationRule(rule: AggregationRule | null | undefined): FieldError[] {
  if (!rule) return [];
  const errs: FieldError[] = [];
  const selectors = rule.clusterRoleSelectors ?? [];
  if (selectors.length === 0) errs.push(fieldErrors.required(SELECTORS, 'at least one clusterRoleSelector required if aggregationRule is non-nil'));
  selectors.forEach((selector, i) => {
    errs.push(...validateLabelSelector(selector, SELECTORS.index(i)));
    // Upstream prints the (nil) converted selector here, hence "null".
    if (!isConvertibleLabelSelector(selector)) errs.push(invalidWithRendering(SELECTORS.index(i), null, GO_NIL, 'invalid label selector.'));
  });
  return errs;
}

export const defineClusterRoles: DefineResource = (naming) =>
  defineTyped<ClusterRole>({
    group: naming.groups.rbac,
    version: RBAC_VERSION,
    kind: 'ClusterRole',
    resource: 'clusterroles',
    singular: 'clusterrole',
    namespaced: false,
    verbs: RBAC_VERBS,
    nameRule: 'pathSegment',
    allowCreateOnUpdate: true,
    allowUnconditionalUpdate: true,

    validate: (role) => [...validateRules(role.rules, false), ...validateAggregationRule(role.aggregationRule)],
  });
