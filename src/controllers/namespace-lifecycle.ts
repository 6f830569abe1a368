/**
 * The namespace lifecycle controller: when a namespace is Terminating, delete every namespaced
 * object in it, then remove the `kubernetes` finalizer from `spec.finalizers` through the
 * `finalize` subresource, after which the namespace itself is removed. It is an ordinary API
 * client of the core (list/watch and writes through CoreApi), as upstream's controller is.
 */
import { type ApiObject, type RequestContext, type ResourceCatalog, type ResourceDefinition, verbsOf } from '../core';
import { StatusError } from '../status';
import type { ApiControllerOptions } from './options';

/** The finalizer upstream's namespace controller owns (a literal, not a vendor name). */
export const NAMESPACE_FINALIZER = 'kubernetes';

export interface NamespaceLifecycleOptions extends Pick<ApiControllerOptions, 'core' | 'user' | 'log'> {
  resources: readonly ResourceDefinition[];
  /** The served types as custom resources come and go (the core's catalog); `resources` when absent. */
  catalog?: ResourceCatalog;
}

export class NamespaceLifecycleController {
  private stopped = false;
  private closeWatch: (() => void) | undefined;
  private readonly inFlight = new Set<string>();
  private readonly ctx: RequestContext;

  constructor(private readonly options: NamespaceLifecycleOptions) {
    this.ctx = { user: options.user, userAgent: 'keelson-controller-manager/namespace-controller' };
  }

  /** List+watch namespaces and finalize the Terminating ones; resumes after watch errors. */
  async start(): Promise<void> {
    const target = { group: '', version: 'v1', resource: 'namespaces' };
    const loop = async (): Promise<void> => {
      while (!this.stopped) {
        try {
          const stream = await this.options.core.watch(target, {}, this.ctx);
          this.closeWatch = () => stream.close();
          for await (const event of stream) {
            if (this.stopped) break;
            if ((event.type === 'ADDED' || event.type === 'MODIFIED') && event.object.metadata?.deletionTimestamp) {
              void this.finalize(event.object);
            }
          }
        } catch (err) {
          this.options.log?.(`namespace controller: watch failed: ${(err as Error).message}`);
        }
        if (!this.stopped) await new Promise((r) => setTimeout(r, 200));
      }
    };
    void loop();
  }

  stop(): void {
    this.stopped = true;
    this.closeWatch?.();
  }

  private async retry(name: string): Promise<void> {
    if (this.stopped) return;
    try {
      const ns = await this.options.core.get({ group: '', version: 'v1', resource: 'namespaces', name }, {}, this.ctx);
      if (ns.metadata?.deletionTimestamp) await this.finalize(ns);
    } catch {
      // Gone already, or the next watch event will bring it back.
    }
  }

  private async finalize(ns: ApiObject): Promise<void> {
    const name = ns.metadata!.name!;
    if (this.inFlight.has(name)) return;
    this.inFlight.add(name);
    try {
      const resources = this.options.catalog?.resources ?? this.options.resources;
      for (const def of resources) {
        if (!def.namespaced || !verbsOf(def).includes('deletecollection')) continue;
        await this.options.core.deleteCollection({ group: def.group, version: def.version, resource: def.resource, namespace: name }, {}, {}, this.ctx);
      }
      for (const def of resources) {
        // Types that are never stored (LocalSubjectAccessReview) have nothing to wait for.
        if (!def.namespaced || !verbsOf(def).includes('list')) continue;
        const left = await this.options.core.list({ group: def.group, version: def.version, resource: def.resource, namespace: name }, { limit: 1 }, this.ctx);
        if (left.items.length > 0) {
          // Objects still finalizing: look again shortly, as upstream's controller requeues.
          setTimeout(() => void this.retry(name), 1000).unref();
          return;
        }
      }
      const current = await this.options.core.get({ group: '', version: 'v1', resource: 'namespaces', name }, {}, this.ctx);
      const spec = (current.spec ?? {}) as { finalizers?: string[] };
      const finalizers = (spec.finalizers ?? []).filter((f) => f !== NAMESPACE_FINALIZER);
      await this.options.core.update(
        { group: '', version: 'v1', resource: 'namespaces', name, subresource: 'finalize' },
        { ...current, spec: { ...spec, finalizers } },
        {},
        this.ctx,
      );
    } catch (err) {
      if (!StatusError.is(err, 'NotFound')) this.options.log?.(`namespace controller: finalizing ${name}: ${(err as Error).message}`);
    } finally {
      this.inFlight.delete(name);
    }
  }
}
