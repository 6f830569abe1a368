/**
 * The core's front door: all that the layers above it (the doors, authentication and
 * authorization, the controllers, the server) may import of `src/core`. They import it as
 * `../core` and never a module inside the folder (test/architecture/layers.test.ts), so what is
 * behind it (the registry, the watch cache, storage, admission's plugins) may move freely.
 */

// The interface both doors and every in-process client speak: objects, options, results, ownership.
export * from './api';

// The factory, and what the server configures it with.
export { createCore, followCatalog, staticCatalog, type Core, type CoreOptions, type CoreState, type ResourceCatalog } from './core';
export type { CreateHandler } from './handlers';
export { DEFAULT_EVENT_TTL_MS } from './event-ttl';
export {
  AdmissionPluginsError,
  IMPLEMENTED_PLUGINS,
  UPSTREAM_PLUGIN_ORDER,
  defaultAdmissionPlugins,
  resolveAdmissionPlugins,
  type AdmissionAttributes,
  type AdmissionMetrics,
  type AdmissionOperation,
  type AdmissionPlugin,
  type AdmissionStep,
  type WebhookCredentialResolver,
  type WebhookCredentials,
} from './admission';
export type { SignerAuthorizer } from './admission/certificates';

// Reaching a Service (webhooks, conversion webhooks, the aggregator's proxy).
export {
  createServiceResolver,
  DEFAULT_NODE_PORT_RANGE,
  DEFAULT_SERVICE_CIDR,
  KUBERNETES_SERVICE,
  kubernetesServiceNames,
  parseNodePortRange,
  type ResolvedService,
  type ServiceObjectReader,
  type ServiceOptions,
  type ServingAddress,
  type ServiceReference,
  type ServiceResolver,
} from './services';
export type { Service, ServicePort, ServiceSpec, ServiceStatus } from './resources/services';

// The resource types and their verb table, which routes, discovery and OpenAPI derive from.
export { builtinResources } from './resources';
export type { Deprecation, ResourceDefinition, Verb } from './resources/definition';
export { subresourcesOf, verbsOf } from './resources/endpoints';

// What the doors check and render as the core does: patch media types, list options, field
// errors, field selectors (authorization reads them too), tables.
export { PATCH_MEDIA_TYPES } from './patch/media-types';
export { validateListOptions } from './registry/list-options';
export { type FieldError, fieldErrors } from './validation/field-errors';
export { parseFieldSelector } from './selectors/field-selector';
export {
  type IncludeObject,
  type Table,
  type TableColumnDefinition,
  asPartialObjectMetadata,
  asPartialObjectMetadataList,
  buildTable,
  isList,
} from './table';

// For in-process clients of `CoreApi` (the controllers, authorization's indexes): informers, and
// the rules of the built-in types that a client applies as the core does.
export { Informer, SharedInformers, followResource, type InformerChange, type InformerView } from './informer';
export { NODES_GROUP, nodeIdentity } from './node-identity';
export { FINALIZER_FOREGROUND, FINALIZER_ORPHAN } from './registry/deletion';
export { labelSelectorMatches } from './validation/selectors';
export { semanticEqual } from './validation/equality';
// API Priority and Fairness' default configuration and status condition (its configuration controller).
export { flowControlBootstrap, type BootstrapObjects, type FlowControlBootstrap } from './resources/flowcontrol-bootstrap';
export { FLOW_SCHEMA_CONDITION_DANGLING, type FlowSchemaCondition } from './resources/flowcontrol-types';
export { isPodReady, podReadyCondition, withDisruptionTarget, type PodCondition } from './resources/pods';
export type { NodeCondition, Taint, Toleration } from './resources/nodes';
export { emptyBudgetStatus, withDisruptionAllowed, type PodDisruptionBudget, type PodDisruptionBudgetStatus } from './resources/poddisruptionbudgets';
export type { Endpoints, EndpointSubset, EndpointAddress, EndpointPort } from './resources/endpoints-objects';
export { MAX_SLICE_ENDPOINTS, type EndpointSlice, type Endpoint, type EndpointSlicePort } from './resources/endpointslices';
export {
  AVAILABLE,
  DEFAULT_SERVICE_PORT,
  apiServiceCondition,
  apiServiceName,
  isAPIServiceAvailable,
  isLocalAPIService,
  localAvailableCondition,
  withAPIServiceCondition,
  type APIService,
  type APIServiceCondition,
  type APIServiceReference,
  type APIServiceSpec,
} from './resources/apiservices';
export {
  builtinSigners,
  parseCertificateRequest,
  pemBlocks,
  type CertificateSigningRequest,
  type CsrCondition,
  type ParsedCsr,
} from './resources/certificatesigningrequests';
export { typeCheckPolicy } from './admission/policy/type-check';
// API Priority and Fairness: the objects the request filter (src/flowcontrol) reads.
export {
  FLOW_SCHEMA_CATCH_ALL,
  FLOW_SCHEMA_EXEMPT,
  FLOWCONTROL_WILDCARD,
  PRIORITY_LEVEL_CATCH_ALL,
  PRIORITY_LEVEL_EXEMPT,
  RESPONSE_HEADER_FLOW_SCHEMA_UID,
  RESPONSE_HEADER_PRIORITY_LEVEL_UID,
  type FlowSchema,
  type NonResourcePolicyRule,
  type PolicyRulesWithSubjects,
  type PriorityLevelConfiguration,
  type ResourcePolicyRule,
  type Subject,
} from './resources/flowcontrol-types';

// CEL and names as the core checks them, for the configuration files of authentication and
// authorization.
export { compileExpression, type CompiledExpression } from './admission/cel';
export { celCompileError } from './validation/cel';
export { isDns1123Subdomain } from './validation/names';
