/**
 * One typed definition per resource type (the role of upstream's per-type strategy): names,
 * scope, subresources, defaults, strategy hooks, validation, selectable fields. The generic registry
 * (core/registry) owns the lifecycle and is configured by these; definitions never subclass it.
 */
import type { Naming } from '../../naming';
import type { ApiObject, UserInfo } from '../api';
import type { NameRule } from '../validation/names';

export type { NameRule } from '../validation/names';
import type { FieldError } from '../validation/field-errors';
import type { FieldWalker } from '../validation/field-validation';
import type { SchemaType } from '../../schema';
import type { TableDefinition } from '../table/types';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export const ALL_VERBS: readonly Verb[] = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export interface StrategyContext {
  naming: Naming;
  /** Milliseconds since the epoch, from the injected clock. */
  now: number;
  /** Who is writing (a CertificateSigningRequest records its requestor); absent outside a write. */
  user?: UserInfo;
}

/** The `/scale` subresource: which fields of the object the autoscaling/v1 Scale maps to. */
export interface ScaleSubresource {
  /** Read spec.replicas (after defaults). */
  specReplicas(obj: ApiObject): number;
  setSpecReplicas(obj: ApiObject, replicas: number): void;
  statusReplicas(obj: ApiObject): number;
  /** The label selector as a string, as Scale.status.selector carries it. */
  selector(obj: ApiObject): string;
}

/** The status sub-strategy: what PUT/PATCH on `/status` may change. */
export interface StatusStrategy<T extends ApiObject = ApiObject> {
  /** Copy everything but status (and what /status may touch in metadata) from `old` into `obj`. */
  prepareForUpdate(obj: T, old: T, ctx: StrategyContext): void;
  validateUpdate?(obj: T, old: T, ctx: StrategyContext): FieldError[];
}

/** When a served version was deprecated, when it goes, and what replaces it (minor releases of 1.x). */
export interface Deprecation {
  /** e.g. `1.29`. */
  deprecatedIn?: string;
  /**
   * The Warning's whole text, where it is not built from the releases: a custom resource
   * version's `deprecationWarning` (or upstream's default for one); empty, no Warning. Such a
   * deprecation is signalled by the Warning alone, as upstream's custom resource handler does.
   */
  warning?: string;
  /** e.g. `1.32`: the release it is no longer served in. */
  removedIn?: string;
  replacement?: { group: string; version: string; kind: string };
}

export interface ResourceDefinition<T extends ApiObject = ApiObject> {
  /** API group; '' for the core group. */
  group: string;
  version: string;
  kind: string;
  /** Plural, as in URLs and storage keys. */
  resource: string;
  singular: string;
  namespaced: boolean;
  shortNames?: string[];
  categories?: string[];
  /** Verbs served on the main resource; default ALL_VERBS. */
  verbs?: readonly Verb[];
  /**
   * This version's deprecation (upstream's prerelease-lifecycle markers): requests to it get a
   * Warning, an audit annotation and `apiserver_requested_deprecated_apis` (docs/API.md,
   * "Deprecated versions"). No version served in 1.32 is deprecated; tests mark one.
   */
  deprecation?: Deprecation;
  /**
   * Never stored: a create is answered by a handler (upstream's review APIs, whose REST storage
   * only creates). The core serves the type only when it was given a handler for it
   * (`CoreOptions.handlers`, keyed by resource name); such a type serves `create` alone.
   */
  notStored?: true;
  nameRule: NameRule;

  /** `metadata.generation` starts at 1 and grows by one on every change of `spec` (upstream: types with a spec/status split). */
  tracksGeneration?: boolean;
  /** What an update must change for `metadata.generation` to grow (default: `spec`); a custom resource counts everything but metadata (and status). */
  specChanged?(obj: T, old: T): boolean;
  /** PUT of an absent object creates it (upstream AllowCreateOnUpdate). */
  allowCreateOnUpdate: boolean;
  /** PUT without metadata.resourceVersion is allowed (upstream AllowUnconditionalUpdate). */
  allowUnconditionalUpdate: boolean;
  /** DELETE answers with the deleted object instead of a Success Status (upstream ReturnDeletedObject). */
  returnDeletedObject?: boolean;

  /** Fill defaults; runs on create, update and on every object read from the wire. */
  defaults?(obj: T): void;
  /**
   * Fill defaults of an object decoded from the store, before it is cached or answered (a
   * custom resource's schema defaults, which upstream applies on every read, so an object
   * stored before a default was added reads with it).
   */
  readDefaults?(obj: T): void;
  /** Strip or reset fields a client may not set on create (e.g. status for split types). */
  prepareForCreate?(obj: T, ctx: StrategyContext): void;
  /** Reset fields an update of the main resource may not change (e.g. status for split types). */
  prepareForUpdate?(obj: T, old: T, ctx: StrategyContext): void;
  /** Type-specific validation of a new object (metadata is validated by the registry). */
  validate?(obj: T, ctx: StrategyContext): FieldError[];
  /** Type-specific validation of an update (immutable fields and the like), in addition to `validate`. */
  validateUpdate?(obj: T, old: T, ctx: StrategyContext): FieldError[];
  /**
   * `validate` runs on create only: an update is checked by `validateUpdate` (or the status
   * sub-strategy's) alone. For upstream strategies whose ValidateUpdate validates the whole new
   * object with rules relaxed by what the old one already held (webhook configurations keep
   * accepting `sideEffects: Unknown` they were stored with).
   */
  validateOnlyOnCreate?: boolean;

  /** Present when the type has a `/status` subresource. */
  status?: StatusStrategy<T>;
  /** Present when the type has a `/finalize` subresource (namespaces): what it may change. */
  finalize?: StatusStrategy<T>;
  /** Present when the type has an `/approval` subresource (CertificateSigningRequests): what it may change. */
  approval?: StatusStrategy<T>;
  /** Present when the type has a `/scale` subresource. */
  scale?: ScaleSubresource;
  /**
   * Subresources that only create, answered by a handler with the parent object at hand
   * (`serviceaccounts/token`: TokenRequest). Served only when the core has a handler for
   * `<resource>/<name>` (`CoreOptions.handlers`).
   */
  createSubresources?: readonly CreateSubresource[];

  /**
   * True while the object holds finalizers of its own outside `metadata.finalizers` (namespaces'
   * `spec.finalizers`): deletion then only marks it Terminating.
   */
  pendingFinalizers?(obj: T): boolean;
  /** Adjust an object being marked Terminating (e.g. a namespace's `status.phase`). */
  prepareForDelete?(obj: T): void;

  /**
   * Field-selector values of an object beyond `metadata.name` and `metadata.namespace`
   * (upstream's GetAttrs), e.g. pods' `spec.nodeName`. For a type kept as another version
   * (`storedAs`), the stored version's definition computes them from the stored object.
   */
  selectableFields?(obj: T): Record<string, string>;
  /**
   * The field labels this version accepts and the field each one selects, where they differ
   * from the keys `selectableFields` returns (upstream's field label conversion: the events
   * group's `regarding.name` selects the stored Event's `involvedObject.name`). Absent: those
   * keys are the labels.
   */
  fieldLabels?: Readonly<Record<string, string>>;

  /**
   * Kept in the store as another served version's objects (one of `equivalentVersions`):
   * upstream keeps one storage per resource and converts at every read and write. Reads,
   * watches and writes of this version go through the stored version's storage and watch
   * cache, converting each object.
   */
  storedAs?: EquivalentVersion;
  /**
   * Other served versions of the same objects (the stored one and this, either way round): the
   * managedFields their writers recorded are compared in this version's names and keep their
   * own, as upstream's field manager converts them; webhooks and policies that match with
   * `matchPolicy: Equivalent` and name that version see this version's writes converted.
   */
  equivalentVersions?: readonly EquivalentVersion[];

  /**
   * Table columns and the cells of a row (upstream's printer for the type; docs/API.md,
   * "Content negotiation" 5); absent: upstream's default `Name` / `Created At`.
   */
  table?: TableDefinition<T>;

  /**
   * How a body's unknown fields are found and removed when Keelson's schema does not know the
   * kind (a custom resource's structural schema); absent: from the schema.
   */
  walkFields?: FieldWalker;
  /**
   * The type's schema for server-side apply and managedFields when Keelson's schema registry
   * does not hold the kind (a custom resource's, built from its structural schema on first use).
   */
  applyType?(): SchemaType | undefined;

  /**
   * Metadata is checked by apimachinery's generic rules only (any qualified finalizer name),
   * as apiextensions-apiserver checks CustomResourceDefinitions and custom resources; built-in
   * types of kube-apiserver also refuse unprefixed finalizers other than the standard ones.
   */
  genericMetadata?: boolean;

  /** Present on a custom resource's type, made from its CustomResourceDefinition (core/customresources). */
  custom?: CustomResourceInfo;
}

/** What a custom resource's type keeps of the definition that made it. */
export interface CustomResourceInfo {
  /** The CustomResourceDefinition's name (`<plural>.<group>`) and uid. */
  readonly crd: string;
  readonly uid: string;
  readonly listKind: string;
  /** The served version as the definition declares it (schema, columns, subresources), as JSON. */
  readonly served: unknown;
  /**
   * On the storage version's type, where the store may also hold objects of an earlier storage
   * version (`status.storedVersions`): how they read as this version's (objects already of
   * this version read as they are). A storage-version change so affects new writes only.
   */
  readonly readsOthers?: EquivalentVersion;
}

/** Another served version of the same objects (`ResourceDefinition.equivalentVersions`). */
export interface EquivalentVersion {
  /** Its group version (`v1`, or the events group's); the kind and the resource name are the same. */
  apiVersion: string;
  /** Its top-level fields named differently there: that version's name → this version's. */
  fieldNames: Readonly<Record<string, string>>;
  /** This version's object as that version's: a new object, `obj` left as it is. */
  toThat(obj: ApiObject): ApiObject;
  /**
   * That version's object as this version's: a new object, which may share the given one's
   * parts (they may be frozen). Keeps `kind` and `apiVersion` absent where they are (a list's items).
   */
  fromThat(obj: ApiObject): ApiObject;
  /**
   * Present where conversion waits on something outside the server (a custom resource's
   * conversion webhook, which only `storedAs` uses): stored objects are then converted through
   * these, several in one call, and `toThat`/`fromThat` are not used for them. Each resolves
   * the converted objects in the given order (new objects), or rejects with the error to answer
   * (a 500 naming the webhook), never with a partial result.
   */
  waits?: {
    toThat(objs: readonly ApiObject[]): Promise<ApiObject[]>;
    fromThat(objs: readonly ApiObject[]): Promise<ApiObject[]>;
  };
}

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

/** A create-only subresource and the kind it takes and answers with. */
export interface CreateSubresource {
  name: string;
  kind: GroupVersionKind;
}

/** A definition builder: definitions whose group names depend on the vendor take the naming profile. */
export type DefineResource = (naming: Naming) => ResourceDefinition;
