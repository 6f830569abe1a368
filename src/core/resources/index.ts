/**
 * The built-in types Keelson serves, one module each (as upstream keeps one registry strategy
 * per type). Adding a type touches its module and this list.
 */
import type { Naming } from '../../naming';
import type { ResourceDefinition } from './definition';
import { defineClusterRoleBindings } from './clusterrolebindings';
import { defineClusterRoles } from './clusterroles';
import { defineConfigMaps } from './configmaps';
import { defineEndpoints } from './endpoints-objects';
import { defineEndpointSlices } from './endpointslices';
import { defineCoreEvents, defineEvents } from './events';
import { defineNamespaces } from './namespaces';
import { defineBindings, definePods } from './pods';
import { defineNodes } from './nodes';
import { defineLeases } from './leases';
import { defineCertificateSigningRequests } from './certificatesigningrequests';
import { defineCustomResourceDefinitions } from './customresourcedefinitions';
import { defineAPIServices } from './apiservices';
import { definePriorityClasses } from './priorityclasses';
import { defineFlowSchemas, defineFlowSchemasV1beta3 } from './flowschemas';
import { definePriorityLevelConfigurations, definePriorityLevelConfigurationsV1beta3 } from './prioritylevelconfigurations';
import { definePodDisruptionBudgets } from './poddisruptionbudgets';
import { defineMutatingWebhookConfigurations, defineValidatingWebhookConfigurations } from './webhookconfigurations';
import { defineValidatingAdmissionPolicies, defineValidatingAdmissionPolicyBindings } from './validatingadmissionpolicies';
import { defineReplicaSets } from './replicasets';
import { defineRoleBindings } from './rolebindings';
import { defineRoles } from './roles';
import { defineSecrets } from './secrets';
import { defineServiceAccounts } from './serviceaccounts';
import { defineServices } from './services';
import {
  defineLocalSubjectAccessReviews,
  defineSelfSubjectAccessReviews,
  defineSelfSubjectRulesReviews,
  defineSelfSubjectReviews,
  defineSubjectAccessReviews,
  defineTokenReviews,
} from './reviews';

const BUILTIN = [
  defineNamespaces,
  definePods,
  defineBindings,
  defineNodes,
  defineSecrets,
  defineConfigMaps,
  defineServiceAccounts,
  defineServices,
  defineReplicaSets,
  defineEndpoints,
  defineEndpointSlices,
  defineRoles,
  defineRoleBindings,
  defineClusterRoles,
  defineClusterRoleBindings,
  defineCoreEvents,
  defineEvents,
  defineLeases,
  defineCertificateSigningRequests,
  definePriorityClasses,
  defineFlowSchemas,
  definePriorityLevelConfigurations,
  defineFlowSchemasV1beta3,
  definePriorityLevelConfigurationsV1beta3,
  definePodDisruptionBudgets,
  defineMutatingWebhookConfigurations,
  defineValidatingWebhookConfigurations,
  defineValidatingAdmissionPolicies,
  defineValidatingAdmissionPolicyBindings,
  defineCustomResourceDefinitions,
  defineAPIServices,
  defineTokenReviews,
  defineSelfSubjectReviews,
  defineSubjectAccessReviews,
  defineSelfSubjectAccessReviews,
  defineSelfSubjectRulesReviews,
  defineLocalSubjectAccessReviews,
];

export function builtinResources(naming: Naming): ResourceDefinition[] {
  return BUILTIN.map((define) => define(naming));
}

export type { ResourceDefinition, DefineResource, NameRule, Verb, StrategyContext } from './definition';
export type { Namespace } from './namespaces';
export type { Pod, PodStatus, PodCondition } from './pods';
export type { Node, NodeSpec, NodeStatus, NodeCondition, Taint } from './nodes';
export { nodeIsReady, TAINT_EFFECTS } from './nodes';
export type { Lease, LeaseSpec } from './leases';
export type { PriorityClass } from './priorityclasses';
export type { PodDisruptionBudget, PodDisruptionBudgetSpec, PodDisruptionBudgetStatus } from './poddisruptionbudgets';
export { SYSTEM_PRIORITY_CLASSES } from './priorityclasses';
export * from './flowcontrol-types';
export { flowControlBootstrap, type BootstrapObjects, type FlowControlBootstrap } from './flowcontrol-bootstrap';
export type { PodSpec, PodTemplateSpec, Container } from './pod-spec';
export type { Secret } from './secrets';
export type { ConfigMap } from './configmaps';
export type { Endpoints, EndpointSubset, EndpointAddress, EndpointPort } from './endpoints-objects';
export type { EndpointSlice, Endpoint, EndpointConditions, EndpointSlicePort } from './endpointslices';
export { MAX_SLICE_ENDPOINTS } from './endpointslices';
export type { ServiceAccount } from './serviceaccounts';
export type { Service, ServicePort, ServiceSpec, ServiceStatus, ServiceType } from './services';
export type { ReplicaSet, ReplicaSetSpec, ReplicaSetStatus, ReplicaSetCondition } from './replicasets';
export type { Role } from './roles';
export type { ClusterRole, AggregationRule } from './clusterroles';
export type { RoleBinding } from './rolebindings';
export type { ClusterRoleBinding } from './clusterrolebindings';
export type { PolicyRule, RoleRef, Subject } from './rbac-common';
export type { CoreEvent, Event, ObjectReference, EventSeries } from './events';
export type { Rule, RuleWithOperations, MatchCondition } from './admission-rules';
export type {
  MutatingWebhook,
  MutatingWebhookConfiguration,
  ServiceReference,
  ValidatingWebhook,
  ValidatingWebhookConfiguration,
  Webhook,
  WebhookClientConfig,
} from './webhookconfigurations';
export { ACCEPTED_ADMISSION_REVIEW_VERSIONS } from './webhookconfigurations';
export type {
  AuditAnnotation,
  Condition,
  ExpressionWarning,
  MatchResources,
  NamedRuleWithOperations,
  ParamKind,
  ParamRef,
  TypeChecking,
  ValidatingAdmissionPolicy,
  ValidatingAdmissionPolicyBinding,
  ValidatingAdmissionPolicyBindingSpec,
  ValidatingAdmissionPolicySpec,
  ValidatingAdmissionPolicyStatus,
  Validation,
  Variable,
} from './validatingadmissionpolicies';
export { FINALIZER_NAMESPACE } from './namespaces';
export type {
  CustomResourceColumnDefinition,
  CustomResourceConversion,
  CustomResourceDefinition,
  CustomResourceDefinitionCondition,
  CustomResourceDefinitionNames,
  CustomResourceDefinitionSpec,
  CustomResourceDefinitionStatus,
  CustomResourceDefinitionVersion,
  CustomResourceSubresources,
  CustomResourceSubresourceScale,
  CustomResourceValidation,
  SelectableField,
} from './customresourcedefinitions';
export { defaultCustomResourceDefinition } from './customresourcedefinitions';
export type { APIService, APIServiceCondition, APIServiceReference, APIServiceSpec } from './apiservices';
export {
  AVAILABLE,
  DEFAULT_SERVICE_PORT,
  apiServiceCondition,
  apiServiceName,
  isAPIServiceAvailable,
  isLocalAPIService,
  localAvailableCondition,
  withAPIServiceCondition,
} from './apiservices';
