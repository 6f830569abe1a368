import { FEATURE_CATALOG, FeatureGateError, Features, buildFeatureGates, defaultFeatureGates } from '../../src/features';
import { parseFlags } from '../../src/server/flags';

describe("feature gates at release 1.32 (stages as upstream's component-base treats them)", () => {
  it('alpha gates default off, beta gates default on, GA gates are on', () => {
    const gates = defaultFeatureGates();
    expect(gates.enabled(Features.AllowUnsafeMalformedObjectDeletion)).toBe(false);
    expect(gates.enabled(Features.CBORServingAndStorage)).toBe(false);
    expect(gates.enabled(Features.APIResponseCompression)).toBe(true);
    expect(gates.enabled(Features.WatchList)).toBe(true);
    expect(gates.enabled('RetryGenerateName')).toBe(true);
    expect(FEATURE_CATALOG.get('RetryGenerateName')).toEqual({ stage: 'GA', default: true, lockToDefault: true });
  });

  it('a user may enable an alpha gate and disable a beta gate', () => {
    const { gates, warnings } = buildFeatureGates({ AllowUnsafeMalformedObjectDeletion: true, APIResponseCompression: false });
    expect(gates.enabled('AllowUnsafeMalformedObjectDeletion')).toBe(true);
    expect(gates.enabled('APIResponseCompression')).toBe(false);
    expect(warnings).toEqual([]);
  });

  it('disabling a GA gate fails; setting it to its value warns', () => {
    expect(() => buildFeatureGates({ RetryGenerateName: false })).toThrow(
      new FeatureGateError('cannot set feature gate RetryGenerateName to false, feature is locked to true'),
    );
    expect(buildFeatureGates({ RetryGenerateName: true }).warnings).toEqual([
      'Setting GA feature gate RetryGenerateName=true. It will be removed in a future release.',
    ]);
    expect(() => buildFeatureGates({ WatchBookmark: false, APIListChunking: false })).toThrow(
      '[cannot set feature gate WatchBookmark to false, feature is locked to true, cannot set feature gate APIListChunking to false, feature is locked to true]',
    );
  });

  it('deprecated gates warn; unknown gates are refused', () => {
    expect(buildFeatureGates({ KMSv1: true }).warnings).toEqual(['Setting deprecated feature gate KMSv1=true. It will be removed in a future release.']);
    expect(() => buildFeatureGates({ NoSuchGate: true })).toThrow('unrecognized feature gate: NoSuchGate');
    expect(() => defaultFeatureGates().enabled('NoSuchGate')).toThrow();
  });

  it('AllAlpha and AllBeta set every gate of their stage unless the gate is set explicitly', () => {
    const { gates } = buildFeatureGates({ AllAlpha: true, CBORServingAndStorage: false, AllBeta: false });
    expect(gates.enabled('AllowUnsafeMalformedObjectDeletion')).toBe(true);
    expect(gates.enabled('CBORServingAndStorage')).toBe(false);
    expect(gates.enabled('WatchList')).toBe(false);
    expect(gates.enabled('RetryGenerateName')).toBe(true);
  });

  it("--feature-gates refuses unknown and locked gates with upstream's flag error", () => {
    expect(parseFlags(['--feature-gates', 'Foo=true'])).toEqual({
      kind: 'error',
      error: { flag: '--feature-gates', message: 'invalid argument "Foo=true" for "--feature-gates" flag: unrecognized feature gate: Foo' },
    });
    expect(parseFlags(['--feature-gates=StructuredAuthorizationConfiguration=false'])).toMatchObject({
      kind: 'error',
      error: {
        message:
          'invalid argument "StructuredAuthorizationConfiguration=false" for "--feature-gates" flag: cannot set feature gate StructuredAuthorizationConfiguration to false, feature is locked to true',
      },
    });
    expect(parseFlags(['--feature-gates=AllowUnsafeMalformedObjectDeletion=true'])).toMatchObject({
      kind: 'config',
      config: { featureGates: { AllowUnsafeMalformedObjectDeletion: true } },
    });
  });
});
