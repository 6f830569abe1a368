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
  /**
   * The media types, where they are not the built-in types' (a custom resource's operations
   * consume and produce JSON and YAML, its patches the JSON, merge and apply patch types).
   */
  consumes?: readonly string[];
  produces?: readonly string[];
  /** v2: the body parameter first, as kube-openapi sorts a custom resource's parameters by name (`body` before the rest). */
  bodyFirst?: boolean;
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
  index: Pick<ResourceIndex, 'resourcesOf'>,
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

/** A custom resource's operations consume and produce these (apiextensions' builder: runtime.ContentTypeJSON, ContentTypeYAML). */
const CUSTOM_MEDIA_TYPES = ['application/json', 'application/yaml'];
/** ... and its patches these, in the builder's order (not sorted, unlike the built-in types'). */
const CUSTOM_PATCH_TYPES = ['application/json-patch+json', 'application/merge-patch+json', 'application/apply-patch+yaml'];

/** Parameters by name, then by location (kube-openapi's sortParameters). */
function byName(a: ParamSpec, b: ParamSpec): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : a.in < b.in ? -1 : a.in > b.in ? 1 : 0;
}

/** What a custom resource's routes need: its definitions, and whether it has the status and scale subresources. */
export interface CustomRoutes {
  /** Definition names of the kind and its list. */
  kind: string;
  list: string;
  status: boolean;
  scale: boolean;
}

/**
 * A custom resource's paths as apiextensions-apiserver's OpenAPI builder lays them out (its
 * generateBuilder and buildRoute), which differ from the built-in types' in places:
 *
 * - every route is there whatever the verbs served (a terminating definition's `create`
 *   included), and the status and scale subresources' come from the served version;
 * - operations are named `<verb>[Namespaced]<Kind>[Subresource]`, prefixed by the group
 *   version as for built-in types (`readStableExampleComV1NamespacedCronTabStatus`,
 *   `deleteStableExampleComV1CollectionNamespacedCronTab`,
 *   `listStableExampleComV1CronTabForAllNamespaces`);
 * - query parameters are the fields of each verb's options (GetOptions' resourceVersion on a
 *   read, ListOptions' on a list and on a delete of the collection, which takes no body,
 *   UpdateOptions', PatchOptions', CreateOptions', DeleteOptions'), sorted by name;
 * - every operation carries the custom kind's group-version-kind, the scale subresource's too
 *   (whose payload is autoscaling/v1 Scale);
 * - responses: 200, plus 201 and 202 on create, 201 on replace, 202 on delete, and 401; a patch
 *   answers 200 only;
 * - a parameter every operation of a path takes is the path's (kube-openapi's common
 *   parameters): `pretty`, `name`, `namespace`, and all of the all-namespaces list's.
 */
export function customResourcePaths(def: ResourceDefinition, names: OpenApiNames, routes: CustomRoutes): PathSpec[] {
  const prefix = names.operationPrefix(def.group, def.version);
  const tag = names.tag(def.group, def.version);
  const kind = def.kind;
  const gvk: GroupVersionKind = { group: def.group, kind, version: def.version };
  const obj: Payload = { definition: routes.kind };
  const list: Payload = { definition: routes.list };
  const status: Payload = { type: 'meta.v1.Status' };
  const scale: Payload = { type: 'autoscaling.v1.Scale' };
  const deleteOptions: Payload = { type: 'meta.v1.DeleteOptions' };
  const patch: Payload = { definition: names.patch };
  const ns = def.namespaced ? 'Namespaced' : '';
  const root = names.root(def.group, def.version);
  const base = def.namespaced ? `${root}/namespaces/{namespace}/${def.resource}` : `${root}/${def.resource}`;
  const unauthorized = { code: '401', description: 'Unauthorized' };
  // apiserver's GetArticleForNoun: none for a plural-looking kind, "an" before a vowel.
  const article = kind.endsWith('s') && !kind.endsWith('ss') ? ' ' : /^[aeiouAEIOU]/.test(kind) ? ' an ' : ' a ';

  type Verb = 'list' | 'create' | 'deletecollection' | 'read' | 'replace' | 'delete' | 'patch';
  const route = (verb: Verb, sub: string, payload: Payload, operationId?: string): { op: OperationSpec; params: ParamSpec[] } => {
    const of = sub ? ` ${sub} of` : '';
    const description =
      verb === 'list'
        ? `list objects of kind ${kind}`
        : verb === 'read' || verb === 'replace'
          ? `${verb}${of} the specified ${kind}`
          : verb === 'patch'
            ? `partially update${of} the specified ${kind}`
            : verb === 'deletecollection'
              ? `delete collection of${sub ? `${of} a` : ''} ${kind}`
              : `${verb}${of}${article}${kind}`;
    const Sub = sub ? sub[0]!.toUpperCase() + sub.slice(1) : '';
    const id = operationId ?? (verb === 'deletecollection' ? `delete${prefix}Collection${ns}${kind}${Sub}` : `${verb}${prefix}${ns}${kind}${Sub}`);
    const action = { list: 'list', create: 'post', deletecollection: 'deletecollection', read: 'get', replace: 'put', delete: 'delete', patch: 'patch' }[verb];
    const query = { list: LIST, deletecollection: LIST, read: [P.resourceVersion], create: WRITE, replace: WRITE, patch: [...WRITE, P.force], delete: DELETE }[
      verb
    ];
    const responses: OperationSpec['responses'] = [{ code: '200', description: OK, payload }];
    if (verb === 'create') responses.push({ code: '201', description: 'Created', payload }, { code: '202', description: 'Accepted', payload });
    if (verb === 'replace') responses.push({ code: '201', description: 'Created', payload });
    if (verb === 'delete') responses.push({ code: '202', description: 'Accepted', payload });
    responses.push(unauthorized);
    const body: OperationSpec['body'] =
      verb === 'create' || verb === 'replace'
        ? { payload, kind: 'object', required: true }
        : verb === 'patch'
          ? { payload: patch, kind: 'patch', required: true }
          : verb === 'delete'
            ? { payload: deleteOptions, kind: 'delete', required: false }
            : undefined;
    const op: OperationSpec = {
      method: ({ list: 'get', read: 'get', create: 'post', replace: 'put', patch: 'patch', delete: 'delete', deletecollection: 'delete' } as const)[verb],
      operationId: id,
      description,
      tag,
      action,
      gvk,
      params: [],
      streams: false,
      responses,
      consumes: verb === 'patch' ? CUSTOM_PATCH_TYPES : CUSTOM_MEDIA_TYPES,
      produces: CUSTOM_MEDIA_TYPES,
      bodyFirst: true,
      ...(body ? { body } : {}),
    };
    return { op, params: [...query] };
  };

  /** A path's operations, the parameters all of them take lifted to the path (with the path's own). */
  const path = (p: string, routesOf: { op: OperationSpec; params: ParamSpec[] }[]): PathSpec => {
    const pathParams = [...(p.includes('{name}') ? [P.name] : []), ...(p.includes('{namespace}') ? [P.namespace] : []), P.pretty];
    const key = (x: ParamSpec) => `${x.in}:${x.name}`;
    const common = routesOf[0]!.params.filter((x) => routesOf.every((r) => r.params.some((y) => key(y) === key(x))));
    const lifted = new Set(common.map(key));
    for (const r of routesOf) r.op.params = r.params.filter((x) => !lifted.has(key(x))).sort(byName);
    return { path: p, params: [...pathParams, ...common].sort(byName), operations: routesOf.map((r) => r.op) };
  };

  const paths: PathSpec[] = [];
  if (def.namespaced) {
    paths.push(path(`${root}/${def.resource}`, [route('list', '', list, `list${prefix}${kind}ForAllNamespaces`)]));
  }
  paths.push(path(base, [route('list', '', list), route('create', '', obj), route('deletecollection', '', status)]));
  paths.push(path(`${base}/{name}`, [route('read', '', obj), route('replace', '', obj), route('delete', '', status), route('patch', '', obj)]));
  if (routes.scale) {
    paths.push(path(`${base}/{name}/scale`, [route('read', 'scale', scale), route('replace', 'scale', scale), route('patch', 'scale', scale)]));
  }
  if (routes.status) {
    paths.push(path(`${base}/{name}/status`, [route('read', 'status', obj), route('replace', 'status', obj), route('patch', 'status', obj)]));
  }
  return paths;
}
