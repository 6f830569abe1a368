/**
 * The operations each served resource offers, as upstream's route builder lays them out
 * (docs/API.md, "Endpoints"): the collection path (list, create, deletecollection), the object path
 * (read, replace, patch, delete), the subresources (status, scale, finalize) and the
 * all-namespaces list, each with its query parameters, body and responses. The v2 and v3
 * writers render the same specs.
 */
import { type ResourceDefinition, type Verb, subresourcesOf, verbsOf } from '../../core';
import type { ResourceIndex } from '../resource-index';
import type { OpenApiNames } from './names';
import type { GroupVersionKind } from './schemas';

export type ParamType = 'string' | 'integer' | 'boolean';

export interface ParamSpec {
  name: string;
  in: 'query' | 'path';
  type: ParamType;
  description: string;
  required?: boolean;
}

const q = (name: string, type: ParamType, description: string): ParamSpec => ({ name, in: 'query', type, description });

const P = {
  allowWatchBookmarks: q('allowWatchBookmarks', 'boolean', 'Ask for BOOKMARK events on a watch.'),
  continue: q('continue', 'string', 'The token of the next chunk of a list.'),
  dryRun: q('dryRun', 'string', 'When set to All, run every stage but storage.'),
  fieldManager: q('fieldManager', 'string', 'The name of the actor making the change.'),
  fieldSelector: q('fieldSelector', 'string', 'Select objects by their fields.'),
  fieldValidation: q('fieldValidation', 'string', 'Ignore, Warn (default) or Strict: what to do about unknown or duplicate fields.'),
  force: q('force', 'boolean', 'Take ownership of conflicting fields (apply only).'),
  gracePeriodSeconds: q('gracePeriodSeconds', 'integer', 'Seconds before the object is deleted.'),
  ignoreStoreReadError: q('ignoreStoreReadErrorWithClusterBreakingPotential', 'boolean', 'Delete an object that cannot be read from storage (unsafe, alpha).'),
  labelSelector: q('labelSelector', 'string', 'Select objects by their labels.'),
  limit: q('limit', 'integer', 'The most items to return in one chunk.'),
  orphanDependents: q('orphanDependents', 'boolean', 'Deprecated: use propagationPolicy.'),
  pretty: q('pretty', 'string', 'Pretty-print the output.'),
  propagationPolicy: q('propagationPolicy', 'string', 'Orphan, Background or Foreground: what happens to dependents.'),
  resourceVersion: q('resourceVersion', 'string', 'The version of the state to read from.'),
  resourceVersionMatch: q('resourceVersionMatch', 'string', 'How resourceVersion applies: Exact or NotOlderThan.'),
  sendInitialEvents: q('sendInitialEvents', 'boolean', 'Start a watch with the current state.'),
  timeoutSeconds: q('timeoutSeconds', 'integer', 'How long a list or watch may last.'),
  watch: q('watch', 'boolean', 'Watch for changes instead of listing.'),
  name: { name: 'name', in: 'path', type: 'string', description: 'The name of the object.', required: true } as ParamSpec,
  namespace: { name: 'namespace', in: 'path', type: 'string', description: 'The namespace of the objects.', required: true } as ParamSpec,
};

const LIST = [
  P.allowWatchBookmarks,
  P.continue,
  P.fieldSelector,
  P.labelSelector,
  P.limit,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
  P.watch,
];
const WRITE = [P.dryRun, P.fieldManager, P.fieldValidation];
const DELETE = [P.dryRun, P.gracePeriodSeconds, P.ignoreStoreReadError, P.orphanDependents, P.propagationPolicy];
const DELETE_COLLECTION = [
  P.continue,
  P.dryRun,
  P.fieldSelector,
  P.gracePeriodSeconds,
  P.ignoreStoreReadError,
  P.labelSelector,
  P.limit,
  P.orphanDependents,
  P.propagationPolicy,
  P.resourceVersion,
  P.resourceVersionMatch,
  P.sendInitialEvents,
  P.timeoutSeconds,
];

export type Method = 'get' | 'put' | 'post' | 'delete' | 'patch';

/** What a body or a response holds: a definition name (qualified type names are resolved by the writers). */
export type Payload = { type: string } | { definition: string };

export interface OperationSpec {
  method: Method;
  operationId: string;
  description: string;
  tag: string;
  /** upstream's x-kubernetes-action. */
  action: string;
  gvk?: GroupVersionKind;
  params: ParamSpec[];
  body?: { payload: Payload; kind: 'object' | 'patch' | 'delete'; required: boolean };
  responses: { code: string; description: string; payload?: Payload }[];
  /** Lists and watches can also stream. */
  streams: boolean;
}

export interface PathSpec {
  path: string;
  params: ParamSpec[];
  operations: OperationSpec[];
}

const OK = 'OK';

/**
 * The paths of one group version. `typeName(group, kind)` gives the qualified schema type of a
 * kind (`apps.v1.ReplicaSet`).
 */
export function groupVersionPaths(
  index: ResourceIndex,
  names: OpenApiNames,
  group: string,
  version: string,
  typeName: (group: string, version: string, kind: string) => string,
): PathSpec[] {
  const root = names.root(group, version);
  const tag = names.tag(group, version);
  const prefix = names.operationPrefix(group, version);
  const paths: PathSpec[] = [
    {
      path: `${root}/`,
      params: [],
      operations: [
        {
          method: 'get',
          operationId: `get${prefix}APIResources`,
          description: 'get available resources',
          tag,
          action: '',
          params: [],
          streams: false,
          responses: [
            { code: '200', description: OK, payload: { type: typeName('', 'v1', 'APIResourceList') } },
            { code: '401', description: 'Unauthorized' },
          ],
        },
      ],
    },
  ];
  const kindType = (kind: string): Payload => ({ type: typeName(group, version, kind) });
  for (const def of index.resourcesOf(group, version)) paths.push(...resourcePaths(def, { root, tag, prefix, names, kindType, typeName }));
  return paths;
}

interface Context {
  root: string;
  tag: string;
  prefix: string;
  names: OpenApiNames;
  kindType: (kind: string) => Payload;
  typeName: (group: string, version: string, kind: string) => string;
}

function resourcePaths(def: ResourceDefinition, c: Context): PathSpec[] {
  const verbs = new Set<Verb>(verbsOf(def));
  const kind = def.kind;
  const gvk: GroupVersionKind = { group: def.group, kind, version: def.version };
  const obj = c.kindType(kind);
  // Types that only create (reviews) have no list kind.
  const listed = verbs.has('list') || verbs.has('watch') || verbs.has('deletecollection');
  const list = listed ? c.kindType(`${kind}List`) : obj;
  const status: Payload = { type: c.typeName('', 'v1', 'Status') };
  const deleteOptions: Payload = { type: c.typeName('', 'v1', 'DeleteOptions') };
  const ns = def.namespaced ? 'Namespaced' : '';
  const base = def.namespaced ? `${c.root}/namespaces/{namespace}/${def.resource}` : `${c.root}/${def.resource}`;
  const nsParams = def.namespaced ? [P.namespace] : [];
  const op = (o: Omit<OperationSpec, 'tag' | 'streams'> & { streams?: boolean }): OperationSpec => ({ tag: c.tag, streams: false, ...o });
  const unauthorized = { code: '401', description: 'Unauthorized' };

  const collection: OperationSpec[] = [];
  if (verbs.has('list')) {
    collection.push(
      op({
        method: 'get',
        operationId: `list${c.prefix}${ns}${kind}`,
        description: `list or watch objects of kind ${kind}`,
        action: 'list',
        gvk,
        params: LIST,
        streams: true,
        responses: [{ code: '200', description: OK, payload: list }, unauthorized],
      }),
    );
  }
  if (verbs.has('create')) {
    collection.push(
      op({
        method: 'post',
        operationId: `create${c.prefix}${ns}${kind}`,
        description: `create a ${kind}`,
        action: 'post',
        gvk,
        params: WRITE,
        body: { payload: obj, kind: 'object', required: true },
        responses: [
          { code: '200', description: OK, payload: obj },
          { code: '201', description: 'Created', payload: obj },
          { code: '202', description: 'Accepted', payload: obj },
          unauthorized,
        ],
      }),
    );
  }
  if (verbs.has('deletecollection')) {
    collection.push(
      op({
        method: 'delete',
        operationId: `delete${c.prefix}Collection${ns}${kind}`,
        description: `delete collection of ${kind}`,
        action: 'deletecollection',
        gvk,
        params: DELETE_COLLECTION,
        body: { payload: deleteOptions, kind: 'delete', required: false },
        responses: [{ code: '200', description: OK, payload: status }, unauthorized],
      }),
    );
  }

  const item: OperationSpec[] = [];
  if (verbs.has('get')) {
    item.push(
      op({
        method: 'get',
        operationId: `read${c.prefix}${ns}${kind}`,
        description: `read the specified ${kind}`,
        action: 'get',
        gvk,
        params: [],
        responses: [{ code: '200', description: OK, payload: obj }, unauthorized],
      }),
    );
  }
  if (verbs.has('update')) item.push(replaceOp(c, `replace${c.prefix}${ns}${kind}`, `replace the specified ${kind}`, gvk, obj, op));
  if (verbs.has('delete')) {
    item.push(
      op({
        method: 'delete',
        operationId: `delete${c.prefix}${ns}${kind}`,
        description: `delete a ${kind}`,
        action: 'delete',
        gvk,
        params: DELETE,
        body: { payload: deleteOptions, kind: 'delete', required: false },
        responses: [{ code: '200', description: OK, payload: status }, { code: '202', description: 'Accepted', payload: status }, unauthorized],
      }),
    );
  }
  if (verbs.has('patch')) item.push(patchOp(c, `patch${c.prefix}${ns}${kind}`, `partially update the specified ${kind}`, gvk, obj, op));

  const paths: PathSpec[] = [];
  if (collection.length) paths.push({ path: base, params: [...nsParams, P.pretty], operations: collection });
  if (item.length) paths.push({ path: `${base}/{name}`, params: [P.name, ...nsParams, P.pretty], operations: item });
  for (const sub of subresourcesOf(def)) {
    const subKind = sub.responseKind ?? gvk;
    const payload: Payload = sub.responseKind ? { type: c.typeName(sub.responseKind.group, sub.responseKind.version, sub.responseKind.kind) } : obj;
    const suffix = sub.name[0]!.toUpperCase() + sub.name.slice(1);
    const subGvk: GroupVersionKind = { group: subKind.group, kind: subKind.kind, version: subKind.version };
    const ops: OperationSpec[] = [];
    if (sub.verbs.includes('get')) {
      ops.push(
        op({
          method: 'get',
          operationId: `read${c.prefix}${ns}${kind}${suffix}`,
          description: `read ${sub.name} of the specified ${kind}`,
          action: 'get',
          gvk: subGvk,
          params: [],
          responses: [{ code: '200', description: OK, payload }, unauthorized],
        }),
      );
    }
    if (sub.verbs.includes('create')) {
      ops.push(
        op({
          method: 'post',
          operationId: `create${c.prefix}${ns}${kind}${suffix}`,
          description: `create ${sub.name} of a ${kind}`,
          action: 'post',
          gvk: subGvk,
          params: WRITE,
          body: { payload, kind: 'object', required: true },
          responses: [
            { code: '200', description: OK, payload },
            { code: '201', description: 'Created', payload },
            { code: '202', description: 'Accepted', payload },
            unauthorized,
          ],
        }),
      );
    }
    if (sub.verbs.includes('update'))
      ops.push(replaceOp(c, `replace${c.prefix}${ns}${kind}${suffix}`, `replace ${sub.name} of the specified ${kind}`, subGvk, payload, op));
    if (sub.verbs.includes('patch'))
      ops.push(patchOp(c, `patch${c.prefix}${ns}${kind}${suffix}`, `partially update ${sub.name} of the specified ${kind}`, subGvk, payload, op));
    paths.push({ path: `${base}/{name}/${sub.name}`, params: [P.name, ...nsParams, P.pretty], operations: ops });
  }
  if (def.namespaced && verbs.has('list')) {
    paths.push({
      path: `${c.root}/${def.resource}`,
      params: [P.pretty],
      operations: [
        op({
          method: 'get',
          operationId: `list${c.prefix}${kind}ForAllNamespaces`,
          description: `list or watch objects of kind ${kind}`,
          action: 'list',
          gvk,
          params: LIST,
          streams: true,
          responses: [{ code: '200', description: OK, payload: list }, unauthorized],
        }),
      ],
    });
  }
  return paths;
}

type OpFactory = (o: Omit<OperationSpec, 'tag' | 'streams'> & { streams?: boolean }) => OperationSpec;

function replaceOp(_c: Context, operationId: string, description: string, gvk: GroupVersionKind, payload: Payload, op: OpFactory): OperationSpec {
  return op({
    method: 'put',
    operationId,
    description,
    action: 'put',
    gvk,
    params: WRITE,
    body: { payload, kind: 'object', required: true },
    responses: [
      { code: '200', description: OK, payload },
      { code: '201', description: 'Created', payload },
      { code: '401', description: 'Unauthorized' },
    ],
  });
}

function patchOp(c: Context, operationId: string, description: string, gvk: GroupVersionKind, payload: Payload, op: OpFactory): OperationSpec {
  return op({
    method: 'patch',
    operationId,
    description,
    action: 'patch',
    gvk,
    params: [...WRITE, P.force],
    body: { payload: { definition: c.names.patch }, kind: 'patch', required: true },
    responses: [
      { code: '200', description: OK, payload },
      { code: '201', description: 'Created', payload },
      { code: '401', description: 'Unauthorized' },
    ],
  });
}
