/**
 * Which webhooks a write calls, as upstream's generic dispatcher decides: the rules (operation,
 * group, version, resource and subresource, scope), the namespace selector (on the namespace's
 * labels; on a Namespace's own labels; not applied to other cluster-scoped objects), the
 * object selector (on the new or the old object's labels), then the CEL match conditions.
 */
import { labelSelectorMatches } from '../../validation/selectors';
import type { AdmissionAttributes, EquivalentResource } from '../types';
import type { RuleWithOperations, Webhook } from './types';

const has = (list: readonly string[] | undefined, value: string) => (list ?? []).some((v) => v === '*' || v === value);

function resourceMatches(patterns: readonly string[] | undefined, resource: string, subresource: string): boolean {
  for (const p of patterns ?? []) {
    if (p === '*/*') return true;
    if (p === '*') {
      if (subresource === '') return true;
      continue;
    }
    const slash = p.indexOf('/');
    const res = slash < 0 ? p : p.slice(0, slash);
    const sub = slash < 0 ? '' : p.slice(slash + 1);
    if ((res === '*' || res === resource) && (sub === '*' || sub === subresource)) return true;
  }
  return false;
}

export function ruleMatches(rule: RuleWithOperations, a: AdmissionAttributes): boolean {
  if (!has(rule.operations, a.operation)) return false;
  if (!has(rule.apiGroups, a.group)) return false;
  if (!has(rule.apiVersions, a.version)) return false;
  if (!resourceMatches(rule.resources, a.resource, a.subresource)) return false;
  const scope = rule.scope ?? '*';
  if (scope === 'Cluster') return !a.namespace;
  if (scope === 'Namespaced') return !!a.namespace;
  return true;
}

export function rulesMatch(rules: readonly RuleWithOperations[] | undefined, a: AdmissionAttributes): boolean {
  return (rules ?? []).some((r) => ruleMatches(r, a));
}

/** The object selector: the labels of the new object or of the stored one. */
export function objectSelectorMatches(webhook: Pick<Webhook, 'objectSelector'>, a: AdmissionAttributes): boolean {
  const selector = webhook.objectSelector ?? {};
  if (!selector.matchLabels && !(selector.matchExpressions ?? []).length) return true;
  return (
    (a.object !== undefined && labelSelectorMatches(selector, a.object.metadata?.labels)) ||
    (a.oldObject !== undefined && labelSelectorMatches(selector, a.oldObject.metadata?.labels))
  );
}

/**
 * The namespace selector, given a way to read a namespace's labels. A Namespace is matched on
 * its own labels; other cluster-scoped objects always match.
 */
export async function namespaceSelectorMatches(
  webhook: Pick<Webhook, 'namespaceSelector'>,
  a: AdmissionAttributes,
  namespaceLabels: (name: string) => Promise<Record<string, string> | undefined>,
): Promise<boolean> {
  const selector = webhook.namespaceSelector ?? {};
  if (!selector.matchLabels && !(selector.matchExpressions ?? []).length) return true;
  if (a.group === '' && a.resource === 'namespaces') {
    return labelSelectorMatches(selector, (a.object ?? a.oldObject)?.metadata?.labels);
  }
  if (!a.namespace) return true;
  return labelSelectorMatches(selector, (await namespaceLabels(a.namespace)) ?? {});
}

/** The admissionregistration types are never sent to webhooks or policies, so a bad one can always be removed. */
export function isExemptFromDynamicAdmission(a: Pick<AdmissionAttributes, 'group' | 'resource'>, admissionGroup: string): boolean {
  return (
    a.group === admissionGroup &&
    (a.resource === 'mutatingwebhookconfigurations' ||
      a.resource === 'validatingwebhookconfigurations' ||
      a.resource === 'validatingadmissionpolicies' ||
      a.resource === 'validatingadmissionpolicybindings')
  );
}

/** `a` as the equivalent version `e` sees it: objects converted, the request's own kind and resource kept. */
export function asEquivalent(a: AdmissionAttributes, e: EquivalentResource): AdmissionAttributes {
  return {
    ...a,
    group: e.group,
    version: e.version,
    kind: e.kind,
    resource: e.resource,
    object: a.object && e.toEquivalent(a.object),
    oldObject: a.oldObject && e.toEquivalent(a.oldObject),
    requested: { group: a.group, version: a.version, kind: a.kind, resource: a.resource },
    toRequested: (obj) => e.fromEquivalent(obj),
    equivalents: undefined,
  };
}

/**
 * The attributes a set of rules is checked with under `matchPolicy` (upstream's default is
 * `Equivalent`): `a` when `matches` takes it; otherwise, with `Equivalent`, `a` converted to
 * the first equivalent version it takes; otherwise undefined. `matches` sees only the request's
 * coordinates for an equivalent version; objects are converted for the one chosen.
 */
export function matchingAttributes(
  a: AdmissionAttributes,
  matchPolicy: string | undefined,
  matches: (a: AdmissionAttributes) => boolean,
): AdmissionAttributes | undefined {
  if (matches(a)) return a;
  if (matchPolicy === 'Exact' || !a.equivalents) return undefined;
  const e = a.equivalents.find((eq) => matches({ ...a, group: eq.group, version: eq.version, kind: eq.kind, resource: eq.resource }));
  return e && asEquivalent(a, e);
}
