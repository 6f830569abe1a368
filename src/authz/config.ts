/**
 * `--authorization-config`: an AuthorizationConfiguration (`apiserver.config.<vendor>/v1`, also
 * v1beta1 and v1alpha1), validated field by field as upstream validates it — each error names
 * its field — into an ordered list of authorizers, Webhooks with their client, TTLs, timeout,
 * failure policy and compiled match conditions.
 */
import path from 'node:path';
import YAML from 'yaml';
import { compileCel } from '../authn/structured-config';
import { readWebhookConfig, type WebhookClientConfig } from '../authn/webhook';
import { parseGoDuration } from '../codecs/protobuf/time';
import { isDns1123Subdomain } from '../core';
import type { Naming } from '../naming';
import type { FailurePolicy, MatchCondition } from './webhook';

export const AUTHORIZER_TYPES = ['AlwaysAllow', 'AlwaysDeny', 'ABAC', 'Webhook', 'RBAC', 'Node'] as const;
export type AuthorizerType = (typeof AUTHORIZER_TYPES)[number];
const MAX_MATCH_CONDITIONS = 64;
const MAX_TIMEOUT_MS = 30_000;

export interface WebhookConfig {
  timeoutMs: number;
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  cacheAuthorized: boolean;
  cacheUnauthorized: boolean;
  subjectAccessReviewVersion: 'v1' | 'v1beta1';
  failurePolicy: FailurePolicy;
  kubeConfigFile: string;
  /** Read at load, so a missing or broken file fails the load. */
  client: WebhookClientConfig;
  matchConditions: MatchCondition[];
}

export interface AuthorizerConfig {
  type: AuthorizerType;
  name: string;
  webhook?: WebhookConfig;
}

export interface AuthorizationConfig {
  authorizers: AuthorizerConfig[];
}

export class AuthorizationConfigError extends Error {
  constructor(readonly errors: string[]) {
    super(errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`);
    this.name = 'AuthorizationConfigError';
  }
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const quote = (v: unknown) => JSON.stringify(v);
const supported = (values: readonly string[]) => values.map((v) => quote(v)).join(', ');

/** A Go duration field in ms; undefined when absent; errors recorded. */
function duration(value: unknown, field: string, errors: string[]): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    errors.push(`${field}: Invalid value: ${quote(value)}: must be a duration such as "30s"`);
    return undefined;
  }
  try {
    return parseGoDuration(value) / 1e6;
  } catch {
    errors.push(`${field}: Invalid value: ${quote(value)}: must be a duration such as "30s"`);
    return undefined;
  }
}

function webhookOf(raw: Record<string, unknown>, field: string, errors: string[], naming: Naming): WebhookConfig | undefined {
  const start = errors.length;
  const timeoutMs = duration(raw.timeout, `${field}.timeout`, errors);
  if (raw.timeout === undefined || timeoutMs === 0) errors.push(`${field}.timeout: Required value`);
  else if (timeoutMs !== undefined && timeoutMs < 0) errors.push(`${field}.timeout: Invalid value: ${quote(raw.timeout)}: must be > 0`);
  else if (timeoutMs !== undefined && timeoutMs > MAX_TIMEOUT_MS)
    errors.push(`${field}.timeout: Invalid value: ${quote(raw.timeout)}: must be no more than 30s`);
  const authorizedTtlMs = duration(raw.authorizedTTL, `${field}.authorizedTTL`, errors) ?? 300_000;
  const unauthorizedTtlMs = duration(raw.unauthorizedTTL, `${field}.unauthorizedTTL`, errors) ?? 30_000;
  if (authorizedTtlMs < 0) errors.push(`${field}.authorizedTTL: Invalid value: ${quote(raw.authorizedTTL)}: must be > 0`);
  if (unauthorizedTtlMs < 0) errors.push(`${field}.unauthorizedTTL: Invalid value: ${quote(raw.unauthorizedTTL)}: must be > 0`);

  const versions = ['v1', 'v1beta1'];
  if (!raw.subjectAccessReviewVersion) errors.push(`${field}.subjectAccessReviewVersion: Required value`);
  else if (!versions.includes(raw.subjectAccessReviewVersion as string)) {
    errors.push(`${field}.subjectAccessReviewVersion: Unsupported value: ${quote(raw.subjectAccessReviewVersion)}: supported values: ${supported(versions)}`);
  }
  if (!raw.matchConditionSubjectAccessReviewVersion) errors.push(`${field}.matchConditionSubjectAccessReviewVersion: Required value`);
  else if (raw.matchConditionSubjectAccessReviewVersion !== 'v1') {
    errors.push(
      `${field}.matchConditionSubjectAccessReviewVersion: Unsupported value: ${quote(raw.matchConditionSubjectAccessReviewVersion)}: supported values: "v1"`,
    );
  }
  const policies = ['NoOpinion', 'Deny'];
  if (!raw.failurePolicy) errors.push(`${field}.failurePolicy: Required value`);
  else if (!policies.includes(raw.failurePolicy as string))
    errors.push(`${field}.failurePolicy: Unsupported value: ${quote(raw.failurePolicy)}: supported values: ${supported(policies)}`);

  const connection = isObj(raw.connectionInfo) ? raw.connectionInfo : {};
  let client: WebhookClientConfig | undefined;
  const kubeConfigFile = typeof connection.kubeConfigFile === 'string' ? connection.kubeConfigFile : '';
  if (!connection.type) errors.push(`${field}.connectionInfo.type: Required value`);
  else if (connection.type === 'InClusterConfig') {
    // The API server is itself the cluster: it has no in-cluster service account to call out with.
    errors.push(`${field}.connectionInfo.type: Invalid value: "InClusterConfig": InClusterConfig is not supported by the API server`);
  } else if (connection.type !== 'KubeConfigFile') {
    errors.push(`${field}.connectionInfo.type: Unsupported value: ${quote(connection.type)}: supported values: "InClusterConfig", "KubeConfigFile"`);
  } else if (!kubeConfigFile) {
    errors.push(`${field}.connectionInfo.kubeConfigFile: Required value`);
  } else if (!path.isAbsolute(kubeConfigFile)) {
    errors.push(`${field}.connectionInfo.kubeConfigFile: Invalid value: ${quote(kubeConfigFile)}: must be an absolute path`);
  } else {
    try {
      client = readWebhookConfig(kubeConfigFile);
    } catch (err) {
      errors.push(`${field}.connectionInfo.kubeConfigFile: Invalid value: ${quote(kubeConfigFile)}: ${(err as Error).message}`);
    }
  }

  const conditions = Array.isArray(raw.matchConditions) ? raw.matchConditions : [];
  if (conditions.length > MAX_MATCH_CONDITIONS)
    errors.push(`${field}.matchConditions: Too many: ${conditions.length}: must have at most ${MAX_MATCH_CONDITIONS} items`);
  const matchConditions: MatchCondition[] = [];
  const seen = new Set<string>();
  conditions.forEach((c, i) => {
    const expression = isObj(c) ? c.expression : undefined;
    const f = `${field}.matchConditions[${i}].expression`;
    if (typeof expression === 'string' && seen.has(expression)) {
      errors.push(`${f}: Duplicate value: ${quote(expression)}`);
      return;
    }
    if (typeof expression === 'string') seen.add(expression);
    const compiled = compileCel(expression, f, errors, naming, ['request']);
    if (compiled) matchConditions.push(compiled);
  });
  if (errors.length > start || !client) return undefined;
  return {
    timeoutMs: timeoutMs!,
    authorizedTtlMs,
    unauthorizedTtlMs,
    cacheAuthorized: raw.cacheAuthorizedRequests !== false,
    cacheUnauthorized: raw.cacheUnauthorizedRequests !== false,
    subjectAccessReviewVersion: raw.subjectAccessReviewVersion as 'v1' | 'v1beta1',
    failurePolicy: raw.failurePolicy as FailurePolicy,
    kubeConfigFile,
    client,
    matchConditions,
  };
}

/** Parse and validate; throws AuthorizationConfigError listing every field at fault. */
export function parseAuthorizationConfig(text: string, naming: Naming): AuthorizationConfig {
  let doc: unknown;
  try {
    doc = YAML.parse(text);
  } catch (err) {
    throw new AuthorizationConfigError([`failed to decode the configuration: ${(err as Error).message}`]);
  }
  if (!isObj(doc)) throw new AuthorizationConfigError(['the configuration must be an object']);
  const errors: string[] = [];
  const group = naming.groups.apiserverConfig;
  const apiVersions = ['v1', 'v1beta1', 'v1alpha1'].map((v) => `${group}/${v}`);
  if (!apiVersions.includes(doc.apiVersion as string))
    errors.push(`apiVersion: Unsupported value: ${quote(doc.apiVersion)}: supported values: ${supported(apiVersions)}`);
  if (doc.kind !== 'AuthorizationConfiguration') errors.push(`kind: Unsupported value: ${quote(doc.kind)}: supported values: "AuthorizationConfiguration"`);
  const list = Array.isArray(doc.authorizers) ? doc.authorizers : [];
  if (list.length === 0) errors.push('authorizers: Required value: at least one authorization mode must be defined');
  const authorizers: AuthorizerConfig[] = [];
  const types = new Set<string>();
  const names = new Set<string>();
  list.forEach((raw, i) => {
    const field = `authorizers[${i}]`;
    const a = isObj(raw) ? raw : {};
    const type = a.type;
    if (!type) errors.push(`${field}.type: Required value`);
    else if (!AUTHORIZER_TYPES.includes(type as AuthorizerType))
      errors.push(`${field}.type: Unsupported value: ${quote(type)}: supported values: ${supported(AUTHORIZER_TYPES)}`);
    else if (type !== 'Webhook' && types.has(type as string)) errors.push(`${field}.type: Duplicate value: ${quote(type)}`);
    if (typeof type === 'string') types.add(type);
    const name = a.name;
    if (!name) errors.push(`${field}.name: Required value`);
    else if (typeof name !== 'string') errors.push(`${field}.name: Invalid value: ${quote(name)}: must be a string`);
    else {
      for (const msg of isDns1123Subdomain(name)) errors.push(`${field}.name: Invalid value: ${quote(name)}: ${msg}`);
      if (names.has(name)) errors.push(`${field}.name: Duplicate value: ${quote(name)}`);
      names.add(name);
    }
    let webhook: WebhookConfig | undefined;
    if (type === 'Webhook') {
      if (!isObj(a.webhook)) errors.push(`${field}.webhook: Required value: required when type=Webhook`);
      else webhook = webhookOf(a.webhook, `${field}.webhook`, errors, naming);
    } else if (a.webhook !== undefined && a.webhook !== null) {
      errors.push(`${field}.webhook: Invalid value: "non-null": non-null webhook config is only allowed when type=Webhook`);
    }
    authorizers.push({ type: type as AuthorizerType, name: String(name ?? ''), ...(webhook ? { webhook } : {}) });
  });
  if (errors.length) throw new AuthorizationConfigError(errors);
  return { authorizers };
}
