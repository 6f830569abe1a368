/**
 * Reads of one resource type: get, list (chunked, at one revision, with selectors) and watch,
 * with the resourceVersion semantics of SPEC "List, chunking and consistency".
 */
import type { ApiList, ApiObject, GetOptions, ListOptions, WatchEvent, WatchStream } from '../api';
import type { ResourceDefinition } from '../resources/definition';
import type { Naming } from '../../naming';
import type { Clock } from '../../clock';
import type { KeyValue, Store, StoreEvent } from '../../store';
import { StoreError } from '../../store';
import {
  type GroupKind,
  type GroupResource,
  StatusError,
  badRequest,
  notFound,
  resourceExpired,
  tooLargeResourceVersion,
} from '../../status';
import { parseFieldSelector, parseLabelSelector, SelectorParseError, type FieldSelector, type LabelSelector } from '../selectors';
import { AsyncQueue } from '../../util/async-queue';
import { collectionPrefix, objectKey } from './keys';
import { decodeFromStorage } from './object-codec';
import { continueExpired, decodeContinue, encodeContinue, parseResourceVersion, validateListOptions } from './list-options';

export interface RegistryDeps {
  store: Store;
  naming: Naming;
  clock: Clock;
}

/** Events buffered per watcher before it is closed as too slow (the client then relists). */
const WATCH_BUFFER = 1000;

interface Selection {
  label: LabelSelector;
  field: FieldSelector;
}

export class ResourceReads {
  readonly apiVersion: string;
  readonly groupResource: GroupResource;
  readonly groupKind: GroupKind;

  constructor(
    readonly def: ResourceDefinition,
    protected readonly deps: RegistryDeps,
  ) {
    this.apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
    this.groupResource = { group: def.group, resource: def.resource };
    this.groupKind = { group: def.group, kind: def.kind };
  }

  private get listVersion(): string {
    return `${this.deps.naming.groups.meta}/v1`;
  }

  async get(namespace: string | undefined, name: string, options: GetOptions): Promise<ApiObject> {
    const minRv = parseResourceVersion(options.resourceVersion);
    let result;
    try {
      result = await this.deps.store.get(objectKey(this.def.resource, namespace, name));
    } catch (err) {
      throw this.readError(err);
    }
    if (minRv !== undefined && minRv > 0 && result.revision < minRv) {
      throw tooLargeResourceVersion(minRv, result.revision, 1);
    }
    if (!result.kv) throw notFound(this.groupResource, name);
    return decodeFromStorage(result.kv);
  }

  protected selection(options: ListOptions): Selection {
    try {
      return { label: parseLabelSelector(options.labelSelector ?? ''), field: parseFieldSelector(options.fieldSelector ?? '') };
    } catch (err) {
      if (err instanceof SelectorParseError) throw badRequest(`unable to parse requirement: ${err.message}`);
      throw err;
    }
  }

  /** The field-selector view of an object: metadata.name, metadata.namespace and the type's own fields. */
  protected fieldsOf(obj: ApiObject): Record<string, string> {
    const meta = obj.metadata ?? {};
    const fields: Record<string, string> = { 'metadata.name': meta.name ?? '' };
    if (this.def.namespaced) fields['metadata.namespace'] = meta.namespace ?? '';
    return { ...fields, ...(this.def.selectableFields?.(obj) ?? {}) };
  }

  protected checkFieldSelector(sel: FieldSelector): void {
    for (const r of sel.requirements) {
      const known = r.field === 'metadata.name' || (this.def.namespaced && r.field === 'metadata.namespace');
      if (!known && !this.def.selectableFields) throw badRequest(`field label not supported: ${r.field}`);
      if (!known && this.def.selectableFields) {
        const probe = this.def.selectableFields({ metadata: {} } as ApiObject);
        if (!(r.field in probe)) throw badRequest(`field label not supported: ${r.field}`);
      }
    }
  }

  protected selected(sel: Selection, obj: ApiObject): boolean {
    return sel.label.matches(obj.metadata?.labels) && sel.field.matches(this.fieldsOf(obj));
  }

  /** A list as of one revision, chunked by `limit`/`continue` (SPEC list table). */
  async list(namespace: string | undefined, options: ListOptions): Promise<ApiList> {
    validateListOptions(options, false);
    const sel = this.selection(options);
    this.checkFieldSelector(sel.field);
    const prefix = collectionPrefix(this.def.resource, namespace);
    const limit = options.limit && options.limit > 0 ? options.limit : 0;
    let revision: number | undefined;
    let startKey: string | undefined;
    if (options.continue) {
      const token = decodeContinue(options.continue, this.listVersion);
      revision = token.rv;
      startKey = prefix + token.start;
    } else {
      const rv = parseResourceVersion(options.resourceVersion);
      const exact = rv !== undefined && rv > 0 && (options.resourceVersionMatch === 'Exact' || (options.resourceVersionMatch === undefined && limit > 0));
      const current = await this.currentRevision();
      if (rv !== undefined && rv > current) throw tooLargeResourceVersion(rv, current, 1);
      revision = exact ? rv : current;
    }

    const items: ApiObject[] = [];
    let nextKey: string | undefined;
    let remaining: number | undefined;
    const filtered = !sel.label.empty || !sel.field.empty;
    for (;;) {
      let page;
      try {
        page = await this.deps.store.list(prefix, { revision, limit: limit || undefined, startKey });
      } catch (err) {
        if (StoreError.is(err, 'compacted')) {
          throw options.continue ? continueExpired() : resourceExpired('The resourceVersion for the provided list is too old.');
        }
        throw this.readError(err);
      }
      let consumed = 0;
      for (const kv of page.kvs) {
        consumed++;
        const obj = this.listItem(kv);
        if (filtered && !this.selected(sel, obj)) continue;
        items.push(obj);
        if (limit && items.length === limit) break;
      }
      const lastKv = page.kvs[consumed - 1];
      const more = consumed < page.kvs.length || page.more;
      if (!more) break;
      if (limit && items.length === limit) {
        nextKey = `${lastKv!.key}\u0000`;
        if (!filtered) remaining = page.count - consumed;
        break;
      }
      startKey = `${lastKv!.key}\u0000`;
    }
    const metadata: ApiList['metadata'] = { resourceVersion: String(revision) };
    if (nextKey) {
      metadata.continue = encodeContinue(this.listVersion, revision!, nextKey.slice(prefix.length));
      if (remaining !== undefined && remaining > 0) metadata.remainingItemCount = remaining;
    }
    return { apiVersion: this.apiVersion, kind: `${this.def.kind}List`, metadata, items };
  }

  /** Items of a typed list carry no apiVersion/kind, as upstream serves them. */
  private listItem(kv: KeyValue): ApiObject {
    const { apiVersion: _a, kind: _k, ...rest } = decodeFromStorage(kv);
    return rest;
  }

  protected async currentRevision(): Promise<number> {
    try {
      return await this.deps.store.currentRevision();
    } catch (err) {
      throw this.readError(err);
    }
  }

  protected readError(err: unknown): StatusError {
    if (err instanceof StatusError) return err;
    return StatusError.from(err);
  }

  /**
   * Watch: "Get State and Start at Most Recent/Any" (synthetic ADDED for existing objects) for an
   * unset or `0` resourceVersion, "Start at Exact" otherwise. Objects leaving the selection are
   * DELETED for this watcher. Too old → one ERROR event carrying 410 Expired, as upstream does.
   */
  async watch(namespace: string | undefined, options: ListOptions): Promise<WatchStream> {
    validateListOptions(options, true);
    const sel = this.selection(options);
    this.checkFieldSelector(sel.field);
    const prefix = collectionPrefix(this.def.resource, namespace);
    const rv = parseResourceVersion(options.resourceVersion);
    const initial: WatchEvent[] = [];
    let startRevision: number;
    const wantsInitial = rv === undefined || rv === 0 ? options.sendInitialEvents !== false : options.sendInitialEvents === true;
    if (rv === undefined || rv === 0 || options.sendInitialEvents === true) {
      const current = await this.currentRevision();
      if (wantsInitial) {
        const listed = await this.list(namespace, { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector });
        for (const item of listed.items) initial.push({ type: 'ADDED', object: { apiVersion: this.apiVersion, kind: this.def.kind, ...item } });
        startRevision = Number(listed.metadata.resourceVersion) + 1;
        if (options.sendInitialEvents && options.allowWatchBookmarks) {
          initial.push({ type: 'BOOKMARK', object: this.bookmark(Number(listed.metadata.resourceVersion), true) });
        }
      } else startRevision = current + 1;
    } else {
      startRevision = rv + 1;
    }

    let cancelStore = (): void => {};
    let cancelTimer = (): void => {};
    const queue = new AsyncQueue<WatchEvent>(WATCH_BUFFER + initial.length, () => {
      cancelStore();
      cancelTimer();
    });
    for (const e of initial) queue.push(e);
    const watch = this.deps.store.watch(
      prefix,
      { startRevision },
      {
        onEvents: (events) => {
          for (const e of events) {
            const out = this.toWatchEvent(e, sel);
            if (out) queue.push(out);
          }
        },
        onError: (err) => {
          if (err.code === 'compacted') {
            queue.push({ type: 'ERROR', object: resourceExpired(`too old resource version: ${startRevision - 1} (${err.revision ?? 0})`).status });
          } else {
            queue.push({ type: 'ERROR', object: this.readError(err).status });
          }
          queue.close();
        },
      },
    );
    cancelStore = () => watch.cancel();
    if (options.timeoutSeconds !== undefined && options.timeoutSeconds > 0) {
      cancelTimer = this.deps.clock.setTimeout(() => queue.close(), options.timeoutSeconds * 1000);
    }
    return queue;
  }

  /** A BOOKMARK carries only the kind and metadata.resourceVersion (plus the initial-events-end annotation). */
  protected bookmark(revision: number, initialEventsEnd: boolean): ApiObject {
    const metadata: ApiObject['metadata'] = { resourceVersion: String(revision) };
    if (initialEventsEnd) metadata.annotations = { [`${this.deps.naming.groupDomain}/initial-events-end`]: 'true' };
    return { apiVersion: this.apiVersion, kind: this.def.kind, metadata };
  }

  private toWatchEvent(e: StoreEvent, sel: Selection): WatchEvent | undefined {
    const filtered = !sel.label.empty || !sel.field.empty;
    if (e.type === 'delete') {
      if (!e.prevKv) return undefined;
      const obj = decodeFromStorage({ ...e.prevKv, modRevision: e.revision });
      if (filtered && !this.selected(sel, obj)) return undefined;
      return { type: 'DELETED', object: obj };
    }
    const obj = decodeFromStorage(e.kv);
    const isNew = e.kv.createRevision === e.kv.modRevision || !e.prevKv;
    if (!filtered) return { type: isNew ? 'ADDED' : 'MODIFIED', object: obj };
    const now = this.selected(sel, obj);
    const before = !isNew && e.prevKv ? this.selected(sel, decodeFromStorage(e.prevKv)) : false;
    if (now && before) return { type: 'MODIFIED', object: obj };
    if (now) return { type: 'ADDED', object: obj };
    if (before) return { type: 'DELETED', object: obj };
    return undefined;
  }
}
