/**
 * The shapes of admissionregistration/v1 webhook configurations the dispatcher reads (the
 * served types' full schema lives in src/schema; these are the fields admission acts on).
 */
import type { ApiObject } from '../../api';
import type { MetaLabelSelector } from '../../validation/selectors';

export interface RuleWithOperations {
  operations?: string[];
  apiGroups?: string[];
  apiVersions?: string[];
  resources?: string[];
  scope?: string;
}

export interface WebhookClientConfig {
  url?: string;
  service?: { namespace?: string; name?: string; path?: string; port?: number };
  /** Base64 of PEM CA certificates that verify the webhook's serving certificate. */
  caBundle?: string;
}

export interface MatchCondition {
  name: string;
  expression: string;
}

export interface Webhook {
  name: string;
  clientConfig?: WebhookClientConfig;
  rules?: RuleWithOperations[];
  failurePolicy?: 'Fail' | 'Ignore';
  matchPolicy?: 'Exact' | 'Equivalent';
  namespaceSelector?: MetaLabelSelector;
  objectSelector?: MetaLabelSelector;
  sideEffects?: 'None' | 'NoneOnDryRun' | 'Some' | 'Unknown';
  timeoutSeconds?: number;
  admissionReviewVersions?: string[];
  matchConditions?: MatchCondition[];
  /** Mutating webhooks only. */
  reinvocationPolicy?: 'Never' | 'IfNeeded';
}

export interface WebhookConfiguration extends ApiObject {
  webhooks?: Webhook[];
}

/** Where the dispatcher finds the configurations: informers over the served types. */
export interface WebhookConfigurationSource {
  /** MutatingWebhookConfigurations, in name order. */
  mutating(): readonly WebhookConfiguration[];
  /** ValidatingWebhookConfigurations, in name order. */
  validating(): readonly WebhookConfiguration[];
}

/** The client credentials the server presents to a webhook host (`--admission-control-config-file`'s kubeconfig). */
export interface WebhookCredentials {
  cert?: string;
  key?: string;
  token?: string;
}

/** Resolves credentials for `host` or `host:port`; undefined presents none. */
export type WebhookCredentialResolver = (hostPort: string, host: string) => WebhookCredentials | undefined;
