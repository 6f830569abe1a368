/**
 * Writes to the `/scale` subresource (PUT, any PATCH, apply): the request addresses an
 * autoscaling/v1 Scale made from the object; its `spec.replicas` goes back into the object.
 * Field ownership is tracked on the Scale with subresource `scale` and carried over to the
 * object's managedFields as upstream's ScaleHandler does (core/apply/scale.ts).
 */
import type { ApiObject, ManagedFieldsEntry, Patch, RequestContext, WriteOptions, WriteResult } from '../api';
import { badRequest, conflict } from '../../status';
import {
  ApplyConflicts,
  ApplyValidationError,
  FieldSet,
  SCALE_API_VERSION,
  type ScaleMapping,
  applyConfiguration,
  conflictError,
  fieldElement,
  managedFieldsAfterUpdate,
  parentEntriesFromScale,
  scaleEntriesFromParent,
  unknownError,
} from '../apply';
import { schemaTypes } from '../../schema';
import { rfc3339 } from '../../clock';
import type { ScaleObject } from '../registry/scale';
import { applyPatch } from '../registry/patch';

/** What a `/scale` write needs from the resource's store. */
export interface ScaleHost {
  readonly apiVersion: string;
  readonly groupResource: { group: string; resource: string };
  now(): number;
  toScale(obj: ApiObject): ScaleObject;
  /** Check a Scale body (kind, name, namespace, replicas), as PUT does. */
  checkScale(body: ApiObject, name: string): ScaleObject;
  setReplicas(obj: ApiObject, replicas: number): void;
  guaranteedUpdate(tryUpdate: (current: ApiObject | undefined) => ApiObject, allowCreate: boolean): Promise<WriteResult>;
  prepareUpdate(body: ApiObject, current: ApiObject, managedFields: ManagedFieldsEntry[]): ApiObject;
}

/** How the new Scale comes about: a PUT body, a patch, or an apply. */
export type ScaleWrite = { readonly kind: 'put'; readonly body: ApiObject } | { readonly kind: 'patch'; readonly patch: Patch };

export interface ScaleRequest {
  readonly name: string;
  readonly write: ScaleWrite;
  readonly manager: string;
  readonly options: WriteOptions;
  readonly ctx: RequestContext;
}

/** upstream's replicas path mapping of the scalable built-in types. */
const REPLICAS_PATH = [fieldElement('spec'), fieldElement('replicas')];

function scaleScope(now: number) {
  const type = schemaTypes().get('autoscaling.v1.Scale')!;
  return { type, apiVersion: SCALE_API_VERSION, kind: 'Scale', subresource: 'scale', ignore: new FieldSet(), now: rfc3339(now) };
}

function gvk(config: ApiObject): string {
  const av = typeof config.apiVersion === 'string' ? config.apiVersion : '';
  const slash = av.indexOf('/');
  return `${slash < 0 ? '' : av.slice(0, slash)}/${slash < 0 ? av : av.slice(slash + 1)}, Kind=${typeof config.kind === 'string' ? config.kind : ''}`;
}

/** The new Scale and its managedFields. */
function nextScale(host: ScaleHost, req: ScaleRequest, oldScale: ScaleObject): { scale: ScaleObject; entries: ManagedFieldsEntry[] } {
  const scope = scaleScope(host.now());
  const { write } = req;
  if (write.kind === 'put' || write.patch.type !== 'apply') {
    const body = write.kind === 'put' ? write.body : applyPatch(write.patch, JSON.parse(JSON.stringify(oldScale)) as ApiObject, scope.type);
    const scale = host.checkScale(body, req.name);
    const withUid = body.metadata?.uid ? { ...scale, metadata: { ...scale.metadata, uid: body.metadata.uid } } : scale;
    return { scale: withUid, entries: managedFieldsAfterUpdate(oldScale, { ...body, spec: scale.spec }, req.manager, scope) };
  }
  const config = (write.patch.body ?? {}) as ApiObject;
  if (config.apiVersion !== SCALE_API_VERSION || config.kind !== 'Scale') throw badRequest(`invalid object type: ${gvk(config)}`);
  if (Array.isArray(config.metadata?.managedFields)) throw badRequest('metadata.managedFields must be nil');
  try {
    const applied = applyConfiguration(oldScale, config, req.manager, req.options.force === true, scope);
    const scale = host.checkScale(applied.object, req.name);
    return { scale, entries: applied.object.metadata?.managedFields ?? [] };
  } catch (err) {
    if (err instanceof ApplyConflicts) throw conflictError(err);
    if (err instanceof ApplyValidationError) {
      throw unknownError(`failed to create typed patch object (${config.metadata?.namespace ?? ''}/${config.metadata?.name ?? ''}; ${gvk(config)}): ${err.message}`);
    }
    throw err;
  }
}

/** Run a `/scale` write; answers with the Scale of the stored object. */
export async function writeScale(host: ScaleHost, req: ScaleRequest): Promise<WriteResult> {
  const mapping: ScaleMapping = { apiVersion: host.apiVersion, replicasPath: REPLICAS_PATH };
  const scaleResource = { group: host.groupResource.group, resource: `${host.groupResource.resource}/scale` };
  // `/scale` never creates: an absent object is the parent's 404, for applies too (upstream's ScaleREST).
  const result = await host.guaranteedUpdate((current) => {
    const oldScale = host.toScale(current!);
    const parentEntries = current!.metadata?.managedFields;
    oldScale.metadata = { ...oldScale.metadata, managedFields: scaleEntriesFromParent(parentEntries, mapping) } as ScaleObject['metadata'];
    const { scale, entries } = nextScale(host, req, oldScale);
    if (scale.metadata.uid && scale.metadata.uid !== current!.metadata?.uid) {
      throw conflict(scaleResource, req.name, `Precondition failed: UID in precondition: ${scale.metadata.uid}, UID in object meta: ${current!.metadata?.uid}`);
    }
    const parent: ApiObject = JSON.parse(JSON.stringify(current)) as ApiObject;
    host.setReplicas(parent, scale.spec.replicas);
    if (scale.metadata.resourceVersion) parent.metadata = { ...parent.metadata, resourceVersion: scale.metadata.resourceVersion };
    return host.prepareUpdate(parent, current!, parentEntriesFromScale(parentEntries, entries, mapping));
  }, false);
  return { object: host.toScale(result.object), created: false };
}

