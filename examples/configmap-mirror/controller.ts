/**
 * An example controller, written as a controller author would with @kubernetes/client-node: it
 * mirrors every ConfigMap of one namespace into another, through an informer (list + watch) and
 * server-side apply, and removes the mirror when the original goes.
 */
import * as k8s from '@kubernetes/client-node';

export const FIELD_MANAGER = 'configmap-mirror';

export class ConfigMapMirror {
  private readonly informer: k8s.Informer<k8s.V1ConfigMap>;
  private readonly objects: k8s.KubernetesObjectApi;
  private readonly core: k8s.CoreV1Api;

  constructor(
    kubeconfig: k8s.KubeConfig,
    private readonly source: string,
    private readonly target: string,
  ) {
    this.core = kubeconfig.makeApiClient(k8s.CoreV1Api);
    this.objects = k8s.KubernetesObjectApi.makeApiClient(kubeconfig);
    this.informer = k8s.makeInformer(kubeconfig, `/api/v1/namespaces/${source}/configmaps`, () => this.core.listNamespacedConfigMap({ namespace: source }));
    this.informer.on('add', (cm) => void this.mirror(cm));
    this.informer.on('update', (cm) => void this.mirror(cm));
    this.informer.on('delete', (cm) => void this.remove(cm));
  }

  start(): Promise<void> {
    return this.informer.start();
  }

  stop(): Promise<void> {
    return this.informer.stop();
  }

  /** Apply the mirror: this manager owns its data and label, so a removed key disappears too. */
  private async mirror(cm: k8s.V1ConfigMap): Promise<void> {
    const name = cm.metadata!.name!;
    await this.objects.patch(
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, namespace: this.target, labels: { 'mirror-of': `${this.source}.${name}` } },
        data: cm.data ?? {},
      },
      undefined,
      undefined,
      FIELD_MANAGER,
      true,
      k8s.PatchStrategy.ServerSideApply,
    );
  }

  private async remove(cm: k8s.V1ConfigMap): Promise<void> {
    await this.core.deleteNamespacedConfigMap({ name: cm.metadata!.name!, namespace: this.target }).catch((err: { code?: number }) => {
      if (err.code !== 404) throw err;
    });
  }
}
