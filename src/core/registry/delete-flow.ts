/**
 * One delete request against the store (upstream's generic Store.Delete and its corrupt-object
 * deleter), using the rules in deletion.ts:
 *
 * 1. read; an object that cannot be decoded is a 500 (worded as a corrupt object when the
 *    `AllowUnsafeMalformedObjectDeletion` gate is on);
 * 2. preconditions and the graceful decision; an object already being deleted gracefully is
 *    left as it is;
 * 3. with a graceful period, pending finalizers or a change of the GC finalizers, one guarded
 *    update: the finalizers the propagation policy asks for, and the deletion mark — the
 *    object stays Terminating until its finalizers are gone (or its grace period ends);
 * 4. otherwise (or with a zero grace period) one guarded delete.
 *
 * A dry run stops before each write and answers with the would-be result. A conflict with a
 * concurrent writer restarts from the read.
 */
import type { ApiObject, DeleteOptions, DeleteResult } from '../api';
import type { ResourceDefinition } from '../resources/definition';
import type { Clock } from '../../clock';
import { type KeyValue, type Store, StoreError } from '../../store';
import { type GroupResource, type Status, type StatusError, internalError, invalid, notFound, successStatus } from '../../status';
import { fieldErrors } from '../validation/field-errors';
import { objectKey, storedResource } from '../storage/keys';
import { type ObjectForm, tryDecodeFromStorage, undecodableObject } from '../storage/object-codec';
import { deepCopy, jsonEqual } from '../../util/json-values';
import { storageError } from './storage-errors';
import { isDryRun } from './write-request';
import { beforeDelete, defaultGarbageCollectionPolicy, gcFinalizers, markAsDeleting } from './deletion';

export interface DeletionHost {
  readonly def: ResourceDefinition;
  readonly groupResource: GroupResource;
  /** How the type's objects are kept in the store. */
  readonly form: ObjectForm;
  readonly store: Store;
  readonly clock: Clock;
  /** The `AllowUnsafeMalformedObjectDeletion` gate. */
  readonly unsafeDeletion: boolean;
  /** Validating admission of the deletion, given the stored object (upstream's deleteValidation). */
  readonly validate?: (stored: ApiObject) => void | Promise<void>;
  /** After the object left the store (upstream's AfterDelete: a Service's IPs and ports are released). */
  readonly afterDelete?: (removed: ApiObject) => Promise<void>;
}

/** Upstream's storage.NewCorruptObjError for an undecodable value, as the 500 it becomes. */
function corruptObject(kv: KeyValue, cause: string): StatusError {
  return internalError(
    `StorageError: corrupt object, Code: 7, Key: ${kv.key}, ResourceVersion: 0, AdditionalErrorMsg: object not decodable revision=${kv.modRevision}: ${cause}`,
  );
}

/** Has the object finalizers of its own (metadata, or the type's own such as a namespace's spec.finalizers)? */
function hasPendingFinalizers(def: ResourceDefinition, obj: ApiObject): boolean {
  return (obj.metadata?.finalizers ?? []).length > 0 || (def.pendingFinalizers?.(obj) ?? false);
}

class Restart extends Error {}

export class DeleteFlow {
  private readonly key: string;

  constructor(
    private readonly host: DeletionHost,
    namespace: string | undefined,
    private readonly name: string,
    private readonly requested: DeleteOptions,
  ) {
    this.key = objectKey(storedResource(host.def), namespace, name);
  }

  /** The answer upstream's finalizeDelete gives: the object for types that return it, else a Success Status. */
  private finished(obj: ApiObject): ApiObject | Status {
    if (this.host.def.returnDeletedObject) return obj;
    const { def } = this.host;
    return successStatus({ name: this.name, group: def.group, kind: def.resource, uid: obj.metadata?.uid });
  }

  private result(object: ApiObject | Status, deleted: boolean): DeleteResult {
    // 202 only when the legacy orphanDependents=false asked for cascading and the object stays for now.
    return { object, httpStatus: !deleted && this.requested.orphanDependents === false ? 202 : 200 };
  }

  private async read(): Promise<KeyValue> {
    let kv: KeyValue | undefined;
    try {
      kv = (await this.host.store.get(this.key)).kv;
    } catch (err) {
      throw storageError(err, this.host.groupResource, this.name);
    }
    if (!kv) throw notFound(this.host.groupResource, this.name);
    return kv;
  }

  async run(): Promise<DeleteResult> {
    for (;;) {
      try {
        return await this.attempt();
      } catch (err) {
        if (!(err instanceof Restart)) throw err;
      }
    }
  }

  private async attempt(): Promise<DeleteResult> {
    const { def, clock } = this.host;
    const kv = await this.read();
    const tried = this.host.form.tryDecode(kv);
    const decoded = tried instanceof Promise ? await tried : tried;
    if (!decoded.ok) {
      if (this.host.unsafeDeletion) throw corruptObject(kv, decoded.cause);
      throw undecodableObject(kv.key, decoded.cause);
    }
    const stored = decoded.object;
    await this.host.validate?.(stored);
    const obj = deepCopy(stored);
    const options: DeleteOptions = deepCopy(this.requested);
    const now = clock.now();
    const { graceful, pending } = beforeDelete(def, obj, options, now);
    if (pending) return this.result(this.finished(stored), false);

    const meta = obj.metadata!;
    const gc = gcFinalizers(meta, options, defaultGarbageCollectionPolicy(def));
    if (graceful || hasPendingFinalizers(def, stored) || gc.changed) {
      if (gc.changed) {
        if (gc.finalizers.length) meta.finalizers = gc.finalizers;
        else delete meta.finalizers;
      }
      const pendingFinalizers = hasPendingFinalizers(def, obj);
      if (graceful || pendingFinalizers) {
        if (!graceful) {
          const first = !meta.deletionTimestamp;
          markAsDeleting(meta, now);
          if (first) def.prepareForDelete?.(obj);
        }
        const written = await this.write(kv, stored, obj);
        if (pendingFinalizers || (options.gracePeriodSeconds ?? 0) > 0) return this.result(written, false);
        // Graceful with a zero period: remove what was just written; someone else may have won the race.
        return this.remove(written, true);
      }
    }
    return this.remove(stored, false);
  }

  /** The guarded update of a deletion mark; unchanged objects are not written (no new resourceVersion). */
  private async write(kv: KeyValue, stored: ApiObject, obj: ApiObject): Promise<ApiObject> {
    const { form } = this.host;
    // Through a conversion that waits, compared in this version (no webhook call for it).
    if (form.waits && jsonEqual(obj, stored)) return stored;
    const encoded = form.encode(obj);
    const bytes = encoded instanceof Promise ? await encoded : encoded;
    if (!form.waits && Buffer.compare(Buffer.from(bytes), Buffer.from(form.encode(stored) as Uint8Array)) === 0) return stored;
    if (isDryRun(this.requested)) return obj;
    try {
      const updated = await this.host.store.update(this.key, bytes, kv.modRevision);
      const result = deepCopy(obj);
      result.metadata!.resourceVersion = String(updated.modRevision);
      return result;
    } catch (err) {
      if (StoreError.is(err, 'conflict') || StoreError.is(err, 'not-found')) throw new Restart();
      throw storageError(err, this.host.groupResource, this.name);
    }
  }

  private async remove(obj: ApiObject, ignoreNotFound: boolean): Promise<DeleteResult> {
    if (isDryRun(this.requested)) return this.result(this.finished(obj), true);
    try {
      await this.host.store.delete(this.key, Number(obj.metadata!.resourceVersion));
    } catch (err) {
      if (StoreError.is(err, 'not-found')) {
        if (ignoreNotFound) return this.result(this.finished(obj), true);
        throw notFound(this.host.groupResource, this.name);
      }
      if (StoreError.is(err, 'conflict')) throw new Restart();
      throw storageError(err, this.host.groupResource, this.name);
    }
    await this.host.afterDelete?.(obj);
    return this.result(this.finished(obj), true);
  }

  /**
   * `ignoreStoreReadErrorWithClusterBreakingPotential=true` (gate on, options already checked):
   * remove an object whose stored bytes cannot be decoded, skipping preconditions and
   * finalizers; anything else is refused (upstream's corrupt-object deleter).
   */
  async runUnsafe(): Promise<DeleteResult> {
    const { def } = this.host;
    let kv: KeyValue | undefined;
    try {
      kv = (await this.host.store.get(this.key)).kv;
    } catch (err) {
      throw storageError(err, this.host.groupResource, this.name);
    }
    if (!kv || tryDecodeFromStorage(kv).ok) {
      throw invalid({ group: def.group, kind: def.resource }, this.name, [
        fieldErrors.invalid(
          'ignoreStoreReadErrorWithClusterBreakingPotential',
          true,
          'is exclusively used to delete corrupt object(s), try again by removing this option',
        ),
      ]);
    }
    try {
      await this.host.store.delete(this.key);
    } catch (err) {
      if (!StoreError.is(err, 'not-found')) throw storageError(err, this.host.groupResource, this.name);
    }
    // The object cannot be shown: upstream answers with a bare Success naming the kind.
    const status: Status = { ...successStatus({ name: this.name, kind: def.kind }) };
    return { object: status, httpStatus: 200 };
  }
}
