/**
 * The gateway pipeline: steps written in the order they run (unlike upstream's handler chain,
 * which is built inside out), each `(next) => next` in its own file, ending in the router. Each
 * step's file opens with its place in `createPipeline`'s list ("Step 4: authentication"), from
 * 0; a test keeps the numbers so. The request log, metrics, audit and limits are there only
 * when the server asks for them.
 */
import type { Clock } from '../clock';
import type { CoreApi } from '../core';
import type { Naming } from '../naming';
import { type Codecs, encodingFeatures, gatewayCodecs } from './codecs';
import type { FeatureGates } from '../features';
import type { Authenticator } from '../authn';
import type { HealthChecks } from './handlers/health';
import { createRouter } from './handlers/router';
import type { VersionInfo } from './handlers/version';
import type { OpenWatches } from './open-watches';
import type { ResourceIndex } from './resource-index';
import { authenticationStep } from './steps/authentication';
import { impersonationStep } from './steps/impersonation';
import { type Authorizer, authorizationStep, bootstrapPolicyAuthorizer, superuserAuthorizer } from './steps/authorization';
import { recoverStep } from './steps/recover';
import { metricsStep } from './steps/metrics';
import { limitsStep } from './steps/limits';
import { priorityAndFairnessStep } from './steps/priority-and-fairness';
import type { FlowControl } from '../flowcontrol';
import { type RequestLogEntry, requestLogStep } from './steps/request-log';
import { type AuditOptions, auditStep } from './audit';
import type { ServerMetrics } from '../metrics';
import { requestInfoStep } from './steps/request-info';
import type { Handler, Step } from './types';
import type { IssuerDiscovery } from '../authn';
import type { Aggregator } from './aggregator';

/** Compose steps so that the first in the list runs first. */
export function compose(steps: readonly Step[], last: Handler): Handler {
  return steps.reduceRight<Handler>((next, step) => step(next), last);
}

export interface PipelineOptions {
  core: CoreApi;
  /** The time request and watch timeouts run on, and tables' ages (default the system clock). */
  clock?: Clock;
  index: ResourceIndex;
  naming: Naming;
  health: HealthChecks;
  version: VersionInfo;
  serverAddress: () => string;
  codecs?: Codecs;
  /** The server's feature gates: the default codecs follow them (CBOR, compression). */
  features?: FeatureGates;
  /** The authenticator chain (src/authn); default: client certificates and anonymous requests. */
  authenticator?: Authenticator;
  /** Why a request was refused as unauthenticated, for the server log (never the client). */
  onUnauthenticated?: (reason: string) => void;
  /** Defaults to the superuser rule plus upstream's bootstrap public/discovery grants. */
  authorizers?: readonly Authorizer[];
  watchTimeoutMs?: () => number;
  /** Errors that became a 5xx, with the request's id (its `Audit-Id` header), for the log. */
  onUnexpectedError?: (err: unknown, request?: { id: string; method: string; path: string }) => void;
  /** Request metrics, and `/metrics`. */
  metrics?: ServerMetrics;
  /** In-flight limits and the request timeout (`--max-requests-inflight`, …); none when absent. */
  limits?: RequestLimits;
  /**
   * API Priority and Fairness (`--enable-priority-and-fairness`): requests classified, queued and
   * limited by it (step 8); the in-flight counters of `limits` are then left at 0.
   */
  flowControl?: FlowControl;
  /** The gateway's open watches, which shutdown ends. */
  openWatches?: OpenWatches;
  /** Audit events per the policy (`--audit-policy-file`); none when absent. */
  audit?: AuditOptions;
  /** One entry per answered request (the server logs them at `-v=3`). */
  onRequestLogged?: (entry: RequestLogEntry) => void;
  /** Service-account issuer discovery (`/.well-known/openid-configuration`, `/openid/v1/jwks`); off when absent. */
  issuerDiscovery?: (externalAddress: string) => IssuerDiscovery | undefined;
  /** The aggregation layer (docs/AGGREGATION.md): its proxy runs last, after authorization and the limits. */
  aggregator?: Aggregator;
}

export interface RequestLimits {
  maxReadOnly: number;
  maxMutating: number;
  requestTimeoutMs: number;
}

export function createPipeline(options: PipelineOptions): Handler {
  const codecs = options.codecs ?? gatewayCodecs(options.naming, options.features && encodingFeatures(options.features));
  const authorizers = options.authorizers ?? [superuserAuthorizer, bootstrapPolicyAuthorizer(options.naming)];
  const steps: Step[] = [
    recoverStep({ codecs, onUnexpectedError: options.onUnexpectedError }),
    requestInfoStep,
    ...(options.onRequestLogged ? [requestLogStep(options.onRequestLogged)] : []),
    ...(options.metrics ? [metricsStep(options.metrics, options.index)] : []),
    authenticationStep({ authenticator: options.authenticator, onRejected: options.onUnauthenticated }),
    ...(options.audit ? [auditStep({ codecs, ...options.audit })] : []),
    impersonationStep({ authorizers, naming: options.naming }),
    // Upstream's handler chain limits requests before it authorizes them (max-in-flight or
    // priority and fairness inside impersonation, authorization inside them): a flood of
    // requests that would be denied is limited before authorization's work, and a 403 carries
    // the classification headers.
    ...(options.limits ? [limitsStep({ ...options.limits, clock: options.clock, codecs, index: options.index, metrics: options.metrics })] : []),
    ...(options.flowControl
      ? [
          priorityAndFairnessStep({
            flowControl: options.flowControl,
            requestTimeoutMs: options.limits?.requestTimeoutMs ?? 0,
            index: options.index,
            metrics: options.metrics,
          }),
        ]
      : []),
    authorizationStep(authorizers, options.features?.enabled('AuthorizeWithSelectors') ?? true, options.naming),
    ...(options.aggregator ? [options.aggregator.step] : []),
  ];
  return compose(steps, createRouter({ ...options, codecs, remoteGroups: options.aggregator?.discovery }));
}
