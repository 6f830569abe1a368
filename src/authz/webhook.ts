/**
 * The Webhook authorizer, as upstream's: each request's attributes are POSTed as a
 * SubjectAccessReview (`authorization.<vendor>/v1beta1` or `/v1`) to a service named by a
 * kubeconfig-format file; `status.allowed` allows, `status.denied` denies, anything else is no
 * opinion. Allowed answers are cached for the authorized TTL, the others for the unauthorized
 * TTL, keyed by the review's spec. A call that fails (network, timeout, an answer that is not a
 * review) follows the failure policy: no opinion, or deny. Match conditions — CEL over the v1
 * review's spec as `request` — decide whether the webhook is asked at all: any false skips it,
 * an error with no false follows the failure policy.
 */
import type { Clock } from '../clock';
import { type WebhookClientConfig, postReview } from '../authn/webhook';
import type { AuthorizationAttributes, Authorizer, Decision, RulesResult } from './types';

export type FailurePolicy = 'NoOpinion' | 'Deny';

/** A compiled match condition: true, false, or throws. */
export type MatchCondition = (vars: Record<string, unknown>) => unknown;

export interface WebhookAuthorizerOptions {
  /** How the chain reports it: `Webhook` for the flag, the configured name in the config file. */
  name: string;
  client: WebhookClientConfig;
  /** `authorization.<vendor>/v1beta1` or `/v1`. */
  apiVersion: string;
  authorizedTtlMs: number;
  unauthorizedTtlMs: number;
  cacheAuthorized?: boolean;
  cacheUnauthorized?: boolean;
  timeoutMs: number;
  failurePolicy: FailurePolicy;
  matchConditions?: readonly MatchCondition[];
  clock: Clock;
  /** Counts of what happened, for operators (and tests). */
  onEvent?: (event: 'call' | 'cache-hit' | 'failure' | 'skipped' | 'match-error') => void;
}

/** The review's spec in v1's shape (v1beta1 names the groups `group`). */
export function reviewSpec(a: AuthorizationAttributes): Record<string, unknown> {
  const spec: Record<string, unknown> = { user: a.user.username, groups: a.user.groups };
  if (a.user.uid) spec.uid = a.user.uid;
  if (a.user.extra && Object.keys(a.user.extra).length) spec.extra = a.user.extra;
  if (a.isResourceRequest) {
    spec.resourceAttributes = {
      namespace: a.namespace,
      verb: a.verb,
      group: a.apiGroup,
      version: a.apiVersion,
      resource: a.resource,
      subresource: a.subresource,
      name: a.name,
    };
  } else {
    spec.nonResourceAttributes = { path: a.path, verb: a.verb };
  }
  return spec;
}

export interface WebhookAuthorizer extends Authorizer {
  authorize(attributes: AuthorizationAttributes): Promise<Decision>;
}

export function webhookAuthorizer(options: WebhookAuthorizerOptions): WebhookAuthorizer {
  const cache = new Map<string, { decision: Decision; expires: number }>();
  const failed = (why: string): Decision =>
    options.failurePolicy === 'Deny' ? { decision: 'deny', reason: `webhook failed: ${why}` } : { decision: 'noOpinion', reason: `webhook failed: ${why}` };

  return {
    name: options.name,
    rulesFor(): RulesResult {
      // As upstream: a webhook cannot list what it would allow.
      return { resourceRules: [], nonResourceRules: [], incomplete: true, errors: [] };
    },
    async authorize(a): Promise<Decision> {
      const spec = reviewSpec(a);
      if (options.matchConditions?.length) {
        let error: string | undefined;
        for (const condition of options.matchConditions) {
          try {
            const value = condition({ request: spec });
            if (value === false) {
              options.onEvent?.('skipped');
              return { decision: 'noOpinion' };
            }
            if (value !== true) error ??= `a match condition gave ${JSON.stringify(value)}, not a bool`;
          } catch (err) {
            error ??= (err as Error).message;
          }
        }
        if (error !== undefined) {
          options.onEvent?.('match-error');
          return failed(`match condition: ${error}`);
        }
      }
      const key = JSON.stringify(spec);
      const now = options.clock.now();
      const hit = cache.get(key);
      if (hit && hit.expires > now) {
        options.onEvent?.('cache-hit');
        return hit.decision;
      }
      const body = options.apiVersion.endsWith('/v1beta1') ? { ...spec, groups: undefined, group: spec.groups } : spec;
      let answer: { status: number; json: unknown };
      try {
        options.onEvent?.('call');
        answer = await postReview(
          options.client,
          JSON.stringify({ apiVersion: options.apiVersion, kind: 'SubjectAccessReview', spec: body }),
          options.timeoutMs,
        );
      } catch (err) {
        options.onEvent?.('failure');
        return failed((err as Error).message);
      }
      const review = answer.json as {
        apiVersion?: unknown;
        kind?: unknown;
        status?: { allowed?: unknown; denied?: unknown; reason?: unknown; evaluationError?: unknown };
      };
      if (
        answer.status < 200 ||
        answer.status > 299 ||
        typeof review !== 'object' ||
        review === null ||
        typeof review.status !== 'object' ||
        review.status === null
      ) {
        options.onEvent?.('failure');
        return failed(answer.status < 200 || answer.status > 299 ? `HTTP ${answer.status}` : 'the answer has no status');
      }
      const status = review.status;
      const reason = typeof status.reason === 'string' ? status.reason : '';
      let decision: Decision;
      if (status.allowed === true) decision = reason ? { decision: 'allow', reason } : { decision: 'allow' };
      else if (status.denied === true) decision = { decision: 'deny', reason };
      else decision = { decision: 'noOpinion', reason };
      const allowed = decision.decision === 'allow';
      const ttl = allowed ? options.authorizedTtlMs : options.unauthorizedTtlMs;
      const caching = allowed ? options.cacheAuthorized !== false : options.cacheUnauthorized !== false;
      if (caching && ttl > 0) {
        cache.set(key, { decision, expires: now + ttl });
        if (cache.size > 10_000) cache.delete(cache.keys().next().value!);
      }
      return decision;
    },
  };
}
