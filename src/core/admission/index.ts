export {
  Admission,
  type AdmissionAttributes,
  type AdmissionMetrics,
  type AdmissionOperation,
  type AdmissionPlugin,
  type AdmissionStep,
  type EquivalentResource,
} from './types';
export { namespaceLifecycle, type NamespaceLifecycleOptions, type NamespaceReader } from './namespace-lifecycle';
export {
  AdmissionPluginsError,
  GENERIC_APISERVER_PLUGINS,
  IMPLEMENTED_PLUGINS,
  UPSTREAM_PLUGIN_ORDER,
  defaultAdmissionPlugins,
  resolveAdmissionPlugins,
} from './plugins';
export { type AdmissionReader, cachedThenLive } from './reader';
export { serviceAccountAdmission } from './service-account';
export { defaultTolerationSeconds } from './default-toleration-seconds';
export { priorityAdmission } from './priority';
export { nodeRestriction } from './node-restriction';
export { alwaysAdmit, alwaysDeny } from './always';
export { mutatingAdmissionWebhook, validatingAdmissionWebhook } from './webhook/dispatcher';
export type { WebhookCredentialResolver, WebhookCredentials } from './webhook/types';
export { validatingAdmissionPolicy } from './policy/plugin';
export { DynamicAdmissionSources } from './sources';
