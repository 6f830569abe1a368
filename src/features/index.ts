/** Feature gates (docs/API.md, "Feature gates"): the 1.32 catalog and the gates built from `--feature-gates`. */
export { FEATURE_CATALOG, ALL_ALPHA, ALL_BETA, type FeatureSpec, type FeatureStage } from './catalog';
export { buildFeatureGates, defaultFeatureGates, FeatureGateError, type BuiltFeatureGates, type FeatureGates } from './feature-gates';

/** Gate names the code reads, spelled once. */
export const Features = {
  AllowUnsafeMalformedObjectDeletion: 'AllowUnsafeMalformedObjectDeletion',
  APIResponseCompression: 'APIResponseCompression',
  CBORServingAndStorage: 'CBORServingAndStorage',
  WatchList: 'WatchList',
} as const;
