/**
 * `pods/binding` (and the legacy `bindings` collection): a scheduler assigns a pending pod to a
 * node. As upstream's BindingREST: the Binding names the pod, its target names the node; the pod
 * gets `spec.nodeName`, the Binding's annotations and a `PodScheduled=True` condition in one
 * compare-and-swap write, refused when the pod is already bound, being deleted or still gated.
 * The answer is a Success Status (201).
 */
import type { ApiObject, RequestContext, WriteOptions } from '../api';
import type { CreateHandler } from '../handlers';
import type { Clock } from '../../clock';
import { rfc3339 } from '../../clock';
import { StatusError, badRequest, conflict, successStatus, unclassifiedError } from '../../status';
import { fieldErrors } from '../validation/field-errors';
import type { ResourceWrites } from './resource-writes';
import { writeRequest } from './write-request';

interface Binding extends ApiObject {
  target?: { kind?: string; name?: string; apiVersion?: string; namespace?: string };
}

interface PodLike extends ApiObject {
  spec?: { nodeName?: string; schedulingGates?: unknown[] };
  status?: { conditions?: Array<{ type: string; status: string; lastProbeTime?: string | null; lastTransitionTime?: string | null }> };
}

/** upstream ValidatePodBinding; its errors are not a Status, so they answer as an unclassified 500. */
function validateBinding(binding: Binding): void {
  const errs = [];
  const kind = binding.target?.kind ?? '';
  if (kind !== '' && kind !== 'Node') errs.push(fieldErrors.notSupported('target.kind', kind, ['Node', '<empty>']));
  if (!binding.target?.name) errs.push(fieldErrors.required('target.name'));
  if (errs.length === 1) throw unclassifiedError(errs[0]!.message);
  if (errs.length > 1) throw unclassifiedError(`[${errs.map((e) => e.message).join(', ')}]`);
}

/** The pod with its node, the Binding's annotations and PodScheduled=True (upstream setPodNodeAndMetadata). */
function bindPod(pod: PodLike, binding: Binding, now: number): PodLike {
  const name = pod.metadata?.name ?? '';
  const refuse = (why: string) => conflict({ group: '', resource: 'pods/binding' }, name, why);
  const uid = binding.metadata?.uid;
  const podsResource = { group: '', resource: 'pods' };
  if (uid && uid !== pod.metadata?.uid) {
    throw conflict(podsResource, name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${pod.metadata?.uid ?? ''}`);
  }
  const rv = binding.metadata?.resourceVersion;
  if (rv && rv !== pod.metadata?.resourceVersion) {
    throw conflict(
      podsResource,
      name,
      `Precondition failed: ResourceVersion in precondition: ${rv}, ResourceVersion in object meta: ${pod.metadata?.resourceVersion ?? ''}`,
    );
  }
  if (pod.metadata?.deletionTimestamp) throw refuse(`pod ${name} is being deleted, cannot be assigned to a host`);
  if (pod.spec?.nodeName) throw refuse(`pod ${name} is already assigned to node "${pod.spec.nodeName}"`);
  if ((pod.spec?.schedulingGates ?? []).length > 0) throw refuse(`pod ${name} has non-empty .spec.schedulingGates`);
  (pod.spec ??= {}).nodeName = binding.target!.name!;
  const annotations = binding.metadata?.annotations;
  if (annotations && Object.keys(annotations).length > 0) pod.metadata = { ...pod.metadata, annotations: { ...pod.metadata?.annotations, ...annotations } };
  const status = (pod.status ??= {});
  const conditions = (status.conditions ??= []);
  const at = conditions.findIndex((c) => c.type === 'PodScheduled');
  const old = at >= 0 ? conditions[at]! : undefined;
  const scheduled = {
    type: 'PodScheduled',
    status: 'True',
    lastProbeTime: null,
    lastTransitionTime: old?.status === 'True' ? (old.lastTransitionTime ?? null) : rfc3339(now),
  };
  if (old) conditions[at] = scheduled;
  else conditions.push(scheduled);
  return pod;
}

/**
 * The handler of `pods/<name>/binding` (`parent` is the pod) and of the legacy
 * `namespaces/<ns>/bindings` collection (the Binding's own name names the pod).
 */
export function podBindingHandler(pods: () => ResourceWrites, clock: Clock): CreateHandler {
  return {
    async create(body: ApiObject, options: WriteOptions, ctx: RequestContext, parent?: ApiObject): Promise<ApiObject> {
      const binding = body as Binding;
      const namespace = parent?.metadata?.namespace ?? binding.metadata?.namespace;
      const name = parent?.metadata?.name ?? binding.metadata?.name ?? '';
      if (parent && binding.metadata?.name !== name) throw badRequest('name in URL does not match name in Binding object');
      if (parent && binding.metadata?.namespace && binding.metadata.namespace !== namespace) {
        throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
      }
      validateBinding(binding);
      const req = writeRequest({ namespace, name, options, ctx });
      try {
        // bindPod changes the pod it is given: a copy of its own.
        await pods().guaranteedUpdate(req, { changes: (current) => bindPod(current as PodLike, binding, clock.now()) });
      } catch (err) {
        if (StatusError.is(err)) throw err;
        throw conflict({ group: '', resource: 'pods/binding' }, name, err instanceof Error ? err.message : String(err));
      }
      // upstream answers with a bare Success Status (no code) and 201 Created.
      const { code: _code, ...status } = successStatus();
      return status as unknown as ApiObject;
    },
  };
}
