/**
 * Feature gates as a value: the catalog's defaults overlaid with `--feature-gates`, checked
 * the way upstream's component-base checks them (unknown gate, locked GA gate), with the
 * warnings upstream logs for setting GA or deprecated gates (docs/API.md, "Feature gates"). Immutable once built, and passed to whoever needs it: no global state.
 */
import { ALL_ALPHA, ALL_BETA, FEATURE_CATALOG, type FeatureSpec } from './catalog';

export interface FeatureGates {
  /** Is the gate on? Throws on a name the catalog does not hold (a bug, not bad input). */
  enabled(name: string): boolean;
  /** Every known gate and its value, sorted by name (for logs and tests). */
  snapshot(): Record<string, boolean>;
}

/** A bad `--feature-gates` value; the message is upstream's. */
export class FeatureGateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FeatureGateError';
  }
}

export interface BuiltFeatureGates {
  gates: FeatureGates;
  /** Upstream's klog warnings for the settings (GA or deprecated gates set explicitly). */
  warnings: string[];
}

/**
 * Build the gates from explicit settings. Upstream stops at the first unknown gate and reports
 * every locked-gate violation; several errors read as Go's error aggregate (`[a, b]`).
 */
export function buildFeatureGates(
  settings: Readonly<Record<string, boolean>> = {},
  catalog: ReadonlyMap<string, FeatureSpec> = FEATURE_CATALOG,
): BuiltFeatureGates {
  const errors: string[] = [];
  const warnings: string[] = [];
  const values = new Map<string, boolean>([...catalog].map(([name, spec]) => [name, spec.default]));
  const explicit = new Set<string>();
  for (const [name, value] of Object.entries(settings)) {
    const spec = catalog.get(name);
    if (!spec) {
      errors.push(`unrecognized feature gate: ${name}`);
      break;
    }
    if (spec.lockToDefault && spec.default !== value) {
      errors.push(`cannot set feature gate ${name} to ${value}, feature is locked to ${spec.default}`);
      continue;
    }
    explicit.add(name);
    values.set(name, value);
    if (spec.stage === 'Deprecated') warnings.push(`Setting deprecated feature gate ${name}=${value}. It will be removed in a future release.`);
    else if (spec.stage === 'GA') warnings.push(`Setting GA feature gate ${name}=${value}. It will be removed in a future release.`);
  }
  if (errors.length === 1) throw new FeatureGateError(errors[0]);
  if (errors.length > 1) throw new FeatureGateError(`[${errors.join(', ')}]`);

  // AllAlpha / AllBeta set every gate of their stage that was not set explicitly.
  for (const [special, stage] of [
    [ALL_ALPHA, 'Alpha'],
    [ALL_BETA, 'Beta'],
  ] as const) {
    if (!explicit.has(special)) continue;
    for (const [name, spec] of catalog) {
      if (name !== ALL_ALPHA && name !== ALL_BETA && spec.stage === stage && !explicit.has(name)) values.set(name, settings[special]!);
    }
  }
  return { gates: gatesFrom(values), warnings };
}

function gatesFrom(values: ReadonlyMap<string, boolean>): FeatureGates {
  return {
    enabled(name) {
      const v = values.get(name);
      if (v === undefined) throw new Error(`feature gate ${name} is not registered`);
      return v;
    },
    snapshot() {
      return Object.fromEntries([...values].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    },
  };
}

/** The defaults of release 1.32, for callers without `--feature-gates` (tests, embedded cores). */
export function defaultFeatureGates(): FeatureGates {
  return buildFeatureGates().gates;
}
