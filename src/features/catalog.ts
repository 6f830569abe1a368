/**
 * The feature gates Keelson knows, with their stage and default at release 1.32 (upstream's
 * versioned specs of its apiserver library, resolved at 1.32). docs/API.md, "Feature gates": alpha
 * gates default off and may be enabled, beta gates default on and may be disabled, GA gates
 * are on, non-operational and locked (disabling one fails), deprecated gates warn when set.
 */

export type FeatureStage = 'Alpha' | 'Beta' | 'GA' | 'Deprecated';

export interface FeatureSpec {
  readonly stage: FeatureStage;
  readonly default: boolean;
  /** GA gates are locked to their default: setting the other value is an error. */
  readonly lockToDefault: boolean;
}

const alpha: FeatureSpec = { stage: 'Alpha', default: false, lockToDefault: false };
const betaOn: FeatureSpec = { stage: 'Beta', default: true, lockToDefault: false };
const betaOff: FeatureSpec = { stage: 'Beta', default: false, lockToDefault: false };
const ga: FeatureSpec = { stage: 'GA', default: true, lockToDefault: true };

/** Gates that toggle every alpha / beta gate at once (per-gate settings override them). */
export const ALL_ALPHA = 'AllAlpha';
export const ALL_BETA = 'AllBeta';

export const FEATURE_CATALOG: ReadonlyMap<string, FeatureSpec> = new Map<string, FeatureSpec>([
  [ALL_ALPHA, alpha],
  [ALL_BETA, betaOff],
  ['AdmissionWebhookMatchConditions', ga],
  ['AggregatedDiscoveryEndpoint', ga],
  ['AllowUnsafeMalformedObjectDeletion', alpha],
  ['AnonymousAuthConfigurableEndpoints', betaOn],
  ['APIListChunking', ga],
  ['APIResponseCompression', betaOn],
  ['APIServerIdentity', betaOn],
  ['APIServerTracing', betaOn],
  ['APIServingWithRoutine', alpha],
  ['AuthorizeNodeWithSelectors', betaOn],
  ['AuthorizeWithSelectors', betaOn],
  ['BtreeWatchCache', betaOn],
  ['CBORServingAndStorage', alpha],
  ['ConcurrentWatchObjectDecode', betaOff],
  ['ConsistentListFromCache', betaOn],
  ['CoordinatedLeaderElection', alpha],
  ['EfficientWatchResumption', ga],
  ['KMSv1', { stage: 'Deprecated', default: false, lockToDefault: false }],
  ['MutatingAdmissionPolicy', alpha],
  ['OpenAPIEnums', betaOn],
  ['RemainingItemCount', ga],
  ['RemoteRequestHeaderUID', alpha],
  ['ResilientWatchCacheInitialization', betaOn],
  ['RetryGenerateName', ga],
  ['SeparateCacheWatchRPC', betaOn],
  ['StorageVersionAPI', alpha],
  ['StorageVersionHash', betaOn],
  ['StrictCostEnforcementForVAP', ga],
  ['StrictCostEnforcementForWebhooks', ga],
  ['StructuredAuthenticationConfiguration', betaOn],
  ['StructuredAuthorizationConfiguration', ga],
  ['UnauthenticatedHTTP2DOSMitigation', betaOn],
  ['WatchBookmark', ga],
  ['WatchCacheInitializationPostStartHook', betaOff],
  ['WatchFromStorageWithoutResourceVersion', betaOff],
  ['WatchList', betaOn],
]);
