/**
 * Reads of one resource type: get, list (chunked, at one revision, with selectors) and watch,
 * with upstream's resourceVersion semantics (docs/API.md, "Reads and resourceVersion"). This class
 * turns options into storage requests and storage answers into API objects; which source
 * answers is the storage's business (the watch cache decorating the backing store).
 */
import type { ApiList, ApiObject, GetOptions, ListOptions, WatchStream } from '../api';
import type { ResourceDefinition } from '../resources/definition';
import type { Naming } from '../../naming';
import { type GroupResource, badRequest, notFound } from '../../status';
import { parseSelection } from '../selectors';
import { collectionPrefix, objectKey, storedResource } from '../storage/keys';
import type { ListAt, ResourceStorage } from '../storage/resource-storage';
import { planGet, planList, planWatch, validateListOptions } from './list-options';
import { decodeContinue, encodeContinue } from '../storage/continue-token';

export class ResourceReads {
  readonly apiVersion: string;
  readonly groupResource: GroupResource;

  constructor(
    readonly def: ResourceDefinition,
    private readonly storage: ResourceStorage,
    private readonly naming: Naming,
  ) {
    this.apiVersion = def.group ? `${def.group}/${def.version}` : def.version;
    this.groupResource = { group: def.group, resource: def.resource };
  }

  /** The version in continue tokens and of ListOptions errors: `meta.<groupDomain>/v1`. */
  private get listVersion(): string {
    return `${this.naming.groups.meta}/v1`;
  }

  async get(namespace: string | undefined, name: string, options: GetOptions): Promise<ApiObject> {
    return this.getNow(namespace, name, options);
  }

  /** `get`, answered within the call where the cache can (resourceVersion 0), failing then by a throw; else its promise. */
  getNow(namespace: string | undefined, name: string, options: GetOptions): ApiObject | Promise<ApiObject> {
    const found = this.storage.get(objectKey(storedResource(this.def), namespace, name), planGet(options.resourceVersion));
    if (found instanceof Promise) return found.then((obj) => this.present(obj, name));
    return this.present(found, name);
  }

  private present(obj: ApiObject | undefined, name: string): ApiObject {
    if (!obj) throw notFound(this.groupResource, name);
    return obj;
  }

  /** The object as the watch cache holds it now, if it does: a read at resourceVersion 0 that needs no wait. */
  peek(namespace: string | undefined, name: string): ApiObject | undefined {
    return this.storage.peek?.(objectKey(storedResource(this.def), namespace, name));
  }

  /** A list as of one revision, chunked by `limit`/`continue` (upstream's list rules, row by row). */
  async list(namespace: string | undefined, options: ListOptions): Promise<ApiList> {
    validateListOptions(options, false, this.naming.groups.meta);
    const selection = parseSelection(this.def, options.labelSelector, options.fieldSelector);
    const prefix = collectionPrefix(storedResource(this.def), namespace);
    const limit = options.limit && options.limit > 0 ? options.limit : 0;
    const plan = planList(options);
    let at: ListAt;
    if (plan.source === 'continue') {
      const token = decodeContinue(plan.token, this.listVersion);
      if (options.resourceVersion && options.resourceVersion !== '0') {
        throw badRequest('specifying resource version is not allowed when using continue');
      }
      // A token from a compacted list continues at the latest revision (-1), as upstream's does.
      at = { kind: 'continue', revision: token.revision > 0 ? token.revision : undefined, startKey: token.start, tokenStart: token.start };
    } else if (plan.source === 'exact') {
      at = { kind: 'exact', revision: plan.revision };
    } else {
      at = { kind: 'fresh', freshness: plan.freshness };
    }
    const chunk = await this.storage.list({ prefix, selection, limit, at });
    const metadata: ApiList['metadata'] = { resourceVersion: String(chunk.revision) };
    if (chunk.nextKey !== undefined) {
      metadata.continue = encodeContinue(this.listVersion, chunk.revision, chunk.nextKey.slice(prefix.length));
      if (chunk.remaining !== undefined && chunk.remaining > 0) metadata.remainingItemCount = chunk.remaining;
    }
    // Frozen when the watch cache shares it between lists (Chunk.items): read, never changed in place.
    return { apiVersion: this.apiVersion, kind: this.def.custom?.listKind ?? `${this.def.kind}List`, metadata, items: chunk.items as ApiObject[] };
  }

  /**
   * Watch: "Get State and Start at Most Recent/Any" (synthetic ADDED events) for an unset or
   * `0` resourceVersion, "Start at Exact" otherwise, streaming lists with `sendInitialEvents`.
   * Objects leaving the selection are DELETED for this watcher. A version that left the history
   * window is one ERROR event carrying 410 Expired, as upstream sends it.
   */
  async watch(namespace: string | undefined, options: ListOptions): Promise<WatchStream> {
    validateListOptions(options, true, this.naming.groups.meta);
    const selection = parseSelection(this.def, options.labelSelector, options.fieldSelector);
    const plan = planWatch(options);
    const timeoutMs = options.timeoutSeconds !== undefined && options.timeoutSeconds > 0 ? options.timeoutSeconds * 1000 : undefined;
    return this.storage.watch({
      prefix: collectionPrefix(storedResource(this.def), namespace),
      selection,
      ...plan,
      bookmarks: options.allowWatchBookmarks === true,
      timeoutMs,
    });
  }
}
