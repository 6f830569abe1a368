/**
 * apiextensions/v1 CustomResourceDefinition: the type itself, as upstream's apiextensions-apiserver
 * serves it (registry/customresourcedefinition strategy, v1 SetDefaults_*, validation). Serving
 * the custom resources a definition describes is core/customresources' business; this module
 * stores definitions.
 *
 * Cluster-scoped, `crd`/`crds`, in the `api-extensions` category, with a `/status` the
 * apiextensions controllers write: the main resource keeps the stored status (adding the storage
 * version to `status.storedVersions`), `/status` keeps the stored spec.
 */
import type { ApiObject } from '../api';
import type { JSONSchemaProps } from '../validation/schema/types';
import { checkSchemaDefaults } from '../validation/schema/check-defaults';
import { deepCopy } from '../../util/json-values';
import { defineTyped, STANDARD_VERBS } from './common';
import type { DefineResource } from './definition';
import {
  type DefaultsCheck,
  validateCustomResourceDefinition,
  validateCustomResourceDefinitionStatus,
  validateCustomResourceDefinitionUpdate,
} from './customresourcedefinition-validation';

export interface CustomResourceDefinitionNames {
  plural?: string;
  singular?: string;
  shortNames?: string[];
  kind?: string;
  listKind?: string;
  categories?: string[];
}

export interface ServiceReference {
  namespace?: string;
  name?: string;
  path?: string | null;
  port?: number | null;
}

export interface WebhookClientConfig {
  url?: string | null;
  service?: ServiceReference | null;
  /** Base64 PEM. */
  caBundle?: string;
}

export interface WebhookConversion {
  clientConfig?: WebhookClientConfig | null;
  conversionReviewVersions?: string[] | null;
}

export interface CustomResourceConversion {
  /** `None` or `Webhook`. */
  strategy?: string;
  webhook?: WebhookConversion | null;
}

export interface CustomResourceValidation {
  openAPIV3Schema?: JSONSchemaProps | null;
}

export interface CustomResourceSubresourceScale {
  specReplicasPath?: string;
  statusReplicasPath?: string;
  labelSelectorPath?: string | null;
}

export interface CustomResourceSubresources {
  status?: Record<string, never> | null;
  scale?: CustomResourceSubresourceScale | null;
}

export interface CustomResourceColumnDefinition {
  name?: string;
  type?: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath?: string;
}

export interface SelectableField {
  jsonPath?: string;
}

export interface CustomResourceDefinitionVersion {
  name?: string;
  served?: boolean;
  storage?: boolean;
  deprecated?: boolean;
  deprecationWarning?: string | null;
  schema?: CustomResourceValidation | null;
  subresources?: CustomResourceSubresources | null;
  additionalPrinterColumns?: CustomResourceColumnDefinition[] | null;
  selectableFields?: SelectableField[] | null;
}

export interface CustomResourceDefinitionSpec {
  group?: string;
  names?: CustomResourceDefinitionNames;
  /** `Cluster` or `Namespaced`. */
  scope?: string;
  versions?: CustomResourceDefinitionVersion[] | null;
  conversion?: CustomResourceConversion | null;
  preserveUnknownFields?: boolean;
}

/** `Established`, `NamesAccepted`, `NonStructuralSchema`, `Terminating`, `KubernetesAPIApprovalPolicyConformant`. */
export interface CustomResourceDefinitionCondition {
  type: string;
  status: string;
  lastTransitionTime?: string | null;
  reason?: string;
  message?: string;
}

export interface CustomResourceDefinitionStatus {
  conditions?: CustomResourceDefinitionCondition[] | null;
  acceptedNames?: CustomResourceDefinitionNames;
  storedVersions?: string[] | null;
}

export interface CustomResourceDefinition extends ApiObject {
  spec?: CustomResourceDefinitionSpec;
  status?: CustomResourceDefinitionStatus;
}

/** upstream's v1 SetDefaults_CustomResourceDefinition (and its spec's and service reference's). */
export function defaultCustomResourceDefinition(crd: CustomResourceDefinition): void {
  const spec = (crd.spec ??= {});
  const names = spec.names;
  if (names?.kind) {
    if (!names.singular) names.singular = names.kind.toLowerCase();
    if (!names.listKind) names.listKind = `${names.kind}List`;
  }
  spec.conversion ??= { strategy: 'None' };
  const service = spec.conversion.webhook?.clientConfig?.service;
  if (service && (service.port === undefined || service.port === null)) service.port = 443;
  const storage = (spec.versions ?? []).find((v) => v.storage);
  if ((crd.status?.storedVersions ?? []).length === 0 && storage) (crd.status ??= {}).storedVersions = [storage.name ?? ''];
}

/** upstream's PrepareForCreate and PrepareForUpdate: the first storage version joins the stored versions. */
function recordStorageVersion(crd: CustomResourceDefinition): void {
  const storage = (crd.spec?.versions ?? []).find((v) => v.storage);
  if (!storage) return;
  const status = (crd.status ??= {});
  const stored = status.storedVersions ?? [];
  if (!stored.includes(storage.name ?? '')) status.storedVersions = [...stored, storage.name ?? ''];
}

/**
 * The status Go writes for an empty CustomResourceDefinitionStatus: its three fields have no
 * omitempty (nil conditions are `null`, the accepted names' plural and kind are `""`).
 */
function emptyStatus(): CustomResourceDefinitionStatus {
  return { conditions: null, acceptedNames: { plural: '', kind: '' }, storedVersions: null };
}

/**
 * The defaults' checks of a structural schema (structuraldefaulting.ValidateDefaults). The
 * junctors' defaults are ValidateStructural's, reported before this runs.
 */
const checkDefaults: DefaultsCheck = (schema, ext, path, requirePruned) => checkSchemaDefaults(schema, ext, path, { requirePruned, structural: false });

export const defineCustomResourceDefinitions: DefineResource = (naming) =>
  defineTyped<CustomResourceDefinition>({
    group: naming.groups.apiextensions,
    version: 'v1',
    kind: 'CustomResourceDefinition',
    resource: 'customresourcedefinitions',
    singular: 'customresourcedefinition',
    namespaced: false,
    shortNames: ['crd', 'crds'],
    categories: ['api-extensions'],
    verbs: STANDARD_VERBS,
    nameRule: 'dns1123Subdomain',
    genericMetadata: true,
    tracksGeneration: true,
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: false,
    defaults: defaultCustomResourceDefinition,
    prepareForCreate(crd) {
      crd.status = emptyStatus();
      recordStorageVersion(crd);
    },
    prepareForUpdate(crd, old) {
      crd.status = deepCopy(old.status) ?? emptyStatus();
      recordStorageVersion(crd);
    },
    // An update is checked by ValidateCustomResourceDefinitionUpdate alone, whose rules ratchet
    // on what the stored definition already held.
    validateOnlyOnCreate: true,
    validate: (crd, ctx) => validateCustomResourceDefinition(crd, ctx.naming, checkDefaults),
    validateUpdate: (crd, old, ctx) => validateCustomResourceDefinitionUpdate(crd, old, ctx.naming, checkDefaults),
    status: {
      prepareForUpdate(crd, old) {
        crd.spec = deepCopy(old.spec);
      },
      validateUpdate: (crd) => validateCustomResourceDefinitionStatus(crd),
    },
    // Upstream's CRD REST Delete: a definition is never removed at once. The first delete marks
    // it Terminating with the cleanup finalizer; the core's finalizer (core/customresources)
    // removes its objects, then the finalizer, and the store removes the definition.
    pendingFinalizers: (crd) => !crd.metadata?.deletionTimestamp,
    prepareForDelete(crd) {
      const finalizer = naming.finalizers.customResourceCleanup;
      const meta = (crd.metadata ??= {});
      if (!(meta.finalizers ?? []).includes(finalizer)) meta.finalizers = [...(meta.finalizers ?? []), finalizer];
      const status = (crd.status ??= emptyStatus());
      const conditions = (status.conditions ?? []).filter((c) => c.type !== 'Terminating');
      conditions.push({
        type: 'Terminating',
        status: 'True',
        lastTransitionTime: meta.deletionTimestamp ?? null,
        reason: 'InstanceDeletionPending',
        message: 'CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon',
      });
      status.conditions = conditions;
    },
  });
