/**
 * What the four RBAC kinds share (docs/API.md, "RBAC kinds"; upstream's RBAC validation and
 * rbac/v1 defaults): policy rules, role references, subjects, and their defaults.
 */
import type { ApiObject } from '../api';
import { fieldErrors, FieldPath, type FieldError } from '../validation/field-errors';
import { goStringSlice, goStringStruct, invalidWithRendering } from '../validation/go-format';
import { isValidPathSegmentName, validateName } from '../validation/names';
import type { Verb } from './definition';
import { STANDARD_VERBS } from './common';

export interface PolicyRule {
  verbs: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

export interface RoleRef {
  apiGroup: string;
  kind: 'Role' | 'ClusterRole' | string;
  name: string;
}

export interface Subject {
  kind: 'User' | 'Group' | 'ServiceAccount' | string;
  name: string;
  apiGroup?: string;
  namespace?: string;
}

export interface RoleBindingLike extends ApiObject {
  roleRef: RoleRef;
  subjects?: Subject[];
}

export const RBAC_VERSION = 'v1';
export const RBAC_VERBS: readonly Verb[] = STANDARD_VERBS;

/** A rule needs verbs; it is either about resources (with groups and resources) or about non-resource URLs. */
export function validatePolicyRule(rule: PolicyRule, namespaced: boolean, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!rule.verbs?.length) errs.push(fieldErrors.required(path.child('verbs'), 'verbs must contain at least one value'));
  const urls = rule.nonResourceURLs ?? [];
  if (urls.length > 0) {
    if (namespaced) {
      errs.push(invalidWithRendering(path.child('nonResourceURLs'), urls, goStringSlice(urls), 'namespaced rules cannot apply to non-resource URLs'));
    }
    if (rule.apiGroups?.length || rule.resources?.length || rule.resourceNames?.length) {
      errs.push(
        invalidWithRendering(path.child('nonResourceURLs'), urls, goStringSlice(urls), 'rules cannot apply to both regular resources and non-resource URLs'),
      );
    }
    return errs;
  }
  if (!rule.apiGroups?.length) errs.push(fieldErrors.required(path.child('apiGroups'), 'resource rules must supply at least one api group'));
  if (!rule.resources?.length) errs.push(fieldErrors.required(path.child('resources'), 'resource rules must supply at least one resource'));
  return errs;
}

export function validateRules(rules: PolicyRule[] | undefined, namespaced: boolean): FieldError[] {
  return (rules ?? []).flatMap((rule, i) => validatePolicyRule(rule, namespaced, FieldPath.root('rules').index(i)));
}

const ROLE_REF = FieldPath.root('roleRef');

/** The rbac group, one of `kinds`, and a path-segment name. */
export function validateRoleRef(ref: RoleRef | undefined, rbacGroup: string, kinds: readonly string[]): FieldError[] {
  const errs: FieldError[] = [];
  const r = ref ?? ({} as Partial<RoleRef>);
  if (r.apiGroup !== rbacGroup) errs.push(fieldErrors.notSupported(ROLE_REF.child('apiGroup'), r.apiGroup ?? '', [rbacGroup]));
  if (!kinds.includes(r.kind ?? '')) errs.push(fieldErrors.notSupported(ROLE_REF.child('kind'), r.kind ?? '', kinds));
  if (!r.name) errs.push(fieldErrors.required(ROLE_REF.child('name')));
  else errs.push(...isValidPathSegmentName(r.name).map((msg) => fieldErrors.invalid(ROLE_REF.child('name'), r.name, msg)));
  return errs;
}

/** upstream ValidateRoleBindingSubject; cluster-wide bindings need a namespace on service accounts. */
export function validateSubject(subject: Subject, namespacedBinding: boolean, rbacGroup: string, path: FieldPath): FieldError[] {
  const errs: FieldError[] = [];
  if (!subject.name) errs.push(fieldErrors.required(path.child('name')));
  switch (subject.kind) {
    case 'ServiceAccount':
      if (subject.name) {
        for (const msg of validateName(subject.name, 'dns1123Subdomain')) errs.push(fieldErrors.invalid(path.child('name'), subject.name, msg));
      }
      if (subject.apiGroup) errs.push(fieldErrors.notSupported(path.child('apiGroup'), subject.apiGroup, ['']));
      if (!namespacedBinding && !subject.namespace) errs.push(fieldErrors.required(path.child('namespace')));
      break;
    case 'User':
    case 'Group':
      if (subject.apiGroup !== rbacGroup) errs.push(fieldErrors.notSupported(path.child('apiGroup'), subject.apiGroup ?? '', [rbacGroup]));
      break;
    default:
      errs.push(fieldErrors.notSupported(path.child('kind'), subject.kind ?? '', ['ServiceAccount', 'User', 'Group']));
  }
  return errs;
}

/** roleRef first, then every subject. */
export function validateBinding(binding: RoleBindingLike, namespaced: boolean, rbacGroup: string, kinds: readonly string[]): FieldError[] {
  return [
    ...validateRoleRef(binding.roleRef, rbacGroup, kinds),
    ...(binding.subjects ?? []).flatMap((s, i) => validateSubject(s, namespaced, rbacGroup, FieldPath.root('subjects').index(i))),
  ];
}

/** rbac/v1 defaults: roleRef.apiGroup is the rbac group; subjects' apiGroup '' for service accounts, the rbac group for users and groups. */
export function defaultBinding(binding: RoleBindingLike, rbacGroup: string): void {
  if (binding.roleRef && !binding.roleRef.apiGroup) binding.roleRef.apiGroup = rbacGroup;
  for (const s of binding.subjects ?? []) {
    if (s.apiGroup) continue;
    // Subject.apiGroup is `omitempty` upstream: the empty default of service accounts is not serialized.
    if (s.kind === 'ServiceAccount') delete s.apiGroup;
    else if (s.kind === 'User' || s.kind === 'Group') s.apiGroup = rbacGroup;
  }
}

/** roleRef never changes (docs/API.md, "RBAC kinds"); upstream prints the new one as a Go struct. */
export function validateRoleRefUnchanged(binding: RoleBindingLike, old: RoleBindingLike): FieldError[] {
  const a = binding.roleRef ?? ({} as Partial<RoleRef>);
  const b = old.roleRef ?? ({} as Partial<RoleRef>);
  if ((a.apiGroup ?? '') === (b.apiGroup ?? '') && (a.kind ?? '') === (b.kind ?? '') && (a.name ?? '') === (b.name ?? '')) return [];
  const rendered = goStringStruct('rbac.RoleRef', [
    ['APIGroup', a.apiGroup],
    ['Kind', a.kind],
    ['Name', a.name],
  ]);
  return [invalidWithRendering(ROLE_REF, binding.roleRef, rendered, 'cannot change roleRef')];
}
