/**
 * Which admission plugins run, and in what order: upstream's ordered list of every plugin it
 * registers, the subset on by default in 1.32, and `--enable-admission-plugins` /
 * `--disable-admission-plugins` applied to it as kube-apiserver applies them (an enabled plugin
 * joins the defaults; the order is always upstream's, never the flag's).
 */

/** Every plugin upstream 1.32 registers, in the order upstream runs them. */
export const UPSTREAM_PLUGIN_ORDER: readonly string[] = [
  'AlwaysAdmit',
  'NamespaceAutoProvision',
  'NamespaceLifecycle',
  'NamespaceExists',
  'LimitPodHardAntiAffinityTopology',
  'LimitRanger',
  'ServiceAccount',
  'NodeRestriction',
  'TaintNodesByCondition',
  'AlwaysPullImages',
  'ImagePolicyWebhook',
  'PodSecurity',
  'PodNodeSelector',
  'Priority',
  'DefaultTolerationSeconds',
  'PodTolerationRestriction',
  'EventRateLimit',
  'ExtendedResourceToleration',
  'DefaultStorageClass',
  'StorageObjectInUseProtection',
  'OwnerReferencesPermissionEnforcement',
  'PersistentVolumeClaimResize',
  'RuntimeClass',
  'CertificateApproval',
  'CertificateSigning',
  'ClusterTrustBundleAttest',
  'CertificateSubjectRestriction',
  'DefaultIngressClass',
  'DenyServiceExternalIPs',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'ResourceQuota',
  'AlwaysDeny',
];

/** Upstream's plugins that are off unless enabled (kube-apiserver's DefaultOffAdmissionPlugins complement). */
const UPSTREAM_DEFAULT_OFF = new Set([
  'AlwaysAdmit',
  'NamespaceAutoProvision',
  'NamespaceExists',
  'LimitPodHardAntiAffinityTopology',
  'NodeRestriction',
  'AlwaysPullImages',
  'ImagePolicyWebhook',
  'PodNodeSelector',
  'PodTolerationRestriction',
  'EventRateLimit',
  'ExtendedResourceToleration',
  'OwnerReferencesPermissionEnforcement',
  'DenyServiceExternalIPs',
  'AlwaysDeny',
]);

/**
 * The plugins Keelson has. The others guard types Keelson does not serve (LimitRange,
 * PersistentVolumeClaim, Ingress, ClusterTrustBundle, RuntimeClass, ResourceQuota, ...)
 * or are upstream's test plugins; enabling one is refused at start rather than ignored.
 */
export const IMPLEMENTED_PLUGINS: ReadonlySet<string> = new Set([
  'AlwaysAdmit',
  'NamespaceLifecycle',
  'ServiceAccount',
  'NodeRestriction',
  'Priority',
  'DefaultTolerationSeconds',
  'CertificateApproval',
  'CertificateSigning',
  'CertificateSubjectRestriction',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
  'AlwaysDeny',
]);

export class AdmissionPluginsError extends Error {
  constructor(readonly errors: string[]) {
    super(errors.join('; '));
  }
}

/**
 * The plugins to run, in upstream's order: the 1.32 defaults Keelson has, plus `enable`, minus
 * `disable`. Unknown names and overlaps are upstream's start errors; an upstream plugin
 * Keelson lacks may be disabled (it is not running anyway) but not enabled.
 */
export function resolveAdmissionPlugins(enable: readonly string[] = [], disable: readonly string[] = []): string[] {
  const registered = new Set(UPSTREAM_PLUGIN_ORDER);
  const errors: string[] = [];
  for (const name of enable) {
    if (!registered.has(name)) errors.push(`enable-admission-plugins plugin "${name}" is unknown`);
    else if (!IMPLEMENTED_PLUGINS.has(name))
      errors.push(`enable-admission-plugins plugin "${name}" is not available in this server: it admits types that are not served`);
  }
  for (const name of disable) {
    if (!registered.has(name)) errors.push(`disable-admission-plugins plugin "${name}" is unknown`);
  }
  const overlap = [...new Set(enable)].filter((n) => disable.includes(n)).sort();
  if (overlap.length > 0) errors.push(`[${overlap.join(' ')}] in enable-admission-plugins and disable-admission-plugins overlapped`);
  if (errors.length > 0) throw new AdmissionPluginsError(errors);
  const on = new Set(enable);
  return UPSTREAM_PLUGIN_ORDER.filter((name) => IMPLEMENTED_PLUGINS.has(name) && !disable.includes(name) && (on.has(name) || !UPSTREAM_DEFAULT_OFF.has(name)));
}

/** The plugins kube-apiserver runs when no flag is given, as far as Keelson has them. */
export function defaultAdmissionPlugins(): string[] {
  return resolveAdmissionPlugins();
}

/**
 * The chain of a bare core, with no controllers beside it: upstream's generic API server's
 * recommended plugins (namespace lifecycle and dynamic admission), without the kube-apiserver
 * ones that need the controllers (ServiceAccount needs each namespace's `default` account).
 */
export const GENERIC_APISERVER_PLUGINS: readonly string[] = [
  'NamespaceLifecycle',
  'MutatingAdmissionWebhook',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionWebhook',
];
