/**
 * Type tests through the real thing: an in-process core on the embedded store (one per test
 * file, closed after it), reached only through `CoreApi`. `create` is a dry-run create (the
 * object as the generic store would store it, or its validation errors), `stored` a real
 * create, `update` a dry-run PUT of `input` over `old` — with `old` made the stored object
 * first, written as it is, so the strategy sees exactly that old object.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { ApiObject, RequestContext, ResourceTarget } from '../../../src/core/api';
import { createCore, type Core } from '../../../src/core';
import type { ResourceDefinition, StrategyContext } from '../../../src/core/resources/definition';
import { builtinResources } from '../../../src/core/resources';
import { objectKey } from '../../../src/core/storage/keys';
import { encodeForStorage } from '../../../src/core/storage/object-codec';
import { createStore, type Store } from '../../../src/store';
import { createNaming, type Vendor } from '../../../src/naming';
import { StatusError } from '../../../src/status';
import { deepCopy } from '../../../src/util/json-values';

const ADMIN: RequestContext = { user: { username: 'admin', groups: ['system:masters'] } };

export function ctx(vendor: Vendor = 'kubernetes'): StrategyContext {
  return { naming: createNaming(vendor), now: Date.parse('2024-05-01T10:00:00Z') };
}

/** The definition of `resource`; of a resource served in two versions, the one the store keeps. */
export function definition(resource: string, vendor: Vendor = 'kubernetes'): ResourceDefinition {
  const def = builtinResources(createNaming(vendor)).find((d) => d.resource === resource && !d.storedAs);
  if (!def) throw new Error(`no definition for ${resource}`);
  return def;
}

export interface FieldErrorSeen {
  field: string;
  type: string;
  message: string;
}

export interface Outcome<T> {
  object: T;
  errors: FieldErrorSeen[];
  messages: string[];
}

let opened: { core: Core; store: Store; dir: string } | undefined;

async function open(): Promise<{ core: Core; store: Store }> {
  if (!opened) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'keelson-types-'));
    const store = createStore({ kind: 'embedded', dataDir: dir });
    const core = createCore({ store, naming: createNaming('kubernetes'), compactionIntervalMs: 0, resources: builtinResources(createNaming('kubernetes')) });
    await core.ready();
    opened = { core, store, dir };
  }
  return opened;
}

afterAll(async () => {
  if (!opened) return;
  await opened.core.close();
  fs.rmSync(opened.dir, { recursive: true, force: true });
  opened = undefined;
});

function targetOf(def: ResourceDefinition, namespace: string | undefined, name?: string, subresource?: string): ResourceTarget {
  const t: ResourceTarget = { group: def.group, version: def.version, resource: def.resource };
  if (def.namespaced) t.namespace = namespace ?? 'default';
  if (name !== undefined) t.name = name;
  if (subresource) t.subresource = subresource;
  return t;
}

/** The namespace must exist (NamespaceLifecycle admission). */
async function ensureNamespace(core: Core, namespace: string | undefined): Promise<void> {
  if (!namespace) return;
  try {
    await core.create({ group: '', version: 'v1', resource: 'namespaces' }, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } }, {}, ADMIN);
  } catch (err) {
    if (!StatusError.is(err, 'AlreadyExists')) throw err;
  }
}

/** A 422's causes as field errors; any other refusal as one message. */
function refused<T>(err: unknown): Outcome<T> {
  if (!(err instanceof StatusError)) throw err;
  const causes = err.status.reason === 'Invalid' ? (err.status.details?.causes ?? []) : [];
  if (causes.length === 0) return { object: undefined as T, errors: [], messages: [err.status.message ?? ''] };
  const errors = causes.map((c) => ({ field: c.field ?? '', type: c.reason ?? '', message: c.message ?? '' }));
  return { object: undefined as T, errors, messages: errors.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message)) };
}

function namespaceOf(def: ResourceDefinition, obj: ApiObject): string | undefined {
  return def.namespaced ? (obj.metadata?.namespace ?? 'default') : undefined;
}

/** A dry-run create of `input`: the object the generic store would store, or its errors. */
export async function create<T>(def: ResourceDefinition, input: unknown): Promise<Outcome<T>> {
  const { core } = await open();
  const obj = deepCopy(input) as ApiObject;
  const namespace = namespaceOf(def, obj);
  await ensureNamespace(core, namespace);
  try {
    const { object } = await core.create(targetOf(def, namespace), obj, { dryRun: ['All'] }, ADMIN);
    return { object: object as T, errors: [], messages: [] };
  } catch (err) {
    return refused<T>(err);
  }
}

/** Create `input` for real, failing the test on errors, and return the stored object. */
export async function stored<T>(def: ResourceDefinition, input: unknown): Promise<T> {
  const { core, store } = await open();
  const obj = deepCopy(input) as ApiObject;
  const namespace = namespaceOf(def, obj);
  await ensureNamespace(core, namespace);
  const target = targetOf(def, namespace);
  // Each call stores a fresh object: a taken name is removed from the store first (no finalizers in the way).
  const key = objectKey(def.resource, def.namespaced ? namespace : undefined, obj.metadata?.name ?? '');
  const existing = await store.get(key);
  if (existing.kv) await store.delete(key, existing.kv.modRevision);
  const { object } = await core.create(target, obj, {}, ADMIN);
  return object as T;
}

/** A dry-run PUT of `input` over `old` (on the main resource or `/status`). */
export async function update<T>(def: ResourceDefinition, input: unknown, old: unknown, scope: 'main' | 'status' = 'main'): Promise<Outcome<T>> {
  const { core, store } = await open();
  const prev = deepCopy(old) as ApiObject;
  const name = prev.metadata?.name ?? '';
  const namespace = namespaceOf(def, prev);
  await ensureNamespace(core, namespace);
  // Make `old` the stored object, exactly as given.
  const key = objectKey(def.resource, def.namespaced ? namespace : undefined, name);
  const apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
  const bytes = encodeForStorage({ ...prev, apiVersion, kind: def.kind });
  const current = await store.get(key);
  const kv = current.kv ? await store.update(key, bytes, current.kv.modRevision) : await store.create(key, bytes);
  const obj = deepCopy(input) as ApiObject;
  obj.metadata = { ...obj.metadata, uid: prev.metadata?.uid, resourceVersion: String(kv.modRevision), creationTimestamp: prev.metadata?.creationTimestamp };
  try {
    const { object } = await core.update(targetOf(def, namespace, name, scope === 'status' ? 'status' : undefined), obj, { dryRun: ['All'] }, ADMIN);
    return { object: object as T, errors: [], messages: [] };
  } catch (err) {
    return refused<T>(err);
  }
}
