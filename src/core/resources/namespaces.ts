/**
 * core/v1 Namespace (as upstream's namespace strategy): cluster-scoped, DNS-label names,
 * the `kubernetes` lifecycle finalizer in `spec.finalizers`, phase Active until deleted, and a
 * `<key domain>/metadata.name` label that always carries the name.
 */
import type { ApiObject } from '../api';
import { fieldErrors, FieldPath, type FieldError } from '../validation/field-errors';
import { FINALIZER_NAMESPACE, validateFinalizerName, validateStandardFinalizerName } from '../validation/metadata';
import { defineTyped } from './common';
import { deepCopy } from '../../util/json-values';
import type { DefineResource, Verb } from './definition';
import { column, OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION, OBJECT_META_NAME_DESCRIPTION, since, type TableDefinition } from '../table';

export interface Namespace extends ApiObject {
  spec?: { finalizers?: string[] };
  status?: {
    phase?: 'Active' | 'Terminating' | string;
    conditions?: Array<Record<string, unknown>>;
  };
}

export { FINALIZER_NAMESPACE };

/** Namespaces have no deletecollection (upstream discovery). */
const NAMESPACE_VERBS: readonly Verb[] = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];

const FINALIZERS = FieldPath.root('spec', 'finalizers');

function validateNamespace(ns: Namespace): FieldError[] {
  // Upstream reports these on `spec.finalizers` itself, without an index.
  return (ns.spec?.finalizers ?? []).flatMap((f) => [...validateFinalizerName(f, FINALIZERS), ...validateStandardFinalizerName(f, FINALIZERS)]);
}

/** A namespace's phase follows its deletionTimestamp (upstream ValidateNamespaceStatusUpdate). */
function validateNamespaceStatus(ns: Namespace): FieldError[] {
  const phase = ns.status?.phase ?? '';
  const path = FieldPath.root('status', 'Phase');
  if (!ns.metadata?.deletionTimestamp) {
    if (phase !== 'Active') return [fieldErrors.invalid(path, phase, "may only be 'Active' if `deletionTimestamp` is empty")];
  } else if (phase !== 'Terminating') {
    return [fieldErrors.invalid(path, phase, "may only be 'Terminating' if `deletionTimestamp` is not empty")];
  }
  return [];
}

/** upstream's Namespace printer. */
const NAMESPACE_TABLE: TableDefinition<Namespace> = {
  columns: [
    column('Name', 'string', OBJECT_META_NAME_DESCRIPTION, { format: 'name' }),
    column('Status', 'string', 'The status of the namespace'),
    column('Age', 'string', OBJECT_META_CREATION_TIMESTAMP_DESCRIPTION),
  ],
  row: (ns, { now }) => ({ cells: [ns.metadata?.name ?? '', ns.status?.phase ?? '', since(ns.metadata?.creationTimestamp, now)] }),
};

export const defineNamespaces: DefineResource = (naming) => {
  const nameLabel = naming.key('metadata.name');
  return defineTyped<Namespace>({
    group: '',
    version: 'v1',
    kind: 'Namespace',
    resource: 'namespaces',
    singular: 'namespace',
    namespaced: false,
    shortNames: ['ns'],
    verbs: NAMESPACE_VERBS,
    nameRule: 'dns1123Label',
    allowCreateOnUpdate: false,
    allowUnconditionalUpdate: true,
    returnDeletedObject: true,

    defaults(ns) {
      ns.status ??= {};
      ns.status.phase ||= 'Active';
      // Upstream labels every named namespace with its own name (SetDefaults_Namespace).
      if (ns.metadata?.name) ns.metadata.labels = { ...ns.metadata.labels, [nameLabel]: ns.metadata.name };
    },
    prepareForCreate(ns) {
      ns.status = { phase: 'Active' };
      // Every new namespace carries the lifecycle finalizer; it may be removed later via finalize.
      const finalizers = (ns.spec ??= {}).finalizers ?? [];
      if (!finalizers.includes(FINALIZER_NAMESPACE)) ns.spec.finalizers = [...finalizers, FINALIZER_NAMESPACE];
    },
    prepareForUpdate(ns, old) {
      // spec.finalizers only change through /finalize, status only through /status.
      ns.spec = { ...ns.spec, finalizers: deepCopy(old.spec?.finalizers) };
      ns.status = deepCopy(old.status);
    },
    validate: validateNamespace,
    status: {
      prepareForUpdate(ns, old) {
        ns.spec = deepCopy(old.spec);
      },
      validateUpdate: (ns) => validateNamespaceStatus(ns),
    },
    // `/finalize` changes spec.finalizers and nothing else (upstream's namespace finalize strategy).
    finalize: {
      prepareForUpdate(ns, old) {
        const finalizers = ns.spec?.finalizers;
        ns.spec = { ...deepCopy(old.spec), finalizers: deepCopy(finalizers) };
        ns.status = deepCopy(old.status);
        if (ns.metadata) {
          ns.metadata.labels = deepCopy(old.metadata?.labels);
          ns.metadata.annotations = deepCopy(old.metadata?.annotations);
          ns.metadata.finalizers = deepCopy(old.metadata?.finalizers);
        }
      },
    },
    pendingFinalizers: (ns) => (ns.spec?.finalizers ?? []).length > 0,
    prepareForDelete(ns) {
      ns.status = { ...ns.status, phase: 'Terminating' };
    },
    selectableFields(ns) {
      // `name` is an upstream compatibility quirk kept alongside metadata.name.
      return { 'status.phase': ns.status?.phase ?? '', name: ns.metadata?.name ?? '' };
    },
    table: NAMESPACE_TABLE,
  });
};
