/**
 * What the custom resource machinery reads of a CustomResourceDefinition (apiextensions/v1),
 * as plain JSON. The type's full shape and its validation are the CustomResourceDefinition
 * module's (core/resources/customresourcedefinitions.ts); this is the view of it that turns a
 * definition into served types.
 */
import type { ApiObject } from '../api';
import type { JSONSchemaProps } from '../validation/schema/types';
import type { PrinterColumn } from '../table';

export interface CrdNames {
  plural: string;
  singular?: string;
  shortNames?: string[];
  kind: string;
  listKind?: string;
  categories?: string[];
}

export interface CrdScale {
  specReplicasPath: string;
  statusReplicasPath: string;
  labelSelectorPath?: string;
}

export interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: JSONSchemaProps };
  subresources?: { status?: Record<string, never>; scale?: CrdScale };
  additionalPrinterColumns?: PrinterColumn[];
  selectableFields?: { jsonPath: string }[];
}

export interface CrdCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface CustomResourceDefinitionObject extends ApiObject {
  spec: {
    group: string;
    names: CrdNames;
    scope: 'Namespaced' | 'Cluster';
    versions: CrdVersion[];
    conversion?: {
      strategy?: string;
      webhook?: {
        clientConfig?: { url?: string; caBundle?: string; service?: { namespace: string; name: string; path?: string; port?: number } };
        conversionReviewVersions?: string[];
      };
    };
    preserveUnknownFields?: boolean;
  };
  status?: {
    conditions?: CrdCondition[];
    acceptedNames?: CrdNames;
    storedVersions?: string[];
  };
}

/** A condition of the definition's status, if set. */
export function crdCondition(crd: CustomResourceDefinitionObject, type: string): CrdCondition | undefined {
  return crd.status?.conditions?.find((c) => c.type === type);
}

export function crdConditionTrue(crd: CustomResourceDefinitionObject, type: string): boolean {
  return crdCondition(crd, type)?.status === 'True';
}
