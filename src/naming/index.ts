/**
 * Every vendor-dependent name Keelson serves comes from here.
 *
 * The default profile writes the vendor word as `platform`; the `kubernetes` profile serves upstream's
 * names so that unmodified kubectl and client libraries work. Upstream spells its vendor
 * word three ways — `k8s.io` in API group names, `kubernetes.io` in label and annotation
 * keys, `kube-` in system namespace names — and the platform profile maps all three to
 * `platform`. No other module spells any of them.
 */

export type Vendor = 'platform' | 'kubernetes';

export const VENDORS: readonly Vendor[] = ['platform', 'kubernetes'];
/** The profile that serves upstream's names, which unmodified kubectl and client libraries expect. */
export const UPSTREAM_VENDOR: Vendor = 'kubernetes';

export interface Naming {
  readonly vendor: Vendor;
  /** The word itself, as used in media types and schema extensions: `platform` / `kubernetes`. */
  readonly word: string;
  /** Domain used in API group names: `platform.io` / `k8s.io`. */
  readonly groupDomain: string;
  /** Domain used in label and annotation keys: `platform.io` / `kubernetes.io`. */
  readonly keyDomain: string;

  /** An API group named below the group domain, e.g. `group('rbac.authorization')`. */
  group(prefix: string): string;
  /** A label or annotation key below the key domain, e.g. `key('bootstrapping')` → `kubernetes.io/bootstrapping`. */
  key(name: string, subdomain?: string): string;

  /**
   * The API group of each schema package (`core.v1.Pod` → '', `rbac.v1.Role` →
   * `rbac.authorization.<domain>`): the groups the schema's kinds are served in, as data.
   */
  readonly apiGroups: Readonly<Record<GroupKey, string>>;
  readonly groups: {
    readonly rbac: string;
    readonly events: string;
    readonly coordination: string;
    readonly scheduling: string;
    readonly meta: string;
    readonly authentication: string;
    readonly authorization: string;
    readonly apiDiscovery: string;
    readonly apiserverConfig: string;
    readonly clientAuthentication: string;
    readonly admissionregistration: string;
    readonly certificates: string;
    /** CustomResourceDefinitions: `apiextensions.<group domain>`. */
    readonly apiextensions: string;
    /** API Priority and Fairness: `flowcontrol.apiserver.<group domain>`. */
    readonly flowcontrol: string;
    /** Endpoints in slices: `discovery.<group domain>`. */
    readonly discovery: string;
    /** APIServices, the aggregator's registrations: `apiregistration.<group domain>`. */
    readonly apiregistration: string;
  };

  /** Finalizers the server itself puts on objects. */
  readonly finalizers: {
    /** On every CustomResourceDefinition until its custom resources are gone (`customresourcecleanup.apiextensions.k8s.io`). */
    readonly customResourceCleanup: string;
  };

  readonly namespaces: {
    readonly default: 'default';
    readonly system: string;
    readonly public: string;
    readonly nodeLease: string;
  };

  readonly mediaTypes: {
    readonly protobuf: string;
  };

  /** Schema extension names used in OpenAPI (`x-kubernetes-list-type`, ...). */
  extension(name: string): string;

  readonly labels: {
    readonly bootstrapping: string;
    readonly rbacAutoupdate: string;
    readonly deprecated: string;
    /** The annotation a CustomResourceDefinition of a protected group carries (`api-approved.kubernetes.io`, no slash). */
    readonly apiApproved: string;
    /** The label on the APIServices the server registers for its own groups (`kube-aggregator.kubernetes.io/automanaged`). */
    readonly apiServiceAutomanaged: string;
    /** On API Priority and Fairness' default objects: whether the server keeps their spec up to date (`apf.kubernetes.io/autoupdate-spec`). */
    readonly apfAutoupdate: string;
    /** A v1beta3 PriorityLevelConfiguration's explicit zero shares (`flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares`). */
    readonly apfPreserveZeroShares: string;
  };

  /** Environment variable handed to exec credential plugins. */
  readonly execInfoEnv: string;
  /** Secret type of bootstrap tokens. */
  readonly bootstrapTokenSecretType: string;
  /** The ConfigMap in every namespace holding the cluster's root CA (`kube-root-ca.crt`). */
  readonly rootCaConfigMap: string;
  /** The aggregator's component name (`kube-aggregator`): its OpenAPI module path and its labels' subdomain. */
  readonly aggregator: string;
  /** Prefix of the projected volume the ServiceAccount admission plugin mounts (`kube-api-access-`). */
  readonly apiAccessVolumePrefix: string;
  /** Leader-election Leases in the system namespace (`kube-controller-manager`, `kube-scheduler`). */
  readonly leaderLeases: { readonly controllerManager: string; readonly scheduler: string };
}

interface VendorWords {
  word: string;
  groupDomain: string;
  keyDomain: string;
  namespacePrefix: string;
}

const WORDS: Record<Vendor, VendorWords> = {
  platform: { word: 'platform', groupDomain: 'platform.io', keyDomain: 'platform.io', namespacePrefix: 'platform' },
  kubernetes: { word: 'kubernetes', groupDomain: 'k8s.io', keyDomain: 'kubernetes.io', namespacePrefix: 'kube' },
};

export function isVendor(value: string): value is Vendor {
  return (VENDORS as readonly string[]).includes(value);
}

/** The schema packages whose kinds are served, each in one API group. */
export type GroupKey =
  | 'core'
  | 'apps'
  | 'autoscaling'
  | 'rbac'
  | 'events'
  | 'coordination'
  | 'scheduling'
  | 'policy'
  | 'authentication'
  | 'authorization'
  | 'admissionregistration'
  | 'certificates'
  | 'apiextensions'
  | 'flowcontrol'
  | 'discovery'
  | 'apiregistration'
  | 'meta';

export function createNaming(vendor: Vendor): Naming {
  const w = WORDS[vendor];
  const group = (prefix: string): string => `${prefix}.${w.groupDomain}`;
  const key = (name: string, subdomain?: string): string => (subdomain ? `${subdomain}.${w.keyDomain}/${name}` : `${w.keyDomain}/${name}`);
  const aggregator = `${w.namespacePrefix}-aggregator`;
  const groups = {
    rbac: group('rbac.authorization'),
    events: group('events'),
    coordination: group('coordination'),
    scheduling: group('scheduling'),
    meta: group('meta'),
    authentication: group('authentication'),
    authorization: group('authorization'),
    apiDiscovery: group('apidiscovery'),
    apiserverConfig: group('apiserver.config'),
    clientAuthentication: group('client.authentication'),
    admissionregistration: group('admissionregistration'),
    certificates: group('certificates'),
    apiextensions: group('apiextensions'),
    flowcontrol: group('flowcontrol.apiserver'),
    discovery: group('discovery'),
    apiregistration: group('apiregistration'),
  };
  return {
    vendor,
    word: w.word,
    groupDomain: w.groupDomain,
    keyDomain: w.keyDomain,
    group,
    key,
    groups,
    // Upstream's unsuffixed groups keep their names under every profile.
    apiGroups: {
      core: '',
      apps: 'apps',
      autoscaling: 'autoscaling',
      rbac: groups.rbac,
      events: groups.events,
      coordination: groups.coordination,
      scheduling: groups.scheduling,
      policy: 'policy',
      authentication: groups.authentication,
      authorization: groups.authorization,
      admissionregistration: groups.admissionregistration,
      certificates: groups.certificates,
      apiextensions: groups.apiextensions,
      flowcontrol: groups.flowcontrol,
      discovery: groups.discovery,
      apiregistration: groups.apiregistration,
      meta: groups.meta,
    },
    finalizers: {
      customResourceCleanup: `customresourcecleanup.${groups.apiextensions}`,
    },
    namespaces: {
      default: 'default',
      system: `${w.namespacePrefix}-system`,
      public: `${w.namespacePrefix}-public`,
      nodeLease: `${w.namespacePrefix}-node-lease`,
    },
    mediaTypes: {
      protobuf: `application/vnd.${w.word}.protobuf`,
    },
    extension: (name: string) => `x-${w.word}-${name}`,
    labels: {
      bootstrapping: key('bootstrapping'),
      rbacAutoupdate: key('autoupdate', 'rbac.authorization'),
      deprecated: key('deprecated'),
      apiApproved: `api-approved.${w.keyDomain}`,
      apiServiceAutomanaged: key('automanaged', aggregator),
      apfAutoupdate: key('autoupdate-spec', 'apf'),
      apfPreserveZeroShares: `${group('flowcontrol')}/v1beta3-preserve-zero-concurrency-shares`,
    },
    execInfoEnv: `${w.word.toUpperCase()}_EXEC_INFO`,
    bootstrapTokenSecretType: `bootstrap.${w.keyDomain}/token`,
    rootCaConfigMap: `${w.namespacePrefix}-root-ca.crt`,
    aggregator,
    apiAccessVolumePrefix: `${w.namespacePrefix}-api-access-`,
    leaderLeases: { controllerManager: `${w.namespacePrefix}-controller-manager`, scheduler: `${w.namespacePrefix}-scheduler` },
  };
}
