/**
 * The generic store of one resource type (upstream's generic registry Store): its reads and its
 * writes, composed side by side rather than inherited, configured by the type's
 * ResourceDefinition. The core resolves a request to one of these and calls it; every rule of
 * the lifecycle lives below (resource-reads.ts, resource-writes.ts, patch-request.ts,
 * scale-request.ts, delete-flow.ts).
 */
import type { Patch, WriteResult } from '../api';
import type { ResourceDefinition } from '../resources/definition';
import type { GroupResource } from '../../status';
import type { ResourceStorage } from '../storage/resource-storage';
import { ResourceReads } from './resource-reads';
import { ResourceWrites, type WriteDeps } from './resource-writes';
import { applyObject, patchObject } from './patch-request';
import { type ScaleWrite, writeScale } from './scale-request';
import type { WriteRequest } from './write-request';

export class ResourceStore {
  readonly reads: ResourceReads;
  readonly writes: ResourceWrites;

  constructor(
    readonly def: ResourceDefinition,
    deps: WriteDeps,
    /** How this type is read: the watch cache over the backing store. */
    storage: ResourceStorage,
  ) {
    this.reads = new ResourceReads(def, storage, deps.naming);
    this.writes = new ResourceWrites(def, deps);
  }

  get groupResource(): GroupResource {
    return this.writes.groupResource;
  }

  /** PATCH of the main resource, `/status` or `/finalize`: apply through the field manager, the others through the update path. */
  patch(req: WriteRequest, patch: Patch): Promise<WriteResult> {
    return patch.type === 'apply' ? applyObject(this.writes, req, patch) : patchObject(this.writes, req, patch);
  }

  /** PUT or PATCH of `/scale`; answers with the Scale. */
  writeScale(req: WriteRequest, write: ScaleWrite): Promise<WriteResult> {
    return writeScale(this.writes, req, write);
  }
}
