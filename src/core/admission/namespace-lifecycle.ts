/**
 * NamespaceLifecycle, upstream's admission plugin of the same name: no new objects in a
 * namespace that does not exist (404 for the namespace) or is being terminated (403, with a
 * `NamespaceTerminating` cause), and the system namespaces cannot be deleted (403 `this
 * namespace may not be deleted`). Like upstream it reads the namespace from the watch cache and
 * only on a miss asks for the most recent state, so a namespace created a moment ago is found.
 */
import type { ApiObject, GetOptions } from '../api';
import { StatusError, forbidden, notFound } from '../../status';
import type { AdmissionAttributes, AdmissionPlugin } from './types';

/** How the plugin reads a namespace. */
export interface NamespaceReader {
  get(namespace: undefined, name: string, options: GetOptions): Promise<ApiObject>;
  /** The namespace as the watch cache holds it now, if it does. */
  peek?(namespace: undefined, name: string): ApiObject | undefined;
}

export interface NamespaceLifecycleOptions {
  namespaces: NamespaceReader;
  /** Namespaces that may never be deleted (upstream: default, kube-system, kube-public). */
  immortal: readonly string[];
}

export function namespaceLifecycle(options: NamespaceLifecycleOptions): AdmissionPlugin {
  const immortal = new Set(options.immortal);

  async function read(name: string): Promise<ApiObject> {
    try {
      return await options.namespaces.get(undefined, name, { resourceVersion: '0' });
    } catch (err) {
      if (!StatusError.is(err, 'NotFound')) throw err;
    }
    try {
      return await options.namespaces.get(undefined, name, {});
    } catch (err) {
      if (StatusError.is(err, 'NotFound')) throw notFound({ group: '', resource: 'namespaces' }, name);
      throw err;
    }
  }

  function terminating(a: AdmissionAttributes, namespace: string): StatusError {
    const err = forbidden(
      { group: a.group, resource: a.resource },
      a.name,
      `unable to create new content in namespace ${namespace} because it is being terminated`,
    );
    err.status.details!.causes = [{ reason: 'NamespaceTerminating', message: `namespace ${namespace} is being terminated`, field: 'metadata.namespace' }];
    return err;
  }

  async function admitIn(a: AdmissionAttributes, namespace: string): Promise<void> {
    const ns = await read(namespace);
    if (ns.metadata?.deletionTimestamp) throw terminating(a, namespace);
  }

  return {
    name: 'NamespaceLifecycle',
    // A namespace found in the watch cache is answered at once (the admission chain stays
    // synchronous); a miss reads as before. A refusal is a rejected promise either way.
    admit(a: AdmissionAttributes): void | Promise<void> {
      const isNamespace = a.group === '' && a.resource === 'namespaces';
      if (a.operation === 'DELETE' && isNamespace && a.subresource === '' && immortal.has(a.name)) {
        return Promise.reject(forbidden({ group: '', resource: 'namespaces' }, a.name, 'this namespace may not be deleted'));
      }
      // Cluster-scoped objects and namespaces themselves are always allowed; so are deletions.
      if (!a.namespace || isNamespace || a.operation !== 'CREATE') return;
      const cached = options.namespaces.peek?.(undefined, a.namespace);
      if (!cached) return admitIn(a, a.namespace);
      if (cached.metadata?.deletionTimestamp) return Promise.reject(terminating(a, a.namespace));
    },
  };
}
