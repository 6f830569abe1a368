/**
 * The generic store: one per resource type, configured by its ResourceDefinition, owning the
 * whole lifecycle (STYLE.md practice 2): system metadata, the type's strategy, validation,
 * compare-and-swap writes on the store, deletion with finalizers, and translation of storage
 * errors into Status errors. Reads (get/list/watch) live in resource-reads.ts.
 */
import { randomUUID } from 'node:crypto';
import type { ApiObject, DeleteOptions, DeleteResult, ManagedFieldsEntry, Patch, RequestContext, WriteOptions, WriteResult } from '../api';
import type { ResourceDefinition, StrategyContext } from '../resources/definition';
import type { KeyValue } from '../../store';
import { StoreError } from '../../store';
import {
  OPTIMISTIC_LOCK_MESSAGE,
  StatusError,
  alreadyExists,
  badRequest,
  conflict,
  internalError,
  invalid,
  notFound,
  serviceUnavailable,
  gone,
  timeout,
} from '../../status';
import { rfc3339 } from '../../clock';
import { fieldErrors, type FieldError } from '../validation/field-errors';
import { validateObjectMeta, validateObjectMetaUpdate } from '../validation/metadata';
import { objectKey } from './keys';
import { decodeFromStorage, deepCopy, encodeForStorage } from './object-codec';
import {
  fieldManagerScope,
  keepManagedFieldsTimes,
  managerFromUserAgent,
  precomputedOnCreate,
  updateManagedFields,
  withPrecomputedOnCreate,
} from './managed-fields';
import { managedFieldsAfterUpdate } from '../apply';
import { type PatchHost, applyObject, patchObject } from '../patch/requests';
import { type ScaleHost, type ScaleWrite, writeScale } from '../patch/scale-request';
import { getScale, scaleFromBody } from './scale';
import { checkApplyPatch, checkPatchedFields, resourceType } from '../validation/field-validation';
import { parseResourceVersion } from './list-options';
import { ResourceReads, type RegistryDeps } from './resource-reads';
import { DeleteFlow } from './delete-flow';

/** Called before a namespaced object is created: NamespaceLifecycle admission (404 / 403). */
export type NamespaceGate = (namespace: string, def: ResourceDefinition, name: string) => Promise<void>;

/** How a delete runs: the `AllowUnsafeMalformedObjectDeletion` gate, and whether this is the unsafe delete. */
export interface DeleteMode {
  unsafeDeletionGate?: boolean;
  unsafe?: boolean;
}

/** Which part of the object a write addresses: the main resource or its `/status`. */
export type WriteScope = 'main' | 'status' | 'finalize';

/** Computes the new object from the current one (undefined when absent). Pure; may be retried. */
export type TryUpdate = (current: ApiObject | undefined) => ApiObject | Promise<ApiObject>;

const NAME_CHARS = 'bcdfghjklmnpqrstvwxz2456789';
const GENERATED_SUFFIX = 5;
const MAX_GENERATE_ATTEMPTS = 8;

function randomSuffix(): string {
  let s = '';
  for (let i = 0; i < GENERATED_SUFFIX; i++) s += NAME_CHARS[Math.floor(Math.random() * NAME_CHARS.length)];
  return s;
}

function isDryRun(options: { dryRun?: string[] }): boolean {
  return (options.dryRun ?? []).includes('All');
}

export class ResourceStore extends ResourceReads {
  constructor(
    def: ResourceDefinition,
    deps: RegistryDeps,
    private readonly namespaceGate?: NamespaceGate,
  ) {
    super(def, deps);
  }

  private strategyContext(): StrategyContext {
    return { naming: this.deps.naming, now: this.deps.clock.now() };
  }

  private manager(options: WriteOptions, ctx: RequestContext): string {
    return options.fieldManager || managerFromUserAgent(ctx.userAgent);
  }

  /** Check `apiVersion`/`kind` of a body and align its namespace with the request's (upstream's handler rules). */
  checkBody(obj: ApiObject, namespace: string | undefined): ApiObject {
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
      throw badRequest(`the object provided is unrecognized (must be of type ${this.def.kind})`);
    }
    const expected = this.apiVersion;
    if (obj.apiVersion !== undefined && obj.apiVersion !== '' && obj.apiVersion !== expected) {
      throw badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${expected})`);
    }
    if (obj.kind !== undefined && obj.kind !== '' && obj.kind !== this.def.kind) {
      throw badRequest(
        `the object provided is unrecognized (must be of type ${this.def.kind}): no kind "${String(obj.kind)}" is registered for version "${expected}"`,
      );
    }
    const copy = deepCopy(obj);
    copy.apiVersion = expected;
    copy.kind = this.def.kind;
    const meta = (copy.metadata ??= {});
    if (typeof meta !== 'object' || Array.isArray(meta)) throw badRequest('metadata: must be an object');
    const requested = this.def.namespaced ? namespace ?? '' : '';
    const own = meta.namespace ?? '';
    if (own !== requested) {
      if (own === '' || requested === '') meta.namespace = requested || undefined;
      else throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    if (!this.def.namespaced) delete meta.namespace;
    return copy;
  }

  private validateNew(obj: ApiObject): FieldError[] {
    const sctx = this.strategyContext();
    return [
      ...validateObjectMeta(obj.metadata ?? {}, { namespaced: this.def.namespaced, nameRule: this.def.nameRule }),
      ...(this.def.validate?.(obj, sctx) ?? []),
    ];
  }

  private throwIfInvalid(errors: FieldError[], name: string): void {
    if (errors.length > 0) throw invalid(this.groupKind, name, errors);
  }

  async create(namespace: string | undefined, body: ApiObject, options: WriteOptions, ctx: RequestContext): Promise<WriteResult> {
    const obj = this.checkBody(body, namespace);
    const meta = obj.metadata!;
    const now = this.deps.clock.now();
    const sctx = this.strategyContext();
    meta.uid = randomUUID();
    meta.creationTimestamp = rfc3339(now);
    delete meta.resourceVersion;
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    delete meta.selfLink;
    if (this.def.tracksGeneration) meta.generation = 1;
    else delete meta.generation;
    this.def.defaults?.(obj);
    // Ownership of the decoded, defaulted object, before the strategy (upstream's create handler order).
    meta.managedFields = this.managedFieldsOnCreate(obj, options, ctx, now);
    if (meta.managedFields.length === 0) delete meta.managedFields;
    this.def.prepareForCreate?.(obj, sctx);
    const generated = !meta.name && !!meta.generateName;
    if (generated) meta.name = `${meta.generateName!.slice(0, 63 - GENERATED_SUFFIX)}${randomSuffix()}`;
    this.throwIfInvalid(this.validateNew(obj), meta.name ?? '');
    if (this.def.namespaced && this.namespaceGate) await this.namespaceGate(meta.namespace!, this.def, meta.name!);

    if (isDryRun(options)) {
      // Upstream's dry-run storage still refuses a name that is taken.
      const existing = await this.deps.store.get(objectKey(this.def.resource, meta.namespace, meta.name!)).catch((err: unknown) => {
        throw this.storageError(err, meta.name!);
      });
      if (existing.kv) throw alreadyExists(this.groupResource, meta.name!);
      return { object: obj, created: true };
    }
    for (let attempt = 1; ; attempt++) {
      try {
        const kv = await this.deps.store.create(objectKey(this.def.resource, meta.namespace, meta.name!), encodeForStorage(obj));
        return { object: decodeFromStorage(kv), created: true };
      } catch (err) {
        if (StoreError.is(err, 'exists')) {
          if (generated && attempt < MAX_GENERATE_ATTEMPTS) {
            meta.name = `${meta.generateName!.slice(0, 63 - GENERATED_SUFFIX)}${randomSuffix()}`;
            continue;
          }
          throw alreadyExists(this.groupResource, meta.name!);
        }
        throw this.storageError(err, meta.name!);
      }
    }
  }

  /**
   * The compare-and-swap loop (upstream's GuaranteedUpdate): read, compute, write guarded by
   * the read's revision, and on a conflict recompute from the value the store returned.
   * An unchanged object is not written (no new resourceVersion), as upstream does.
   */
  async guaranteedUpdate(
    namespace: string | undefined,
    name: string,
    tryUpdate: TryUpdate,
    options: { dryRun?: string[]; allowCreate?: boolean },
  ): Promise<WriteResult> {
    const key = objectKey(this.def.resource, namespace, name);
    let current: KeyValue | undefined;
    try {
      current = (await this.deps.store.get(key)).kv;
    } catch (err) {
      throw this.storageError(err, name);
    }
    for (;;) {
      const currentObj = current ? decodeFromStorage(current) : undefined;
      if (!currentObj && !options.allowCreate) throw notFound(this.groupResource, name);
      const next = await tryUpdate(currentObj ? deepCopy(currentObj) : undefined);
      if (isDryRun(options)) return { object: next, created: !currentObj };
      const bytes = encodeForStorage(next);
      try {
        if (!current) {
          const kv = await this.deps.store.create(key, bytes);
          return { object: decodeFromStorage(kv), created: true };
        }
        if (Buffer.compare(Buffer.from(bytes), Buffer.from(encodeForStorage(currentObj!))) === 0) {
          return { object: currentObj!, created: false };
        }
        const kv = await this.deps.store.update(key, bytes, current.modRevision);
        return { object: decodeFromStorage(kv), created: false };
      } catch (err) {
        if (StoreError.is(err, 'conflict') || StoreError.is(err, 'exists')) {
          current = err.current;
          continue;
        }
        if (StoreError.is(err, 'not-found')) {
          current = undefined;
          continue;
        }
        throw this.storageError(err, name);
      }
    }
  }

  /**
   * Turn a client's full object (PUT, or the result of a patch) into the object to store,
   * given the current one. `scope` selects the main strategy or the status sub-strategy.
   * The writer's ownership is computed after defaults and before the strategy, as upstream's
   * handlers run the field manager; `managedFields` is given when it already ran (apply, /scale).
   */
  prepareUpdate(
    body: ApiObject,
    current: ApiObject,
    scope: WriteScope,
    manager: string,
    requireResourceVersion: boolean,
    managedFields?: ManagedFieldsEntry[],
  ): ApiObject {
    const obj = this.checkBody(body, current.metadata?.namespace);
    const meta = obj.metadata!;
    const cur = current.metadata!;
    const name = cur.name!;
    // upstream's checkName: the object must name itself as the URL does.
    if ((meta.name ?? '') !== name) {
      throw badRequest(`the name of the object (${meta.name ?? ''}) does not match the name on the URL (${name})`);
    }
    const rv = meta.resourceVersion;
    if (rv === undefined || rv === '') {
      if (requireResourceVersion && !this.def.allowUnconditionalUpdate) {
        // upstream names the resource, not the kind, in this error.
        throw invalid({ group: this.def.group, kind: this.def.resource }, name, [fieldErrors.invalid('metadata.resourceVersion', 0, 'must be specified for an update')]);
      }
    } else {
      parseResourceVersion(rv);
      if (rv !== cur.resourceVersion) throw conflict(this.groupResource, name, OPTIMISTIC_LOCK_MESSAGE);
    }
    // System fields come from the stored object (upstream's BeforeUpdate): a missing uid is the
    // stored one, a different one fails validation; timestamps and deletion marks cannot change.
    if (!meta.uid) meta.uid = cur.uid;
    meta.creationTimestamp = cur.creationTimestamp;
    meta.resourceVersion = cur.resourceVersion;
    if (cur.deletionTimestamp) meta.deletionTimestamp = cur.deletionTimestamp;
    if (cur.deletionGracePeriodSeconds !== undefined && meta.deletionGracePeriodSeconds === undefined) {
      meta.deletionGracePeriodSeconds = cur.deletionGracePeriodSeconds;
    }
    if (cur.generation !== undefined) meta.generation = cur.generation;
    else delete meta.generation;
    if (meta.generateName === undefined && cur.generateName !== undefined) meta.generateName = cur.generateName;
    if (meta.managedFields === undefined && cur.managedFields !== undefined) meta.managedFields = cur.managedFields;
    delete meta.selfLink;

    const sctx = this.strategyContext();
    this.def.defaults?.(obj);
    const entries = managedFields ?? this.managedFieldsAfterWrite(current, obj, scope, manager);
    if (entries.length > 0) meta.managedFields = entries;
    else delete meta.managedFields;
    const sub = scope === 'main' ? undefined : this.def[scope]!;
    if (sub) sub.prepareForUpdate(obj, current, sctx);
    else this.def.prepareForUpdate?.(obj, current, sctx);
    if (this.def.tracksGeneration && scope === 'main' && JSON.stringify(obj.spec) !== JSON.stringify(current.spec)) {
      meta.generation = (cur.generation ?? 0) + 1;
    }
    const errors = [...validateObjectMetaUpdate(meta, cur), ...this.validateNew(obj)];
    if (sub) errors.push(...(sub.validateUpdate?.(obj, current, sctx) ?? []));
    else errors.push(...(this.def.validateUpdate?.(obj, current, sctx) ?? []));
    this.throwIfInvalid(errors, name);
    keepManagedFieldsTimes(obj, current);
    return obj;
  }

  /** managedFields after a non-apply write by `manager` (operation `Update`). */
  private managedFieldsAfterWrite(current: ApiObject | undefined, next: ApiObject, scope: WriteScope, manager: string): ManagedFieldsEntry[] {
    const fm = fieldManagerScope(this.def, this.apiVersion, scope === 'main' ? '' : scope, this.deps.clock.now(), this.deps.naming);
    return fm ? managedFieldsAfterUpdate(current, next, manager, fm) : (next.metadata?.managedFields ?? []);
  }

  /** managedFields of a created object: the creator's, or those an apply that creates it computed. */
  private managedFieldsOnCreate(obj: ApiObject, options: WriteOptions, ctx: RequestContext, now: number): ManagedFieldsEntry[] {
    return precomputedOnCreate(options) ?? updateManagedFields(undefined, obj, { manager: this.manager(options, ctx), apiVersion: this.apiVersion, subresource: '' }, now);
  }

  /** PUT on the main resource or `/status`: update, or create where the type allows it. */
  async update(
    namespace: string | undefined,
    name: string,
    body: ApiObject,
    options: WriteOptions,
    ctx: RequestContext,
    scope: WriteScope = 'main',
  ): Promise<WriteResult> {
    const checked = this.checkBody(body, namespace);
    if ((checked.metadata!.name ?? '') !== name) {
      throw badRequest(`the name of the object (${checked.metadata!.name ?? ''}) does not match the name on the URL (${name})`);
    }
    const manager = this.manager(options, ctx);
    let result: WriteResult;
    try {
      result = await this.guaranteedUpdate(namespace, name, (current) => this.prepareUpdate(checked, current!, scope, manager, true), {
        dryRun: options.dryRun,
      });
    } catch (err) {
      // PUT of an absent object creates it where the type allows (upstream AllowCreateOnUpdate).
      if (!(scope === 'main' && this.def.allowCreateOnUpdate && StatusError.is(err, 'NotFound'))) throw err;
      return this.create(namespace, checked, options, ctx);
    }
    return this.finishIfFinalized(result, namespace, name, options);
  }

  /**
   * PATCH of the main resource or `/status` (core/patch/requests.ts): JSON, merge and strategic
   * merge patches go through the update path; apply goes through the field manager and
   * creates the object when it is absent.
   */
  async patch(
    namespace: string | undefined,
    name: string,
    patch: Patch,
    options: WriteOptions,
    ctx: RequestContext,
    scope: WriteScope = 'main',
  ): Promise<WriteResult> {
    const manager = this.manager(options, ctx);
    const type = resourceType(this.deps.naming, this.def);
    const host: PatchHost = {
      apiVersion: this.apiVersion,
      kind: this.def.kind,
      namespaced: this.def.namespaced,
      groupResource: this.groupResource,
      metaGroup: this.deps.naming.groups.meta,
      schemaType: type,
      fieldManagerScope: (sub) => fieldManagerScope(this.def, this.apiVersion, sub, this.deps.clock.now(), this.deps.naming),
      guaranteedUpdate: (tryUpdate, allowCreate) => this.guaranteedUpdate(namespace, name, tryUpdate, { dryRun: options.dryRun, allowCreate }),
      prepareUpdate: (body, current, managedFields) => this.prepareUpdate(body, current, scope, manager, false, managedFields),
      create: (object, managedFields) => this.create(namespace, object, withPrecomputedOnCreate(options, managedFields), ctx),
      checkPatched: type ? (p, patched) => checkPatchedFields({ patch: p, patched, type, directive: options.fieldValidation, ctx }) : undefined,
      checkApplied: (p) => checkApplyPatch(p, options.fieldValidation, ctx),
    };
    const req = { name, subresource: scope === 'main' ? '' : scope, patch, manager, options, ctx };
    const result = patch.type === 'apply' ? await applyObject(host, req) : await patchObject(host, req);
    return this.finishIfFinalized(result, namespace, name, options);
  }

  /** PUT or PATCH of `/scale` (core/patch/scale-request.ts); answers with the Scale. */
  async writeScale(namespace: string | undefined, name: string, write: ScaleWrite, options: WriteOptions, ctx: RequestContext): Promise<WriteResult> {
    const manager = this.manager(options, ctx);
    const scaleDef = this.def.scale!;
    const host: ScaleHost = {
      apiVersion: this.apiVersion,
      groupResource: this.groupResource,
      now: () => this.deps.clock.now(),
      toScale: (obj) => getScale(this, obj),
      checkScale: (body, n) => scaleFromBody(body, n, namespace),
      setReplicas: (obj, replicas) => scaleDef.setSpecReplicas(obj, replicas),
      guaranteedUpdate: (tryUpdate, allowCreate) => this.guaranteedUpdate(namespace, name, tryUpdate, { dryRun: options.dryRun, allowCreate }),
      prepareUpdate: (body, current, managedFields) => this.prepareUpdate(body, current, 'main', manager, false, managedFields),
    };
    return writeScale(host, { name, write, manager, options, ctx });
  }

  /** An update that removed the last finalizer of a terminating object removes it (SPEC "Object deletion"). */
  private async finishIfFinalized(result: WriteResult, namespace: string | undefined, name: string, options: { dryRun?: string[] }): Promise<WriteResult> {
    const meta = result.object.metadata ?? {};
    if (isDryRun(options) || !meta.deletionTimestamp || (meta.finalizers ?? []).length > 0 || this.keepsTerminating(result.object)) return result;
    try {
      await this.deps.store.delete(objectKey(this.def.resource, namespace, name), Number(meta.resourceVersion));
    } catch (err) {
      if (!StoreError.is(err, 'not-found') && !StoreError.is(err, 'conflict')) throw this.storageError(err, name);
    }
    return result;
  }

  /** Types that hold their own finalizers outside metadata (namespaces' spec.finalizers) stay until those are gone. */
  private keepsTerminating(obj: ApiObject): boolean {
    return this.def.pendingFinalizers?.(obj) ?? false;
  }

  /**
   * DELETE of one object (delete-flow.ts): preconditions, graceful deletion, the garbage
   * collector's finalizers, Terminating while finalizers remain, dry run. `unsafe` is the
   * checked `ignoreStoreReadErrorWithClusterBreakingPotential`: remove an undecodable object.
   */
  async delete(namespace: string | undefined, name: string, options: DeleteOptions, mode: DeleteMode = {}): Promise<DeleteResult> {
    const flow = new DeleteFlow(
      {
        def: this.def,
        groupResource: this.groupResource,
        store: this.deps.store,
        clock: this.deps.clock,
        unsafeDeletion: mode.unsafeDeletionGate ?? false,
        storageError: (err, n) => this.storageError(err, n),
      },
      namespace,
      name,
      options,
    );
    return mode.unsafe ? flow.runUnsafe() : flow.run();
  }

  /** Translate a storage failure into a Status error (STYLE.md practice 4). */
  storageError(err: unknown, name: string): StatusError {
    if (err instanceof StatusError) return err;
    if (StoreError.is(err)) {
      switch (err.code) {
        case 'exists':
          return alreadyExists(this.groupResource, name);
        case 'not-found':
          return notFound(this.groupResource, name);
        case 'conflict':
          return conflict(this.groupResource, name, OPTIMISTIC_LOCK_MESSAGE);
        case 'compacted':
          return gone(`too old resource version: ${err.revision ?? ''}`);
        case 'future-revision':
          return timeout('Too large resource version', 1);
        case 'unavailable':
          return serviceUnavailable(`storage is unavailable: ${err.message}`);
      }
    }
    return internalError(err instanceof Error ? err.message : String(err));
  }
}
