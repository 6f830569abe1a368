/**
 * Resolve a resource request to one CoreApi call, as upstream's installer registers routes:
 * a collection path takes GET (list/watch), POST and DELETE; an object path GET, PUT, PATCH,
 * DELETE; a subresource path the verbs of that subresource; a namespaced type's
 * all-namespaces path only GET. A path with no route is 404, a route without the method 405,
 * both with go-restful's generic messages (docs/API.md, "Endpoints").
 */
import { type ResourceTarget, type ResourceDefinition, type Verb, subresourcesOf, verbsOf } from '../../core';
import { StatusError, pathNotFound } from '../../status';
import type { ResourceIndex } from '../resource-index';
import type { ResourceRequestInfo } from '../types';

export type ResourceAction = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete' | 'deletecollection';

export interface ResourceRoute {
  action: ResourceAction;
  definition: ResourceDefinition;
  target: ResourceTarget;
  /** The object named by the path of a `/watch/` request, watched through a field selector. */
  watchName?: string;
}

/** go-restful's 405, as upstream's service error handler renders it. */
export function methodNotAllowed(): StatusError {
  return new StatusError({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'the server does not allow this method on the requested resource',
    reason: 'MethodNotAllowed',
    details: {},
    code: 405,
  });
}

type Shape = 'collection' | 'allNamespaces' | 'object' | 'subresource';

/** Which action each method maps to on a path of this shape, given the verbs served there. */
function methodsFor(shape: Shape, verbs: readonly Verb[]): ReadonlyMap<string, ResourceAction> {
  let byShape = methodTables.get(verbs);
  if (!byShape) methodTables.set(verbs, (byShape = new Map()));
  let methods = byShape.get(shape);
  if (!methods) byShape.set(shape, (methods = methodTable(shape, verbs)));
  return methods;
}

/** methodsFor's tables, by the (shared) verb list they were built from. Shared by every server in the process: a pure memo. */
const methodTables = new WeakMap<readonly Verb[], Map<Shape, ReadonlyMap<string, ResourceAction>>>();

function methodTable(shape: Shape, verbs: readonly Verb[]): Map<string, ResourceAction> {
  const has = (v: Verb) => verbs.includes(v);
  const m = new Map<string, ResourceAction>();
  const addGet = (action: ResourceAction) => {
    m.set('GET', action);
    m.set('HEAD', action);
  };
  switch (shape) {
    case 'allNamespaces':
      if (has('list') || has('watch')) addGet('list');
      break;
    case 'collection':
      if (has('list') || has('watch')) addGet('list');
      if (has('create')) m.set('POST', 'create');
      if (has('deletecollection')) m.set('DELETE', 'deletecollection');
      break;
    case 'object':
    case 'subresource':
      if (shape === 'subresource' && has('create')) m.set('POST', 'create');
      if (has('get')) addGet('get');
      if (has('update')) m.set('PUT', 'update');
      if (has('patch')) m.set('PATCH', 'patch');
      if (has('delete')) m.set('DELETE', 'delete');
      break;
  }
  return m;
}

export function resolveResourceRoute(info: ResourceRequestInfo, method: string, index: ResourceIndex): ResourceRoute {
  const { parts } = info;
  // The `/proxy/` path prefix was removed upstream long ago; nothing answers there.
  if (info.verb === 'proxy') throw pathNotFound();
  if (parts.length === 0 || parts.length > 3 || parts.some((p) => p === '')) throw pathNotFound();
  const def = index.lookup(info.apiGroup, info.apiVersion, info.resource);
  if (!def) throw pathNotFound();

  // Namespaced types live below namespaces/{ns}/ (or the all-namespaces collection); cluster types never do.
  if (def.namespaced ? !info.namespaceScopedPath && parts.length > 1 : info.namespaceScopedPath) throw pathNotFound();
  const namespace = def.namespaced && info.namespaceScopedPath ? info.namespace : undefined;
  if (namespace === '') throw pathNotFound();

  let shape: Shape;
  let verbs: readonly Verb[] = verbsOf(def);
  let subresource: string | undefined;
  if (parts.length === 1) {
    shape = def.namespaced && !namespace ? 'allNamespaces' : 'collection';
  } else if (parts.length === 2) {
    shape = 'object';
  } else {
    shape = 'subresource';
    subresource = parts[2];
    const sub = subresourcesOf(def).find((s) => s.name === subresource);
    if (!sub) throw pathNotFound();
    verbs = sub.verbs;
  }

  const target: ResourceTarget = { group: def.group, version: def.version, resource: def.resource };
  if (namespace) target.namespace = namespace;
  if (parts.length >= 2) target.name = parts[1];
  if (subresource) target.subresource = subresource;

  if (info.watchPrefix) {
    // Deprecated `/watch/` paths: GET only, on collections and single objects.
    if (shape === 'subresource' || !verbs.includes('watch')) throw pathNotFound();
    if (method !== 'GET' && method !== 'HEAD') throw methodNotAllowed();
    const watchName = target.name;
    delete target.name;
    return { action: 'watch', definition: def, target, watchName };
  }

  const methods = methodsFor(shape, verbs);
  if (methods.size === 0) throw pathNotFound();
  const action = methods.get(method);
  if (!action) throw methodNotAllowed();
  return { action, definition: def, target };
}
