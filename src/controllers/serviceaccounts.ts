/**
 * The service-account controller, as upstream's: every active namespace has a ServiceAccount
 * named `default`, created when the namespace appears and again when it is deleted. A namespace
 * being deleted gets none. An ordinary API client of the core.
 */
import { type ApiObject, type RequestContext, followResource, type InformerChange, type InformerView } from '../core';
import { StatusError } from '../status';
import { WorkQueue } from './work-queue';
import type { ApiControllerOptions } from './options';

export const DEFAULT_SERVICE_ACCOUNT = 'default';

export type ServiceAccountControllerOptions = Pick<ApiControllerOptions, 'core' | 'informers' | 'user' | 'clock' | 'log' | 'queueMetrics'>;

export class ServiceAccountController {
  private readonly namespaces: InformerView;
  private readonly accounts: InformerView;
  private readonly queue: WorkQueue<string>;
  private readonly ctx: RequestContext;

  constructor(private readonly options: ServiceAccountControllerOptions) {
    this.ctx = { user: options.user, userAgent: 'keelson-controller-manager/serviceaccount-controller' };
    this.queue = new WorkQueue<string>(
      (ns) => ns,
      (ns) => this.sync(ns),
      { name: 'serviceaccount', metrics: options.queueMetrics },
    );
    const all = () => {
      for (const ns of this.namespaces.objects.values()) this.queue.add(ns.metadata!.name!);
    };
    this.namespaces = followResource(options, { group: '', version: 'v1', resource: 'namespaces' }, this.ctx, (c?: InformerChange) =>
      c ? this.queue.add(c.object.metadata!.name!) : all(),
    );
    this.accounts = followResource(options, { group: '', version: 'v1', resource: 'serviceaccounts' }, this.ctx, (c?: InformerChange) => {
      if (!c) return all();
      if (c.type === 'DELETED' && c.object.metadata?.name === DEFAULT_SERVICE_ACCOUNT) this.queue.add(c.object.metadata.namespace!);
    });
  }

  start(): void {
    this.queue.startWhen(Promise.all([this.namespaces.synced, this.accounts.synced]), (err) =>
      this.options.log?.(`serviceaccount-controller: informers failed to start: ${err.message}`),
    );
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  stop(): void {
    this.queue.stop();
    this.namespaces.stop();
    this.accounts.stop();
  }

  private async sync(namespace: string): Promise<void> {
    const ns: ApiObject | undefined = this.namespaces.objects.get(`/${namespace}`);
    if (!ns || ns.metadata?.deletionTimestamp || (ns.status as { phase?: string } | undefined)?.phase === 'Terminating') return;
    if (this.accounts.objects.has(`${namespace}/${DEFAULT_SERVICE_ACCOUNT}`)) return;
    try {
      await this.options.core.create(
        { group: '', version: 'v1', resource: 'serviceaccounts', namespace },
        { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: DEFAULT_SERVICE_ACCOUNT, namespace } },
        {},
        this.ctx,
      );
    } catch (err) {
      // Already there (the informer lags), or the namespace is going away: nothing to do.
      if (StatusError.is(err, 'AlreadyExists') || StatusError.is(err, 'Forbidden') || StatusError.is(err, 'NotFound')) return;
      throw err;
    }
  }
}
