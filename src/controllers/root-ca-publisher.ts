/**
 * The root CA publisher, as upstream's `root-ca-cert-publisher`: every active namespace has the
 * ConfigMap `<prefix>-root-ca.crt` (name from the naming profile) whose `ca.crt` is the CA that
 * verifies the API server, created when the namespace appears, recreated when deleted and put
 * back when edited. Pods mount it next to their service-account token.
 */
import { isDeepStrictEqual } from 'node:util';
import { type ApiObject, type RequestContext, type ResourceTarget, followResource, type InformerChange, type InformerView } from '../core';
import { StatusError } from '../status';
import { WorkQueue } from './work-queue';
import type { ApiControllerOptions } from './options';

export interface RootCaPublisherOptions extends ApiControllerOptions {
  /** PEM bundle published as `ca.crt`. */
  rootCA: string;
}

const DESCRIPTION = 'Contains a CA bundle that can be used to verify the API server when using its in-cluster endpoints. No other usage is guaranteed.';

export class RootCaPublisher {
  private readonly namespaces: InformerView;
  private readonly configMaps: InformerView;
  private readonly queue: WorkQueue<string>;
  private readonly ctx: RequestContext;
  private readonly name: string;

  constructor(private readonly options: RootCaPublisherOptions) {
    this.name = options.naming.rootCaConfigMap;
    this.ctx = { user: options.user, userAgent: 'keelson-controller-manager/root-ca-cert-publisher' };
    this.queue = new WorkQueue<string>(
      (ns) => ns,
      (ns) => this.sync(ns),
      { name: 'root_ca_cert_publisher', metrics: options.queueMetrics },
    );
    const all = () => {
      for (const ns of this.namespaces.objects.values()) this.queue.add(ns.metadata!.name!);
    };
    this.namespaces = followResource(options, { group: '', version: 'v1', resource: 'namespaces' }, this.ctx, (c?: InformerChange) =>
      c ? this.queue.add(c.object.metadata!.name!) : all(),
    );
    this.configMaps = followResource(options, { group: '', version: 'v1', resource: 'configmaps' }, this.ctx, (c?: InformerChange) => {
      if (!c) return all();
      if (c.object.metadata?.name === this.name) this.queue.add(c.object.metadata.namespace!);
    });
  }

  start(): void {
    this.queue.startWhen(Promise.all([this.namespaces.synced, this.configMaps.synced]), (err) =>
      this.options.log?.(`root-ca-cert-publisher: informers failed to start: ${err.message}`),
    );
  }

  idle(): Promise<void> {
    return this.queue.idle();
  }

  stop(): void {
    this.queue.stop();
    this.namespaces.stop();
    this.configMaps.stop();
  }

  private async sync(namespace: string): Promise<void> {
    const ns = this.namespaces.objects.get(`/${namespace}`);
    if (!ns || ns.metadata?.deletionTimestamp || (ns.status as { phase?: string } | undefined)?.phase === 'Terminating') return;
    const data = { 'ca.crt': this.options.rootCA };
    const annotations = { [this.options.naming.key('description')]: DESCRIPTION };
    const target: ResourceTarget = { group: '', version: 'v1', resource: 'configmaps', namespace };
    const current: ApiObject | undefined = this.configMaps.objects.get(`${namespace}/${this.name}`);
    try {
      if (!current) {
        await this.options.core.create(
          target,
          { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: this.name, namespace, annotations }, data },
          {},
          this.ctx,
        );
        return;
      }
      const currentAnnotations = current.metadata?.annotations ?? {};
      const annotated = Object.entries(annotations).every(([k, v]) => currentAnnotations[k] === v);
      if (isDeepStrictEqual(current.data, data) && annotated) return;
      const fixed = { ...current, metadata: { ...current.metadata, annotations: { ...currentAnnotations, ...annotations } }, data };
      await this.options.core.update({ ...target, name: this.name }, fixed, {}, this.ctx);
    } catch (err) {
      // Already there or changed meanwhile (the informer brings it back), or the namespace is going away.
      if (StatusError.is(err, 'AlreadyExists') || StatusError.is(err, 'Conflict') || StatusError.is(err, 'NotFound') || StatusError.is(err, 'Forbidden'))
        return;
      throw err;
    }
  }
}
