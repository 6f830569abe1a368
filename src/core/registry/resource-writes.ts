/**
 * Writes of one resource type, owning their whole lifecycle: system metadata, the type's
 * strategy and validation, admission, compare-and-swap writes on the store, deletion with
 * finalizers, and translation of storage errors into Status errors. Configured by the type's
 * ResourceDefinition, never subclassed. Patches, applies and `/scale` writes are orchestrated
 * in patch-request.ts and scale-request.ts on top of `guaranteedUpdate` and `prepareUpdate`.
 */
import { randomUUID } from 'node:crypto';
import { type ApiObject, type DeleteOptions, type DeleteResult, type ManagedFieldsEntry, type Owned, type WriteResult, handOver } from '../api';
import type { ResourceDefinition, StrategyContext } from '../resources/definition';
import type { Admission } from '../admission';
import { GENERATED_SUFFIX_LENGTH, randomNameSuffix } from '../../util/generated-names';
import type { Naming } from '../../naming';
import type { Clock } from '../../clock';
import { type KeyValue, type Store, StoreError } from '../../store';
import {
  OPTIMISTIC_LOCK_MESSAGE,
  type GroupKind,
  type GroupResource,
  StatusError,
  alreadyExists,
  badRequest,
  conflict,
  internalError,
  invalid,
  notFound,
} from '../../status';
import { rfc3339 } from '../../clock';
import { fieldErrors, type FieldError } from '../validation/field-errors';
import { checkBodyFields } from '../validation/field-validation';
import { jsonValueKind } from '../validation/unknown-fields-go';
import { validateObjectMeta, validateObjectMetaUpdate } from '../validation/metadata';
import { objectKey, storedResource } from '../storage/keys';
import { type ObjectForm, encodeCreatedForStorage, objectForm } from '../storage/object-codec';
import { type SchemaRegistry, schemaRegistry } from '../../schema';
import { deepCopy, jsonEqual } from '../../util/json-values';
import { CreatedManagedFields, fieldManagerScope, keepManagedFieldsTimes, updateManagedFields } from './managed-fields';
import { managedFieldsAfterUpdate } from '../apply';
import { parseResourceVersion } from './list-options';
import { DeleteFlow } from './delete-flow';
import { storageError } from './storage-errors';
import type { PendingWrite, WrittenObjects } from '../cache/written-objects';
import { freezeForAdoption } from '../cache/cached-object';
import { type Frozen, deepFreeze } from '../../util/frozen';
import { type WriteLifecycle, type WriteRequest, type WriteScope, admissionAttributes, isDryRun, strategyScope } from './write-request';

/**
 * The object just written, as a read would return it: the store keeps the bytes encoded from
 * it, so decoding them again would only rebuild it; it gains the write's resourceVersion. Where
 * the watch cache already adopted it (`written`, WriteDeps.written), it is the cache's, as is.
 */
function asWritten(obj: ApiObject, kv: KeyValue, written: PendingWrite | undefined): ApiObject {
  const adopted = written?.adopted;
  if (adopted) return adopted;
  obj.metadata = { ...obj.metadata, resourceVersion: String(kv.modRevision) };
  return obj;
}

export interface WriteDeps {
  store: Store;
  naming: Naming;
  clock: Clock;
  /** The core's memo of created objects' managedFields by shape (managed-fields.ts); without it every create is walked. */
  createdFields?: CreatedManagedFields;
  /** The admission chain every write runs through. */
  admission: Admission;
  /**
   * Where a door's written object is offered to the watch cache, which then takes it instead of
   * decoding its bytes (core/cache/written-objects.ts); the object is frozen when taken.
   */
  written?: WrittenObjects;
  /**
   * The watch cache's object at a key (shared) and its revision, when the cache holds one: where
   * an update starts (guaranteedUpdate).
   */
  cached?: (resource: string, key: string) => { object: Frozen<ApiObject>; revision: number } | undefined;
  /** The type's allocations around its writes (Services), given by the core for that type alone. */
  lifecycle?: WriteLifecycle;
}

/** How a delete runs: the `AllowUnsafeMalformedObjectDeletion` gate, and whether this is the unsafe delete. */
export interface DeleteMode {
  unsafeDeletionGate?: boolean;
  unsafe?: boolean;
}

/**
 * One round of an update (guaranteedUpdate): the next object from the current one (undefined
 * when absent). Pure; may be retried. A round that only reads the current object (`reads`:
 * prepareUpdate, every patch type, the field manager) is given the shared object itself; one
 * that changes it into the next (`changes`: a pod's binding) is given a copy of its own.
 */
export type UpdateRound =
  | { readonly reads: (current: Frozen<ApiObject> | undefined) => ApiObject | Promise<ApiObject> }
  | { readonly changes: (current: ApiObject | undefined) => ApiObject | Promise<ApiObject> };

/** One step of an update: the object a client sent (or a patch produced) over the stored one. */
export interface UpdateStep {
  /** The next object, this round's to change. */
  body: Owned<ApiObject>;
  current: Frozen<ApiObject>;
  /** Given when the field manager already ran (apply, `/scale`); otherwise computed as operation `Update`. */
  managedFields?: ManagedFieldsEntry[];
  /** `body` passed checkBody already. */
  checked?: boolean;
}

const GENERATED_SUFFIX = GENERATED_SUFFIX_LENGTH;
const MAX_GENERATE_ATTEMPTS = 8;
const randomSuffix = randomNameSuffix;

/** Settle what the lifecycle began in the request's update rounds so far. */
async function settle(req: WriteRequest, success: boolean): Promise<void> {
  for (const finish of req.pendingFinishes.splice(0)) await finish(success);
}

/** upstream's checkName: the object must name itself as the URL does. */
export function checkName(obj: ApiObject, name: string): void {
  const own = obj.metadata?.name ?? '';
  if (own !== name) throw badRequest(`the name of the object (${own}) does not match the name on the URL (${name})`);
}

export class ResourceWrites {
  readonly apiVersion: string;
  readonly groupResource: GroupResource;
  readonly groupKind: GroupKind;
  private readonly registry: SchemaRegistry;
  /** How objects of this version are kept in the store (as they are, or as another version's). */
  private readonly form: ObjectForm;

  /**
   * Created objects' field sets by shape: the core's, shared by the built-in types; a custom
   * resource's type keeps its own, since its schema is its definition's and a changed
   * definition is a new type.
   */
  private ownCreatedFields?: CreatedManagedFields;

  private get createdFields(): CreatedManagedFields | undefined {
    if (!this.def.applyType) return this.deps.createdFields;
    this.ownCreatedFields ??= new CreatedManagedFields();
    return this.ownCreatedFields;
  }

  constructor(
    readonly def: ResourceDefinition,
    private readonly deps: WriteDeps,
  ) {
    this.registry = schemaRegistry(deps.naming);
    this.form = objectForm(def);
    this.apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
    this.groupResource = { group: def.group, resource: def.resource };
    this.groupKind = { group: def.group, kind: def.kind };
  }

  get naming(): Naming {
    return this.deps.naming;
  }

  now(): number {
    return this.deps.clock.now();
  }

  private strategyContext(req?: Pick<WriteRequest, 'ctx'>): StrategyContext {
    return { naming: this.deps.naming, now: this.deps.clock.now(), user: req?.ctx.user };
  }

  /**
   * Check `apiVersion`/`kind` of a body and align its namespace with the request's (upstream's
   * handler rules); the body is the write's own, set right in place and returned.
   */
  checkBody(body: Owned<ApiObject>, namespace: string | undefined): ApiObject {
    const obj = body.value;
    if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
      throw badRequest(`the object provided is unrecognized (must be of type ${this.def.kind})`);
    }
    const expected = this.apiVersion;
    // Go reads apiVersion and kind as strings first (a null is the empty string).
    for (const field of ['apiVersion', 'kind'] as const) {
      const v: unknown = obj[field];
      if (v !== undefined && v !== null && typeof v !== 'string') {
        throw badRequest(
          `couldn't get version/kind; json parse error: json: cannot unmarshal ${jsonValueKind(v)} into Go struct field .${field} of type string`,
        );
      }
    }
    if (obj.apiVersion !== undefined && obj.apiVersion !== null && obj.apiVersion !== '' && obj.apiVersion !== expected) {
      throw badRequest(`the API version in the data (${String(obj.apiVersion)}) does not match the expected API version (${expected})`);
    }
    if (obj.kind !== undefined && obj.kind !== null && obj.kind !== '' && obj.kind !== this.def.kind) {
      throw badRequest(
        `the object provided is unrecognized (must be of type ${this.def.kind}): no kind "${String(obj.kind)}" is registered for version "${expected}"`,
      );
    }
    obj.apiVersion = expected;
    obj.kind = this.def.kind;
    const meta = (obj.metadata ??= {});
    if (typeof meta !== 'object' || Array.isArray(meta)) throw badRequest('metadata: must be an object');
    const requested = this.def.namespaced ? (namespace ?? '') : '';
    const own = meta.namespace ?? '';
    if (own !== requested) {
      if (own === '' || requested === '') meta.namespace = requested || undefined;
      else throw badRequest('the namespace of the provided object does not match the namespace sent on the request');
    }
    if (!this.def.namespaced) delete meta.namespace;
    return obj;
  }

  /** Metadata and the type's `validate`; on an update, `validate` only where the type keeps it for updates too. */
  private validateNew(obj: ApiObject, { update = false } = {}): FieldError[] {
    const sctx = this.strategyContext();
    const typeRules = update && this.def.validateOnlyOnCreate ? undefined : this.def.validate;
    return [
      ...validateObjectMeta(obj.metadata ?? {}, { namespaced: this.def.namespaced, nameRule: this.def.nameRule, customResource: this.def.genericMetadata }),
      ...(typeRules?.(obj, sctx) ?? []),
    ];
  }

  /**
   * An object a webhook patched is decoded again, as upstream decodes the patched JSON into its
   * type: a value of the wrong type is the server's error (500), unknown fields are dropped,
   * defaults fill what the patch removed.
   */
  private redecode(obj: ApiObject, req: Pick<WriteRequest, 'ctx'>): void {
    try {
      checkBodyFields(this.deps.naming, this.def, handOver(obj), 'Ignore', req.ctx);
    } catch (err) {
      throw internalError(StatusError.is(err) ? (err.status.message ?? '') : String(err));
    }
    this.def.defaults?.(obj);
  }

  private throwIfInvalid(errors: FieldError[], name: string): void {
    if (errors.length > 0) throw invalid(this.groupKind, name, errors);
  }

  /**
   * Create, in upstream's order: system metadata and defaults, the creator's ownership,
   * mutating admission, the strategy, validation, validating admission, then the store
   * (create-if-absent; a generated name is retried on collision).
   */
  async create(req: WriteRequest, body: Owned<ApiObject>): Promise<WriteResult> {
    const obj = this.checkBody(body, req.namespace);
    let meta = obj.metadata!;
    const now = this.deps.clock.now();
    const sctx = this.strategyContext(req);
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
    meta.managedFields =
      req.appliedManagedFields ??
      updateManagedFields(
        undefined,
        obj,
        { manager: req.manager, apiVersion: this.apiVersion, subresource: '' },
        now,
        this.deps.naming,
        this.createdFields,
        this.def.applyType?.(),
      );
    if (meta.managedFields.length === 0) delete meta.managedFields;
    const admission = this.deps.admission;
    // The body may name the namespace where the request does not (an in-process or gRPC caller).
    const where = { ...req, namespace: meta.namespace };
    // The chain answers synchronously when no plugin waits (nearly every write): no await then.
    const admitted = admission.admit(admissionAttributes(this.def, where, 'CREATE', meta.name ?? '', { object: obj }));
    if (admitted === true || (admitted !== false && (await admitted))) this.redecode(obj, req);
    meta = obj.metadata ??= {};
    const lifecycle = this.deps.lifecycle;
    if (!lifecycle) return this.createAdmitted(req, obj, sctx, where);
    const finish = await lifecycle.beginCreate(obj, isDryRun(req.options));
    try {
      const result = await this.createAdmitted(req, obj, sctx, where);
      await finish(true);
      return result;
    } catch (err) {
      await finish(false);
      throw err;
    }
  }

  /** The rest of a create once mutating admission (and the type's lifecycle) ran: the strategy, validation, the store. */
  private async createAdmitted(req: WriteRequest, obj: ApiObject, sctx: StrategyContext, where: WriteRequest): Promise<WriteResult> {
    const admission = this.deps.admission;
    const meta = obj.metadata!;
    this.def.prepareForCreate?.(obj, sctx);
    const generated = !meta.name && !!meta.generateName;
    if (generated) meta.name = `${meta.generateName!.slice(0, 63 - GENERATED_SUFFIX)}${randomSuffix()}`;
    this.throwIfInvalid(this.validateNew(obj), meta.name ?? '');
    const validated = admission.validate(admissionAttributes(this.def, where, 'CREATE', meta.name!, { object: obj }));
    if (validated) await validated;

    if (isDryRun(req.options)) {
      // Upstream's dry-run storage still refuses a name that is taken.
      const existing = await this.deps.store.get(objectKey(storedResource(this.def), meta.namespace, meta.name!)).catch((err: unknown) => {
        throw storageError(err, this.groupResource, meta.name!);
      });
      if (existing.kv) throw alreadyExists(this.groupResource, meta.name!);
      const read = this.form.asRead(obj);
      return { object: read instanceof Promise ? await read : read, created: true };
    }
    // The watch cache holds the stored version's objects: only those are offered to it.
    const written = req.handedOver && this.form.asIs ? this.deps.written : undefined;
    for (let attempt = 1; ; attempt++) {
      const key = objectKey(storedResource(this.def), meta.namespace, meta.name!);
      // A door's body is answered (JSON, mostly) and let go of: stored in upstream's order, its
      // answer is spliced from the same text instead of encoded again.
      const created = written ? encodeCreatedForStorage(this.registry, obj) : undefined;
      if (created?.plain) freezeForAdoption(obj);
      const encoded = created?.bytes ?? this.form.encode(obj);
      const bytes = encoded instanceof Promise ? await encoded : encoded;
      const pending = written?.expect(key, bytes, obj, created?.plain ?? false);
      try {
        const kv = await this.deps.store.create(key, bytes);
        const read = this.form.asRead(obj);
        const object = asWritten(read instanceof Promise ? await read : read, kv, pending);
        return created ? { object, created: true, json: () => created.answer(kv.modRevision) } : { object, created: true };
      } catch (err) {
        if (pending) written!.forget(pending);
        if (StoreError.is(err, 'exists')) {
          if (generated && attempt < MAX_GENERATE_ATTEMPTS) {
            meta.name = `${meta.generateName!.slice(0, 63 - GENERATED_SUFFIX)}${randomSuffix()}`;
            continue;
          }
          throw alreadyExists(this.groupResource, meta.name!);
        }
        throw storageError(err, this.groupResource, meta.name!);
      }
    }
  }

  /**
   * The compare-and-swap loop (upstream's GuaranteedUpdate): read, compute, write guarded by
   * the read's revision, and on a conflict recompute from the value the store returned.
   * An unchanged object is not written (no new resourceVersion), as upstream does.
   *
   * As upstream's cacher does, the first round starts from the watch cache's copy of the object
   * when it has one (no store read), and reads the store only where that copy may have been
   * stale: the guarded write failed (the store's value comes back with the failure), the update
   * refused it (the refusal stands if the store holds that same revision), or it found nothing
   * to change. A dry run reads the store, as upstream's dry-run storage does.
   *
   * The object a round starts from is shared (`Frozen`): the cache's, or the store's value frozen
   * as read. A request whose body was handed over may be answered with it when nothing changed;
   * any other caller gets a copy of its own.
   */
  async guaranteedUpdate(req: WriteRequest, round: UpdateRound, allowCreate = false): Promise<WriteResult> {
    if (!this.deps.lifecycle) return this.updateRounds(req, round, allowCreate);
    try {
      const result = await this.updateRounds(req, round, allowCreate);
      await settle(req, true);
      return result;
    } catch (err) {
      await settle(req, false);
      throw err;
    }
  }

  private async updateRounds(req: WriteRequest, round: UpdateRound, allowCreate: boolean): Promise<WriteResult> {
    const written = req.handedOver && this.form.asIs ? this.deps.written : undefined;
    const name = req.name;
    const key = objectKey(storedResource(this.def), req.namespace, name);
    const inCache = this.form.asIs && !isDryRun(req.options) ? this.deps.cached?.(storedResource(this.def), key) : undefined;
    // An earlier storage version's object is decoded from the store into this version's.
    const cached = inCache && this.form.isOwn(inCache.object) ? inCache : undefined;
    // The object the round starts from, with the revision its write is guarded by (and whether
    // the store holds it as an earlier storage version's); `fresh` once read from the store.
    let base: { object: Frozen<ApiObject>; modRevision: number; earlier: boolean } | undefined = cached && {
      object: cached.object,
      modRevision: cached.revision,
      earlier: false,
    };
    let fresh = !cached;
    const fromStore = async (kv: KeyValue | undefined): Promise<void> => {
      const found = kv && this.form.decodeCurrent(kv);
      const decoded = found instanceof Promise ? await found : found;
      base = kv && decoded && { object: deepFreeze(decoded.object), modRevision: kv.modRevision, earlier: decoded.earlier };
      fresh = true;
    };
    const readStore = async (): Promise<void> => {
      let kv: KeyValue | undefined;
      try {
        kv = (await this.deps.store.get(key)).kv;
      } catch (err) {
        throw storageError(err, this.groupResource, name);
      }
      await fromStore(kv);
    };
    if (fresh) await readStore();
    for (;;) {
      const current = base;
      if (!current && !allowCreate) throw notFound(this.groupResource, name);
      let next: ApiObject;
      try {
        next = await ('reads' in round ? round.reads(current?.object) : round.changes(current && deepCopy<ApiObject>(current.object)));
      } catch (err) {
        await settle(req, false);
        if (fresh) throw err;
        await readStore();
        if (base?.modRevision === current?.modRevision) throw err;
        continue;
      }
      if (isDryRun(req.options)) {
        const read = this.form.asRead(next);
        return { object: read instanceof Promise ? await read : read, created: !current };
      }
      // Unchanged as Go compares decoded objects (upstream compares its canonical encoding): key
      // order aside, which a merge or an apply may change. Nothing to encode or write, once the
      // store confirms the object it started from, unless that is an earlier storage version's.
      if (current && !current.earlier && jsonEqual(next, current.object)) {
        if (!fresh) await readStore();
        // Shared, so an in-process caller gets a copy of its own to change.
        if (base?.modRevision === current.modRevision) return { object: req.handedOver ? base.object : deepCopy<ApiObject>(base.object), created: false };
        continue;
      }
      const encoded = this.form.encode(next);
      const bytes = encoded instanceof Promise ? await encoded : encoded;
      const pending = written?.expect(key, bytes, next);
      try {
        if (!current) {
          const kv = await this.deps.store.create(key, bytes);
          const read = this.form.asRead(next);
          return { object: asWritten(read instanceof Promise ? await read : read, kv, pending), created: true };
        }
        const kv = await this.deps.store.update(key, bytes, current.modRevision);
        const read = this.form.asRead(next);
        return { object: asWritten(read instanceof Promise ? await read : read, kv, pending), created: false };
      } catch (err) {
        if (pending) written!.forget(pending);
        // A round that lost the race gives back what its lifecycle took; the next round begins again.
        if (StoreError.is(err, 'conflict') || StoreError.is(err, 'exists')) {
          await settle(req, false);
          await fromStore(err.current);
          continue;
        }
        if (StoreError.is(err, 'not-found')) {
          await settle(req, false);
          await fromStore(undefined);
          continue;
        }
        throw storageError(err, this.groupResource, name);
      }
    }
  }

  /**
   * Turn a client's full object (PUT, or the result of a patch) into the object to store, given
   * the current one: system fields from the stored object, defaults, the writer's ownership
   * (after defaults, before the strategy, as upstream's handlers run the field manager),
   * mutating admission, the strategy of the request's scope, validation, validating admission.
   */
  async prepareUpdate(req: WriteRequest, step: UpdateStep): Promise<ApiObject> {
    const { current } = step;
    const obj = step.checked ? step.body.value : this.checkBody(step.body, current.metadata?.namespace);
    let meta = obj.metadata!;
    const cur = current.metadata!;
    const name = cur.name!;
    checkName(obj, name);
    const rv = meta.resourceVersion;
    if (rv === undefined || rv === '') {
      if (req.requireResourceVersion && !this.def.allowUnconditionalUpdate) {
        // upstream names the resource, not the kind, in this error.
        throw invalid({ group: this.def.group, kind: this.def.resource }, name, [
          fieldErrors.invalid('metadata.resourceVersion', 0, 'must be specified for an update'),
        ]);
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

    const sctx = this.strategyContext(req);
    const scope = strategyScope(req);
    this.def.defaults?.(obj);
    const entries = step.managedFields ?? this.managedFieldsAfterWrite(current, obj, scope, req.manager);
    if (entries.length > 0) meta.managedFields = entries;
    else delete meta.managedFields;
    const admission = this.deps.admission;
    const admitted = admission.admit(admissionAttributes(this.def, req, 'UPDATE', name, { object: obj, oldObject: current }));
    if (admitted === true || (admitted !== false && (await admitted))) this.redecode(obj, req);
    meta = obj.metadata ??= {};
    if (scope === 'main' && this.deps.lifecycle) req.pendingFinishes.push(await this.deps.lifecycle.beginUpdate(obj, current, isDryRun(req.options)));
    const sub = scope === 'main' ? undefined : this.def[scope]!;
    if (sub) sub.prepareForUpdate(obj, current, sctx);
    else this.def.prepareForUpdate?.(obj, current, sctx);
    if (this.def.tracksGeneration && scope === 'main' && (this.def.specChanged ? this.def.specChanged(obj, current) : !jsonEqual(obj.spec, current.spec))) {
      meta.generation = (cur.generation ?? 0) + 1;
    }
    const errors = [...validateObjectMetaUpdate(meta, cur, { customResource: this.def.genericMetadata }), ...this.validateNew(obj, { update: true })];
    if (sub) errors.push(...(sub.validateUpdate?.(obj, current, sctx) ?? []));
    else errors.push(...(this.def.validateUpdate?.(obj, current, sctx) ?? []));
    this.throwIfInvalid(errors, name);
    const validated = admission.validate(admissionAttributes(this.def, req, 'UPDATE', name, { object: obj, oldObject: current }));
    if (validated) await validated;
    keepManagedFieldsTimes(obj, current);
    return obj;
  }

  /** managedFields after a non-apply write by `manager` (operation `Update`). */
  private managedFieldsAfterWrite(current: ApiObject | undefined, next: ApiObject, scope: WriteScope, manager: string): ManagedFieldsEntry[] {
    const fm = fieldManagerScope(this.def, this.apiVersion, scope === 'main' ? '' : scope, this.deps.clock.now(), this.deps.naming);
    return fm ? managedFieldsAfterUpdate(current, next, manager, fm) : (next.metadata?.managedFields ?? []);
  }

  /**
   * PUT on the main resource, `/status` or `/finalize`: update, or create where the type allows
   * it. `again` makes another body like `body` for a later round (an in-process caller's object
   * copied and checked afresh, core.ts): the first round then changes `body` itself. Without it
   * (a door's body, which exists once) `body` stays as checked and each round changes a copy.
   */
  async update(req: WriteRequest, body: Owned<ApiObject>, again?: () => Owned<ApiObject>): Promise<WriteResult> {
    const checked = this.checkBody(body, req.namespace);
    checkName(checked, req.name);
    let unused: Owned<ApiObject> | undefined = again ? body : undefined;
    const another = (): Owned<ApiObject> => (again ? again() : handOver(deepCopy(checked)));
    let result: WriteResult;
    try {
      // A door's PUT answers with the object written and lets go of it (WriteDeps.written).
      result = await this.guaranteedUpdate(req, {
        reads: (current) => {
          const own = unused;
          unused = undefined;
          return this.prepareUpdate(req, own ? { body: own, current: current!, checked: true } : { body: another(), current: current! });
        },
      });
    } catch (err) {
      // PUT of an absent object creates it where the type allows (upstream AllowCreateOnUpdate).
      if (!(req.subresource === '' && this.def.allowCreateOnUpdate && StatusError.is(err, 'NotFound'))) throw err;
      return this.create(req, unused ?? (again ? again() : body));
    }
    return this.finishIfFinalized(req, result);
  }

  /** An update that removed the last finalizer of a terminating object removes it (upstream's finalizer handling). */
  async finishIfFinalized(req: WriteRequest, result: WriteResult): Promise<WriteResult> {
    const meta = result.object.metadata ?? {};
    if (isDryRun(req.options) || !meta.deletionTimestamp || (meta.finalizers ?? []).length > 0 || this.keepsTerminating(result.object)) return result;
    try {
      await this.deps.store.delete(objectKey(storedResource(this.def), req.namespace, req.name), Number(meta.resourceVersion));
      await this.deps.lifecycle?.afterDelete(result.object);
    } catch (err) {
      if (!StoreError.is(err, 'not-found') && !StoreError.is(err, 'conflict')) throw storageError(err, this.groupResource, req.name);
    }
    return result;
  }

  /** Types that hold their own finalizers outside metadata (namespaces' spec.finalizers) stay until those are gone. */
  private keepsTerminating(obj: ApiObject): boolean {
    return this.def.pendingFinalizers?.(obj) ?? false;
  }

  /**
   * DELETE of one object (delete-flow.ts): mutating admission first (upstream's delete handler),
   * then preconditions, graceful deletion, the garbage collector's finalizers, Terminating while
   * finalizers remain, dry run. `unsafe` is the checked
   * `ignoreStoreReadErrorWithClusterBreakingPotential`: remove an undecodable object.
   */
  async delete(target: Pick<WriteRequest, 'namespace' | 'name' | 'ctx'>, options: DeleteOptions, mode: DeleteMode = {}): Promise<DeleteResult> {
    const req = { ...target, subresource: '' as const, options };
    const admission = this.deps.admission;
    await admission.admit(admissionAttributes(this.def, req, 'DELETE', target.name, {}));
    const flow = new DeleteFlow(
      {
        def: this.def,
        groupResource: this.groupResource,
        form: this.form,
        store: this.deps.store,
        clock: this.deps.clock,
        unsafeDeletion: mode.unsafeDeletionGate ?? false,
        validate: (stored) => admission.validate(admissionAttributes(this.def, req, 'DELETE', target.name, { oldObject: stored })),
        afterDelete: this.deps.lifecycle && ((removed) => this.deps.lifecycle!.afterDelete(removed)),
      },
      target.namespace,
      target.name,
      options,
    );
    return mode.unsafe ? flow.runUnsafe() : flow.run();
  }
}
