/**
 * ABAC, upstream's `--authorization-mode=ABAC` over `--authorization-policy-file`: a file of one
 * JSON policy per line, each allowing one subject (a user, a group, or every authenticated user)
 * reads or everything on one API group / resource / namespace, or on non-resource paths. The
 * first matching policy allows; none matching is no opinion ("No policy matched."). ABAC never
 * denies. Policies are read once, at start-up, as upstream does.
 *
 * Lines are `{"apiVersion": "abac.authorization.<vendor>.io/v1beta1", "kind": "Policy", "spec":
 * {...}}` or the unversioned v0 form (the spec's fields at the top level); both are converted to
 * one internal form here, with upstream's conversion rules, so matching sees only that.
 */
import { readFileSync } from 'node:fs';
import type { Naming } from '../naming';
import { AUTHENTICATED_GROUP } from '../authn/users';
import { isObject } from '../util/json-values';
import type { AuthorizationAttributes, Authorizer, Decision } from './types';

/**
 * One policy in upstream's internal form (after conversion from v0 or v1beta1). Empty strings
 * are exact values, not wildcards: an empty namespace matches only cluster-scoped requests, an
 * empty API group only the core group, and a policy without user and group matches no one.
 */
export interface AbacPolicy {
  user: string;
  group: string;
  /** Only get, list and watch (upstream's read-only verbs); otherwise every verb. */
  readonly: boolean;
  apiGroup: string;
  resource: string;
  namespace: string;
  /** Exact, `*`, or a prefix followed by `*`. */
  nonResourcePath: string;
}

const SPEC_FIELDS = ['user', 'group', 'apiGroup', 'resource', 'namespace', 'nonResourcePath'] as const;
const V0_FIELDS = ['user', 'group', 'resource', 'namespace'] as const;

/** The policy file's API group: upstream names it in the label-key domain, not the API-group domain. */
export function abacGroup(naming: Naming): string {
  return `abac.authorization.${naming.keyDomain}`;
}

/** A problem with one line; `loadAbacPolicy` adds the file, line number and text. */
class LineError extends Error {}

/** A string field as Go decodes it: absent or null is empty, anything but a string is an error. */
function stringField(obj: Record<string, unknown>, field: string): string {
  const value = obj[field];
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new LineError(`${field}: expected a string, got ${JSON.stringify(value)}`);
  return value;
}

function boolField(obj: Record<string, unknown>, field: string): boolean {
  const value = obj[field];
  if (value === undefined || value === null) return false;
  if (typeof value !== 'boolean') throw new LineError(`${field}: expected a boolean, got ${JSON.stringify(value)}`);
  return value;
}

/** Upstream's v1beta1 conversion: `*` as user or group means every authenticated user. */
function fromV1beta1(obj: Record<string, unknown>): AbacPolicy {
  const rawSpec = obj.spec ?? {};
  if (!isObject(rawSpec)) throw new LineError(`spec: expected an object, got ${JSON.stringify(rawSpec)}`);
  const spec = Object.fromEntries(SPEC_FIELDS.map((f) => [f, stringField(rawSpec, f)])) as Record<(typeof SPEC_FIELDS)[number], string>;
  const policy: AbacPolicy = { ...spec, readonly: boolField(rawSpec, 'readonly') };
  if (policy.user === '*' || policy.group === '*') return { ...policy, user: '', group: AUTHENTICATED_GROUP };
  return policy;
}

/**
 * Upstream's v0 conversion: no user and no group, or `*` for either, means every authenticated
 * user; an empty namespace or resource means all; every API group; and a line with neither
 * namespace nor resource also allows every non-resource path.
 */
function fromV0(obj: Record<string, unknown>): AbacPolicy {
  const { user, group, resource, namespace } = Object.fromEntries(V0_FIELDS.map((f) => [f, stringField(obj, f)])) as Record<(typeof V0_FIELDS)[number], string>;
  const everyone = (!user && !group) || user === '*' || group === '*';
  return {
    user: everyone ? '' : user,
    group: everyone ? AUTHENTICATED_GROUP : group,
    readonly: boolField(obj, 'readonly'),
    apiGroup: '*',
    resource: resource || '*',
    namespace: namespace || '*',
    nonResourcePath: !resource && !namespace ? '*' : '',
  };
}

/**
 * Which form a line is in, as upstream's decoder decides: `Policy` in `<group>/v1beta1`, or v0 —
 * with no apiVersion and no kind (the legacy unversioned line), or either spelled as v0's
 * (`<group>/v0`, `Policy`). Anything else names a type upstream does not know.
 */
function decodeLine(text: string, group: string): AbacPolicy {
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch (err) {
    throw new LineError(`not valid JSON: ${(err as Error).message}`);
  }
  if (!isObject(obj)) throw new LineError('expected a JSON object');
  const apiVersion = stringField(obj, 'apiVersion');
  const kind = stringField(obj, 'kind');
  if (apiVersion === `${group}/v1beta1` && kind === 'Policy') return fromV1beta1(obj);
  if ((apiVersion === '' || apiVersion === `${group}/v0`) && (kind === '' || kind === 'Policy')) return fromV0(obj);
  throw new LineError(`no kind ${JSON.stringify(kind)} is registered for version ${JSON.stringify(apiVersion)}`);
}

/**
 * The policies of a policy file's `text` (`file` names it in errors). Blank lines and lines
 * starting with `#` are skipped; any other line that is not a policy fails the whole file with
 * upstream's message: `error reading policy file <file>, line <n>: <line>: <reason>`.
 */
export function loadAbacPolicy(text: string, file: string, naming: Naming): AbacPolicy[] {
  const group = abacGroup(naming);
  const policies: AbacPolicy[] = [];
  // Lines as Go's line scanner yields them: split on \n, a trailing \r dropped.
  text.split('\n').forEach((raw, index) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    try {
      policies.push(decodeLine(line, group));
    } catch (err) {
      if (!(err instanceof LineError)) throw err;
      throw new Error(`error reading policy file ${file}, line ${index + 1}: ${line}: ${err.message}`);
    }
  });
  return policies;
}

/** `loadAbacPolicy` over the file at `file` (read synchronously: it is a start-up flag). */
export function readAbacPolicyFile(file: string, naming: Naming): AbacPolicy[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`error reading policy file ${file}: ${(err as Error).message}`);
  }
  return loadAbacPolicy(text, file, naming);
}

/** Upstream's subjectMatches: a user, if given, must match; a group, if given, must be held; one of them must be given. */
function subjectMatches(p: AbacPolicy, user: AuthorizationAttributes['user']): boolean {
  if (!p.user && !p.group) return false;
  if (p.user && p.user !== '*' && p.user !== user.username) return false;
  if (p.group && p.group !== '*' && !user.groups.includes(p.group)) return false;
  return true;
}

const READ_ONLY_VERBS: ReadonlySet<string> = new Set(['get', 'list', 'watch']);

function verbMatches(p: AbacPolicy, verb: string): boolean {
  return !p.readonly || READ_ONLY_VERBS.has(verb);
}

const wildcardOrEqual = (pattern: string, value: string): boolean => pattern === '*' || pattern === value;

/** Subresources are not matched: a policy on `pods` covers `pods/log`, as upstream. */
function resourceMatches(p: AbacPolicy, a: AuthorizationAttributes): boolean {
  return wildcardOrEqual(p.namespace, a.namespace) && wildcardOrEqual(p.resource, a.resource) && wildcardOrEqual(p.apiGroup, a.apiGroup);
}

/** `*`, the exact path, or a path starting with what precedes a trailing `*` (upstream trims every trailing `*`). */
function nonResourceMatches(p: AbacPolicy, path: string): boolean {
  if (wildcardOrEqual(p.nonResourcePath, path)) return true;
  return p.nonResourcePath.endsWith('*') && path.startsWith(p.nonResourcePath.replace(/\*+$/, ''));
}

/** Does `p` allow the request? Its resource fields never match a non-resource request, nor its path a resource request. */
export function abacPolicyAllows(p: AbacPolicy, a: AuthorizationAttributes): boolean {
  if (!subjectMatches(p, a.user) || !verbMatches(p, a.verb)) return false;
  return a.isResourceRequest ? resourceMatches(p, a) : nonResourceMatches(p, a.path);
}

/** The ABAC authorizer over `policies`: allow on the first match, otherwise no opinion. */
export function abacAuthorizer(policies: readonly AbacPolicy[]): Authorizer {
  return {
    authorize(a): Decision {
      return policies.some((p) => abacPolicyAllows(p, a)) ? { decision: 'allow' } : { decision: 'noOpinion', reason: 'No policy matched.' };
    },
  };
}
