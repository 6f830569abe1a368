/**
 * One write request, as it travels down the write path: what the caller asked (target,
 * options, who), and what the registry derived from it once (the field manager, whether a
 * resourceVersion is required, which strategy applies). Every step of a create, update, patch,
 * apply or `/scale` write takes this one object instead of a list of positional flags.
 */
import type { ApiObject, ManagedFieldsEntry, RequestContext, WriteOptions } from '../api';
import type { AdmissionAttributes, AdmissionOperation, EquivalentResource } from '../admission';
import type { ResourceDefinition } from '../resources/definition';
import { managerFromUserAgent } from './managed-fields';

/** The part of an object a write addresses: the main resource or one of its subresources. */
export type WriteSubresource = '' | 'status' | 'scale' | 'finalize' | 'approval';

/** Which strategy prepares and validates the write: `/scale` writes go through the main one. */
export type WriteScope = 'main' | 'status' | 'finalize' | 'approval';

export interface WriteRequest {
  readonly namespace: string | undefined;
  /** The object's name from the URL; '' on a create, where the body names it. */
  readonly name: string;
  readonly subresource: WriteSubresource;
  readonly options: WriteOptions;
  readonly ctx: RequestContext;
  /** `fieldManager`, else derived from the User-Agent as upstream does. */
  readonly manager: string;
  /**
   * PUT must carry `metadata.resourceVersion` unless the type allows unconditional updates;
   * patches and applies need not (upstream's update and patch handlers).
   */
  readonly requireResourceVersion: boolean;
  /** Set when an apply turns into a create: the ownership the apply computed. */
  readonly appliedManagedFields?: ManagedFieldsEntry[];
  /**
   * The caller handed its body over (`Owned` at CoreApi: a door's): it only reads the answer, so
   * the object written may become the watch cache's (WriteDeps.written) and the answer need not
   * be a copy of its own. Otherwise the answer is the caller's to change.
   */
  readonly handedOver: boolean;
  /**
   * What the type's lifecycle began in this request's update rounds (a Service's allocations),
   * settled by the update once its write succeeded or failed (WriteLifecycle).
   */
  readonly pendingFinishes: FinishWrite[];
}

/** Called once the write a lifecycle hook began succeeded or failed. */
export type FinishWrite = (success: boolean) => Promise<void>;

/**
 * What the registry calls around the writes of a type that allocates outside its object
 * (upstream's BeginCreate, BeginUpdate and AfterDelete hooks; Services' IPs and node ports).
 */
export interface WriteLifecycle {
  /** After mutating admission, before the strategy of a create. */
  beginCreate(obj: ApiObject, dryRun: boolean): Promise<FinishWrite>;
  /** After mutating admission, before the strategy of an update of the main resource. */
  beginUpdate(obj: ApiObject, old: ApiObject, dryRun: boolean): Promise<FinishWrite>;
  /** After the object left the store. */
  afterDelete(obj: ApiObject): Promise<void>;
}

export interface WriteRequestInit {
  namespace: string | undefined;
  name?: string;
  subresource?: WriteSubresource;
  options: WriteOptions;
  ctx: RequestContext;
  requireResourceVersion?: boolean;
  handedOver?: boolean;
}

export function writeRequest(init: WriteRequestInit): WriteRequest {
  return {
    namespace: init.namespace,
    name: init.name ?? '',
    subresource: init.subresource ?? '',
    options: init.options,
    ctx: init.ctx,
    manager: init.options.fieldManager || managerFromUserAgent(init.ctx.userAgent),
    requireResourceVersion: init.requireResourceVersion ?? false,
    handedOver: init.handedOver ?? false,
    pendingFinishes: [],
  };
}

export function strategyScope(req: WriteRequest): WriteScope {
  return req.subresource === '' || req.subresource === 'scale' ? 'main' : req.subresource;
}

export function isDryRun(options: { dryRun?: string[] }): boolean {
  return (options.dryRun ?? []).includes('All');
}

/** What admission sees of this request writing `object` over `oldObject`. */
export function admissionAttributes(
  def: ResourceDefinition,
  req: Pick<WriteRequest, 'namespace' | 'subresource' | 'options' | 'ctx'>,
  operation: AdmissionOperation,
  name: string,
  objects: { object?: ApiObject; oldObject?: ApiObject },
): AdmissionAttributes {
  return {
    operation,
    group: def.group,
    version: def.version,
    kind: def.kind,
    resource: def.resource,
    subresource: req.subresource,
    namespace: def.namespaced ? req.namespace : undefined,
    name,
    // Named one by one rather than spread: every write builds one, and spreads of objects whose
    // members vary made V8 copy them the slow way.
    object: objects.object,
    oldObject: objects.oldObject,
    dryRun: isDryRun(req.options),
    user: req.ctx.user,
    options: req.options as Record<string, unknown>,
    warn: req.ctx.warnings ? (text) => void req.ctx.warnings!.push(text) : undefined,
    annotate: req.ctx.annotate,
    equivalents: def.equivalentVersions ? equivalentResources(def) : undefined,
  };
}

/** Shared by every server in the process: a pure memo keyed by definitions, which never change. */
const equivalentsByDef = new WeakMap<ResourceDefinition, readonly EquivalentResource[]>();

/** The definition's equivalent versions as admission sees them, made once per definition. */
function equivalentResources(def: ResourceDefinition): readonly EquivalentResource[] {
  let out = equivalentsByDef.get(def);
  if (!out) {
    out = (def.equivalentVersions ?? []).map((v) => {
      const slash = v.apiVersion.indexOf('/');
      return {
        group: slash < 0 ? '' : v.apiVersion.slice(0, slash),
        version: v.apiVersion.slice(slash + 1),
        kind: def.kind,
        resource: def.resource,
        toEquivalent: v.toThat,
        fromEquivalent: v.fromThat,
      };
    });
    equivalentsByDef.set(def, out);
  }
  return out;
}
