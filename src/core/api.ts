/**
 * The core's one interface. Both doors reach the core through it: the HTTP gateway calls an
 * in-process implementation directly (plain objects, no serialization), and the gRPC client
 * implements the same interface over the wire, so a gateway can sit in another process
 * (`--core-address`). docs/ARCHITECTURE.md follows one request through it.
 */
import { type Status, StatusError } from '../status';
import type { DirectConsumer } from '../util/async-queue';

/** Who is asking: upstream's `user.Info`. */
export interface UserInfo {
  username: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** The request's target, as the gateway's request-info step derives it from the path. */
export interface ResourceTarget {
  /** API group; '' for the core group. */
  group: string;
  version: string;
  /** Plural resource name as in the URL, e.g. `replicasets`. */
  resource: string;
  subresource?: string;
  /** Unset for cluster-scoped resources and for lists across all namespaces. */
  namespace?: string;
  name?: string;
}

export interface RequestContext {
  user: UserInfo;
  /** Raw User-Agent header, used to infer a field manager (docs/API.md, "Field managers and server-side apply"). */
  userAgent?: string;
  /** Warnings collected while serving, returned to HTTP clients as `Warning` headers. */
  warnings?: string[];
  /** Aborted when the client goes away. */
  signal?: AbortSignal;
  /** Adds an annotation to the request's audit event (admission webhooks and policies); absent where nothing is audited. */
  annotate?: (key: string, value: string) => void;
  /**
   * What the door's strict decoder saw in the request body (create, update, patch), for
   * `fieldValidation`: repeated keys can only be seen in the bytes. Plain data, so the gRPC
   * door carries it as the in-process gateway does. Absent (in-process callers, formats that
   * cannot repeat a key), unknown fields are still found and dropped.
   */
  decodeReport?: DecodeReport;
}

/** A key given twice in one JSON object: Go's field path and its position among the document's keys. */
export interface RepeatedJsonKey {
  path: string;
  seq: number;
}

/** A key given twice in one YAML mapping, as go-yaml reports it: 1-based line, the key as Go's `%#v` prints it. */
export interface RepeatedYamlKey {
  line: number;
  key: string;
}

export type DecodeReport =
  /**
   * A JSON object body: its repeated keys and, when there are any, where each key path first
   * appeared (to merge unknown fields with them in document order, as upstream's one-pass decoder does).
   */
  | { kind: 'json'; duplicates: RepeatedJsonKey[]; firstSeen?: RepeatedJsonKey[] }
  /** A YAML object body, or an apply patch: its repeated keys. */
  | { kind: 'yaml'; duplicates: RepeatedYamlKey[] }
  /** A JSON, merge or strategic merge patch: its strict errors, already in upstream's words. */
  | { kind: 'patch'; errors: string[] };

/** Any API object, as plain JSON-shaped data. */
export interface ApiObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  [field: string]: unknown;
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: 'Apply' | 'Update';
  apiVersion?: string;
  time?: string;
  fieldsType?: 'FieldsV1';
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  selfLink?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string | null;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: ManagedFieldsEntry[];
}

export interface ListMeta {
  resourceVersion?: string;
  continue?: string;
  remainingItemCount?: number;
}

export interface ApiList<T extends ApiObject = ApiObject> {
  apiVersion: string;
  kind: string;
  metadata: ListMeta;
  items: T[];
}

export type ResourceVersionMatch = 'Exact' | 'NotOlderThan';

export interface GetOptions {
  resourceVersion?: string;
}

/** The LIST parameter set (docs/API.md, "Endpoints"), already parsed and type-checked by the door. */
export interface ListOptions {
  resourceVersion?: string;
  resourceVersionMatch?: ResourceVersionMatch;
  limit?: number;
  continue?: string;
  labelSelector?: string;
  fieldSelector?: string;
  timeoutSeconds?: number;
  allowWatchBookmarks?: boolean;
  sendInitialEvents?: boolean;
}

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

/** The WRITE / PATCH parameter sets. */
export interface WriteOptions {
  /** `['All']` for a dry run. */
  dryRun?: string[];
  fieldManager?: string;
  fieldValidation?: FieldValidation;
  /** Apply only. */
  force?: boolean;
}

export type PropagationPolicy = 'Orphan' | 'Background' | 'Foreground';

export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

export interface DeleteOptions {
  dryRun?: string[];
  gracePeriodSeconds?: number;
  preconditions?: Preconditions;
  propagationPolicy?: PropagationPolicy;
  orphanDependents?: boolean;
  ignoreStoreReadErrorWithClusterBreakingPotential?: boolean;
}

export type PatchType = 'json' | 'merge' | 'strategic' | 'apply';

export interface Patch {
  type: PatchType;
  /** The patch document, already decoded from the wire (JSON value; YAML/CBOR converted by the door). */
  body: unknown;
}

/** The result of create, update and patch: the stored (or would-be) object, and whether it was created. */
export interface WriteResult {
  /**
   * The caller's to change when it gave its body as a plain object; read-only when it handed the
   * body over (`Owned`): then it may be the watch cache's frozen object.
   */
  object: ApiObject;
  created: boolean;
  /**
   * The object's `application/json` answer (upstream's bytes and a newline), where the write
   * made it from the text it stored: a door answers with it instead of encoding the object again
   * (a door's create, `encodeCreatedForStorage`). Made when called, held by no one after.
   */
  json?: () => Buffer;
}

/**
 * The result of delete: upstream answers either with the object (types that return it, or an
 * object now Terminating) or with a Success Status; `httpStatus` is 200 or 202.
 */
export interface DeleteResult {
  object: ApiObject | Status;
  httpStatus: 200 | 202;
}

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export type WatchEvent = { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: ApiObject } | { type: 'ERROR'; object: Status };

/** A live watch: iterate its events; `close()` ends it from the consumer side. */
export interface WatchStream extends AsyncIterable<WatchEvent> {
  close(): void;
  /**
   * The same events taken without a promise per event, where the stream offers that (the watch
   * cache's watchers do): a door takes each event within the cache's pass over its watchers.
   */
  readonly direct?: DirectConsumer<WatchEvent>;
}

export interface CoreApi {
  get(target: ResourceTarget, options: GetOptions, ctx: RequestContext): Promise<ApiObject>;
  /**
   * `get`, answered within the call where it can be (an object the watch cache holds, asked for
   * at resourceVersion 0), failing then by a throw; otherwise the promise `get` would give.
   * Optional: a door falls back to `get`.
   */
  getNow?(target: ResourceTarget, options: GetOptions, ctx: RequestContext): ApiObject | Promise<ApiObject>;
  list(target: ResourceTarget, options: ListOptions, ctx: RequestContext): Promise<ApiList>;
  watch(target: ResourceTarget, options: ListOptions, ctx: RequestContext): Promise<WatchStream>;
  /**
   * The body of create, update and patch is either the caller's (a plain object: the core copies
   * it, never changes it, and answers with an object the caller may change) or handed over
   * (`Owned`: the core changes and keeps it, and the answer, which may be the watch cache's
   * frozen object, is only to be read). Declared as properties rather than methods so that the
   * compiler checks an implementation's parameters strictly: one that takes only a plain object
   * does not compile.
   */
  create: (target: ResourceTarget, object: WriteBody<ApiObject>, options: WriteOptions, ctx: RequestContext) => Promise<WriteResult>;
  /** PUT: update, or create where the type allows create-on-update. */
  update: (target: ResourceTarget, object: WriteBody<ApiObject>, options: WriteOptions, ctx: RequestContext) => Promise<WriteResult>;
  patch: (target: ResourceTarget, patch: WriteBody<Patch>, options: WriteOptions, ctx: RequestContext) => Promise<WriteResult>;
  delete(target: ResourceTarget, options: DeleteOptions, ctx: RequestContext): Promise<DeleteResult>;
  deleteCollection(target: ResourceTarget, listOptions: ListOptions, deleteOptions: DeleteOptions, ctx: RequestContext): Promise<ApiList>;
}

/**
 * A value handed over to its receiver, which may change it in place and keep it; the giver lets
 * go of it (docs/ARCHITECTURE.md, "Ownership"). A door hands the core the body or patch it decoded
 * for one request alone (`handOver`), so the core takes it as it is instead of copying it first,
 * and the object written from it may become the watch cache's: the door only reads the answer.
 * A plain object given to `CoreApi` stays its caller's: the core copies it before any change and
 * answers with an object the caller may change. Inside the core, `Owned` marks the objects a step
 * is given to change (a write's body, a patch's result).
 */
export class Owned<T> {
  constructor(
    /** The value, now the receiver's. */
    readonly value: T,
    /**
     * The door checked it against the decode limits (codecs/limits.ts) as it decoded it: the core
     * does not walk it again. Any other body the core checks itself.
     */
    readonly withinLimits = false,
  ) {}
}

/** Hand `value` over (see `Owned`); `withinLimits` when the caller checked it against the decode limits. */
export function handOver<T>(value: T, checked?: { withinLimits: boolean }): Owned<T> {
  return new Owned(value, checked?.withinLimits ?? false);
}

/** A write's body as `CoreApi` takes it: the caller's own (copied by the core), or handed over. */
export type WriteBody<T> = T | Owned<T>;

/** The value of a write's body, whoever holds it. */
export function bodyValue<T>(body: WriteBody<T>): T {
  return body instanceof Owned ? body.value : body;
}

/**
 * An error of `CoreApi`'s that says its store did not answer (503 storage unavailable, 504 a
 * timeout): worth asking again, as an informer lists again and the core retries its first writes.
 */
export function storeNotAnswering(err: unknown): boolean {
  return StatusError.is(err) && (err.code === 503 || err.code === 504);
}
