/**
 * Upstream's audit Policy (`audit.<domain>/v1`, `--audit-policy-file`): an ordered list of rules;
 * the first rule a request matches decides its level (None, Metadata, Request,
 * RequestResponse) and the stages left out. A request no rule matches is not audited.
 */
import YAML from 'yaml';
import type { UserInfo } from '../../core';
import type { Naming } from '../../naming';
import type { RequestInfo } from '../types';

export type AuditLevel = 'None' | 'Metadata' | 'Request' | 'RequestResponse';
export type AuditStage = 'RequestReceived' | 'ResponseStarted' | 'ResponseComplete' | 'Panic';

const LEVELS: readonly AuditLevel[] = ['None', 'Metadata', 'Request', 'RequestResponse'];
const STAGES: readonly AuditStage[] = ['RequestReceived', 'ResponseStarted', 'ResponseComplete', 'Panic'];

interface GroupResources {
  group: string;
  resources: string[];
  resourceNames: string[];
}

export interface AuditRule {
  level: AuditLevel;
  users: string[];
  userGroups: string[];
  verbs: string[];
  resources: GroupResources[];
  namespaces: string[];
  nonResourceURLs: string[];
  omitStages?: AuditStage[];
  omitManagedFields?: boolean;
}

export interface AuditPolicy {
  rules: AuditRule[];
  omitStages: AuditStage[];
  omitManagedFields: boolean;
}

/** What a request gets: its level, and the stages not recorded. */
export interface AuditDecision {
  level: AuditLevel;
  omitStages: ReadonlySet<AuditStage>;
  omitManagedFields: boolean;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Parse and check a policy document (YAML or JSON); errors name the field as upstream's validation does. */
export function parseAuditPolicy(text: string, naming: Naming): AuditPolicy {
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    throw new Error(`failed decoding: ${(err as Error).message}`);
  }
  if (!isObj(doc)) throw new Error('failed decoding: the policy is not an object');
  const group = naming.group('audit');
  const apiVersion = doc.apiVersion;
  if (apiVersion !== `${group}/v1` || doc.kind !== 'Policy') {
    throw new Error(`failed decoding: unsupported policy ${JSON.stringify(apiVersion)} ${JSON.stringify(doc.kind)}: want apiVersion ${group}/v1, kind Policy`);
  }
  const errors: string[] = [];
  const strings = (v: unknown, path: string): string[] => {
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || v.some((s) => typeof s !== 'string')) {
      errors.push(`${path}: Invalid value: must be a list of strings`);
      return [];
    }
    return v as string[];
  };
  const stages = (v: unknown, path: string): AuditStage[] =>
    strings(v, path).filter((s, i) => {
      if ((STAGES as readonly string[]).includes(s)) return true;
      errors.push(`${path}[${i}]: Unsupported value: "${s}": supported values: "${STAGES.join('", "')}"`);
      return false;
    }) as AuditStage[];
  const rawRules = Array.isArray(doc.rules) ? doc.rules : [];
  if (rawRules.length === 0) errors.push('rules: Required value: at least one rule is required');
  const rules = rawRules.map((raw: unknown, i: number): AuditRule => {
    const path = `rules[${i}]`;
    const r = isObj(raw) ? raw : {};
    const level = r.level as AuditLevel;
    if (!LEVELS.includes(level))
      errors.push(
        `${path}.level: ${level === undefined ? 'Required value' : `Unsupported value: "${String(level)}": supported values: "${LEVELS.join('", "')}"`}`,
      );
    const resources = (Array.isArray(r.resources) ? r.resources : []).map((g: unknown) => {
      const gr = isObj(g) ? g : {};
      return {
        group: typeof gr.group === 'string' ? gr.group : '',
        resources: strings(gr.resources, `${path}.resources.resources`),
        resourceNames: strings(gr.resourceNames, `${path}.resources.resourceNames`),
      };
    });
    const nonResourceURLs = strings(r.nonResourceURLs, `${path}.nonResourceURLs`);
    if (nonResourceURLs.length > 0 && (resources.length > 0 || strings(r.namespaces, '').length > 0)) {
      errors.push(`${path}.nonResourceURLs: Invalid value: rules cannot apply to both regular resources and non-resource URLs`);
    }
    for (const [j, u] of nonResourceURLs.entries()) {
      if (u.includes('*') && !u.endsWith('*'))
        errors.push(`${path}.nonResourceURLs[${j}]: Invalid value: "${u}": non-resource URL wildcards must be the last character`);
    }
    return {
      level,
      users: strings(r.users, `${path}.users`),
      userGroups: strings(r.userGroups, `${path}.userGroups`),
      verbs: strings(r.verbs, `${path}.verbs`),
      resources,
      namespaces: strings(r.namespaces, `${path}.namespaces`),
      nonResourceURLs,
      ...(r.omitStages !== undefined ? { omitStages: stages(r.omitStages, `${path}.omitStages`) } : {}),
      ...(typeof r.omitManagedFields === 'boolean' ? { omitManagedFields: r.omitManagedFields } : {}),
    };
  });
  const omitStages = stages(doc.omitStages, 'omitStages');
  if (errors.length) throw new Error(errors.join(', '));
  return { rules, omitStages, omitManagedFields: doc.omitManagedFields === true };
}

function ruleMatches(rule: AuditRule, user: UserInfo, info: RequestInfo): boolean {
  if (rule.users.length && !rule.users.includes(user.username)) return false;
  if (rule.userGroups.length && !rule.userGroups.some((g) => user.groups.includes(g))) return false;
  if (rule.verbs.length && !rule.verbs.includes(info.verb)) return false;
  if (!info.isResourceRequest) {
    if (rule.resources.length || rule.namespaces.length) return false;
    if (!rule.nonResourceURLs.length) return true;
    return rule.nonResourceURLs.some((u) => (u.endsWith('*') ? info.path.startsWith(u.slice(0, -1)) : info.path === u));
  }
  if (rule.nonResourceURLs.length) return false;
  if (rule.namespaces.length && !rule.namespaces.includes(info.namespace)) return false;
  if (!rule.resources.length) return true;
  const full = info.subresource ? `${info.resource}/${info.subresource}` : info.resource;
  return rule.resources.some((gr) => {
    if (gr.group !== info.apiGroup) return false;
    const resourceOk =
      !gr.resources.length ||
      gr.resources.some(
        (r) =>
          r === full ||
          r === '*' ||
          r === '*/*' ||
          (r === `${info.resource}/*` && info.subresource !== '') ||
          (r === `*/${info.subresource}` && info.subresource !== ''),
      );
    if (!resourceOk) return false;
    return !gr.resourceNames.length || gr.resourceNames.includes(info.name);
  });
}

/** The level and omitted stages of a request: the first matching rule's, else None. */
export function evaluatePolicy(policy: AuditPolicy, user: UserInfo, info: RequestInfo): AuditDecision {
  for (const rule of policy.rules) {
    if (!ruleMatches(rule, user, info)) continue;
    return {
      level: rule.level,
      omitStages: new Set([...policy.omitStages, ...(rule.omitStages ?? [])]),
      omitManagedFields: rule.omitManagedFields ?? policy.omitManagedFields,
    };
  }
  return { level: 'None', omitStages: new Set(), omitManagedFields: false };
}
