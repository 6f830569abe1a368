/**
 * RBAC policy rules as sets of permissions: a rule breaks down into atoms (one verb on one
 * group/resource/name, or on one URL), and upstream's Covers asks whether every atom of the
 * servant rules is held by some owner rule. The escalation check and the reconciliation of the
 * default roles both ask it. The matching primitives (verb, group, resource with subresource
 * wildcards, URL) serve RBAC's decisions and that check alike.
 */
import type { AuthorizationAttributes } from './types';

export interface PolicyRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
}

/** A rule's list holds the value, or `*`. */
export function listHas(list: readonly string[] | undefined, value: string): boolean {
  return !!list && (list.includes('*') || list.includes(value));
}

/** A rule's resources cover `resource` or `resource/subresource`: exactly, `*`, `resource/*`, or a wildcard resource with the same subresource. */
export function resourceCovered(resources: readonly string[] | undefined, resource: string): boolean {
  if (!resources) return false;
  if (resources.includes('*') || resources.includes(resource)) return true;
  const slash = resource.indexOf('/');
  if (slash < 0) return false;
  return resources.includes(`${resource.slice(0, slash)}/*`) || resources.includes(`*${resource.slice(slash)}`);
}

/** A non-resource URL pattern matches the path: `*`, exactly, or a prefix ending in `*`. */
export function nonResourceUrlMatches(pattern: string, path: string): boolean {
  return pattern === '*' || pattern === path || (pattern.endsWith('*') && path.startsWith(pattern.slice(0, -1)));
}

/** Is the rule about the request's resource (or URL), whatever its verbs and resource names? */
export function ruleAbout(a: AuthorizationAttributes, rule: PolicyRule): boolean {
  if (!a.isResourceRequest) return (rule.nonResourceURLs ?? []).some((u) => nonResourceUrlMatches(u, a.path));
  return listHas(rule.apiGroups, a.apiGroup) && resourceCovered(rule.resources, a.subresource ? `${a.resource}/${a.subresource}` : a.resource);
}

/** Upstream's RuleAllows. */
export function ruleAllows(a: AuthorizationAttributes, rule: PolicyRule): boolean {
  if (!listHas(rule.verbs, a.verb) || !ruleAbout(a, rule)) return false;
  if (!a.isResourceRequest) return true;
  const names = rule.resourceNames ?? [];
  return names.length === 0 || names.includes(a.name);
}

/** One atomic permission of a rule. */
export interface Atom {
  verb: string;
  group?: string;
  resource?: string;
  name?: string;
  url?: string;
}

/** The rule broken down, as upstream's BreakdownRule does. */
export function atomsOf(rule: PolicyRule): Atom[] {
  const atoms: Atom[] = [];
  for (const verb of rule.verbs ?? []) {
    for (const url of rule.nonResourceURLs ?? []) atoms.push({ verb, url });
    for (const group of rule.apiGroups ?? []) {
      for (const resource of rule.resources ?? []) {
        const names = rule.resourceNames?.length ? rule.resourceNames : [undefined];
        for (const name of names) atoms.push({ verb, group, resource, ...(name !== undefined ? { name } : {}) });
      }
    }
  }
  return atoms;
}

/** Does `owner` hold `atom`? */
export function coversAtom(owner: PolicyRule, atom: Atom): boolean {
  if (!listHas(owner.verbs, atom.verb)) return false;
  if (atom.url !== undefined) return (owner.nonResourceURLs ?? []).some((u) => nonResourceUrlMatches(u, atom.url!));
  if (!listHas(owner.apiGroups, atom.group!) || !resourceCovered(owner.resources, atom.resource!)) return false;
  const names = owner.resourceNames ?? [];
  return names.length === 0 || (atom.name !== undefined && names.includes(atom.name));
}

/** The atoms of `servant` that no rule of `owner` holds, each as a one-permission rule. */
export function uncoveredRules(owner: readonly PolicyRule[], servant: readonly PolicyRule[]): PolicyRule[] {
  return servant
    .flatMap(atomsOf)
    .filter((atom) => !owner.some((o) => coversAtom(o, atom)))
    .map(atomRule);
}

function atomRule(atom: Atom): PolicyRule {
  if (atom.url !== undefined) return { nonResourceURLs: [atom.url], verbs: [atom.verb] };
  return { apiGroups: [atom.group!], resources: [atom.resource!], ...(atom.name !== undefined ? { resourceNames: [atom.name] } : {}), verbs: [atom.verb] };
}

/** A rule as upstream's CompactString prints it. */
export function compactRule(rule: PolicyRule): string {
  const parts: string[] = [];
  const list = (name: string, values: readonly string[] | undefined) => {
    if (values?.length) parts.push(`${name}:[${values.map((v) => JSON.stringify(v)).join(', ')}]`);
  };
  list('APIGroups', rule.apiGroups);
  list('Resources', rule.resources);
  list('ResourceNames', rule.resourceNames);
  list('NonResourceURLs', rule.nonResourceURLs);
  list('Verbs', rule.verbs);
  return `{${parts.join(', ')}}`;
}

/** The rules of a role object (entries that are not objects are ignored). */
export function rulesOfObject(obj: object | undefined): PolicyRule[] {
  const rules = (obj as { rules?: unknown } | undefined)?.rules;
  return Array.isArray(rules) ? (rules as PolicyRule[]).filter((r) => r && typeof r === 'object') : [];
}
