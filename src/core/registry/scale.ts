/**
 * The `/scale` subresource: an autoscaling/v1 Scale view of an object's replicas
 * (kubectl scale reads and patches it).
 */
import type { ApiObject } from '../api';
import { badRequest, invalid } from '../../status';
import { fieldErrors } from '../validation/field-errors';
import type { ResourceDefinition } from '../resources/definition';

export interface ScaleObject extends ApiObject {
  apiVersion: 'autoscaling/v1';
  kind: 'Scale';
  metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string; creationTimestamp?: string | null };
  spec: { replicas: number };
  status: { replicas: number; selector?: string };
}

export function getScale(def: ResourceDefinition, obj: ApiObject): ScaleObject {
  const scale = def.scale!;
  const meta = obj.metadata ?? {};
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: {
      name: meta.name!,
      namespace: meta.namespace,
      uid: meta.uid,
      resourceVersion: meta.resourceVersion,
      creationTimestamp: meta.creationTimestamp,
    },
    spec: { replicas: scale.specReplicas(obj) },
    status: { replicas: scale.statusReplicas(obj), selector: scale.selector(obj) },
  };
}

/** Check a Scale body from PUT or a patch result; returns it typed. */
export function scaleFromBody(body: ApiObject, name: string, namespace: string | undefined): ScaleObject {
  if (body.apiVersion !== undefined && body.apiVersion !== 'autoscaling/v1') {
    throw badRequest(`the API version in the data (${String(body.apiVersion)}) does not match the expected API version (autoscaling/v1)`);
  }
  if (body.kind !== undefined && body.kind !== 'Scale') {
    throw badRequest(`the object provided is unrecognized (must be of type Scale): no kind "${String(body.kind)}" is registered for version "autoscaling/v1"`);
  }
  const meta = body.metadata ?? {};
  if (meta.name !== undefined && meta.name !== name) {
    throw badRequest(`the name of the object (${meta.name}) does not match the name on the URL (${name})`);
  }
  if (meta.namespace && namespace && meta.namespace !== namespace) {
    throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
  }
  const spec = (body.spec ?? {}) as { replicas?: unknown };
  const replicas = spec.replicas ?? 0;
  if (typeof replicas !== 'number' || !Number.isInteger(replicas)) {
    throw badRequest(
      `Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal ${typeof replicas} into Go struct field ScaleSpec.spec.replicas of type int32`,
    );
  }
  if (replicas < 0) {
    throw invalid({ group: 'autoscaling', kind: 'Scale' }, name, [fieldErrors.invalid('spec.replicas', replicas, 'must be greater than or equal to 0')]);
  }
  return {
    apiVersion: 'autoscaling/v1',
    kind: 'Scale',
    metadata: { name, namespace, resourceVersion: meta.resourceVersion },
    spec: { replicas },
    status: { replicas: 0 },
  };
}
