/**
 * ServiceAccount, upstream's admission plugin of the same name, for pods: a pod without a
 * service account runs as `default`; the account must exist (403 otherwise, in upstream's
 * words); its image pull secrets are copied to a pod that names none; and unless the pod or
 * the account opts out, the API credentials are mounted: one projected volume
 * (`<prefix>-api-access-<suffix>`: a bound token, the cluster's root CA, the namespace)
 * mounted read-only into every container at the service-account directory. Mirror pods (made
 * by a kubelet from a static manifest) may not use service accounts at all.
 */
import type { ApiObject } from '../api';
import type { Naming } from '../../naming';
import { forbidden } from '../../status';
import { randomNameSuffix } from '../../util/generated-names';
import type { Container, PodSpec, Volume } from '../resources/pod-spec';
import type { AdmissionReader } from './reader';
import type { AdmissionAttributes, AdmissionPlugin } from './types';

/** Upstream's bound token lifetime for the mounted token: an hour plus seven seconds, so a kubelet can tell it from a requested one. */
const TOKEN_EXPIRATION_SECONDS = 3607;
const DEFAULT_SERVICE_ACCOUNT = 'default';

interface ServiceAccountObject extends ApiObject {
  automountServiceAccountToken?: boolean;
  imagePullSecrets?: Array<{ name?: string }>;
}

export interface ServiceAccountOptions {
  naming: Naming;
  reader: AdmissionReader;
}

export function serviceAccountAdmission({ naming, reader }: ServiceAccountOptions): AdmissionPlugin {
  const mirrorAnnotation = naming.key('config.mirror');
  const mountPath = `/var/run/secrets/${naming.keyDomain}/serviceaccount`;
  const volumePrefix = naming.apiAccessVolumePrefix;

  const refuse = (a: AdmissionAttributes, message: string) => forbidden({ group: a.group, resource: a.resource }, a.name, message);

  return {
    name: 'ServiceAccount',
    // Anything but a pod's create: nothing to do, at once.
    admit(a) {
      if (a.group !== '' || a.resource !== 'pods' || a.subresource !== '' || a.operation !== 'CREATE' || !a.object) return;
      return admitPod(a);
    },
  };

  async function admitPod(a: AdmissionAttributes): Promise<void> {
    const pod = a.object as ApiObject & { spec?: PodSpec };
    const spec: PodSpec & { imagePullSecrets?: Array<{ name?: string }> } = (pod.spec ??= { containers: [] });
    if (pod.metadata?.annotations?.[mirrorAnnotation] !== undefined) {
      if (spec.serviceAccountName) throw refuse(a, 'a mirror pod may not reference service accounts');
      return;
    }
    if (!spec.serviceAccountName) spec.serviceAccountName = spec.serviceAccount || DEFAULT_SERVICE_ACCOUNT;
    spec.serviceAccount = spec.serviceAccountName;
    const namespace = a.namespace ?? pod.metadata?.namespace ?? '';
    const account = (await reader.get({ group: '', version: 'v1', resource: 'serviceaccounts', namespace, name: spec.serviceAccountName })) as
      | ServiceAccountObject
      | undefined;
    if (!account) {
      throw refuse(a, `error looking up service account ${namespace}/${spec.serviceAccountName}: serviceaccount "${spec.serviceAccountName}" not found`);
    }
    const automount = (spec.automountServiceAccountToken as boolean | undefined) ?? account.automountServiceAccountToken ?? true;
    if (automount) mountToken(spec);
    if ((spec.imagePullSecrets ?? []).length === 0 && (account.imagePullSecrets ?? []).length > 0) {
      spec.imagePullSecrets = account.imagePullSecrets!.map((s) => ({ name: s.name }));
    }
  }

  function mountToken(spec: PodSpec): void {
    const containers: Container[] = [...(spec.initContainers ?? []), ...(spec.containers ?? [])];
    const mountedAlready = (c: Container) => ((c.volumeMounts as Array<{ mountPath?: string }> | undefined) ?? []).some((m) => m.mountPath === mountPath);
    // A pod that mounts something at the credentials' directory itself keeps it.
    if (containers.some(mountedAlready)) return;
    const volumes: Volume[] = (spec.volumes ??= []);
    let name = `${volumePrefix}${randomNameSuffix()}`;
    while (volumes.some((v) => v.name === name)) name = `${volumePrefix}${randomNameSuffix()}`;
    volumes.push({
      name,
      projected: {
        sources: [
          { serviceAccountToken: { expirationSeconds: TOKEN_EXPIRATION_SECONDS, path: 'token' } },
          { configMap: { name: naming.rootCaConfigMap, items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
          { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
        ],
        defaultMode: 0o644,
      },
    });
    for (const c of containers) {
      const mounts = ((c.volumeMounts as unknown[] | undefined) ?? []) as unknown[];
      c.volumeMounts = [...mounts, { name, readOnly: true, mountPath }];
    }
  }
}
