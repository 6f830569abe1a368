/**
 * Step 1: request info. Derives verb, group, version, namespace, resource, name and
 * subresource from the path exactly as upstream's RequestInfoFactory does, so that
 * authorization sees the same attributes as upstream's (the verb table in docs/API.md, "Endpoints").
 */
import { type GatewayRequest, type RequestInfo, type ResourceRequestInfo, type Step, rejectingThrows } from '../types';

const API_PREFIXES = new Set(['api', 'apis']);
const GROUPLESS_API_PREFIXES = new Set(['api']);
/** Verbs that may appear as the first path segment after the version. */
const SPECIAL_VERBS = new Set(['proxy', 'watch']);
/** Special verbs whose third part is not a subresource. */
const SPECIAL_VERBS_NO_SUBRESOURCES = new Set(['proxy']);
/** Subresources of a namespace itself: `/api/v1/namespaces/{name}/status`. */
const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

const METHOD_VERBS: Record<string, string> = {
  POST: 'create',
  GET: 'get',
  HEAD: 'get',
  PUT: 'update',
  PATCH: 'patch',
  DELETE: 'delete',
};

function splitPath(path: string): string[] {
  // Leading and trailing slashes trimmed by index: a regex replace with both anchors tried a
  // match at every position of every request's path.
  let start = 0;
  let end = path.length;
  while (start < end && path.charCodeAt(start) === 0x2f) start++;
  while (end > start && path.charCodeAt(end - 1) === 0x2f) end--;
  return start === end ? [] : path.slice(start, end).split('/');
}

/** Upstream's boolean query decoding: absent, "0" and "false" (any case) are false; anything else is true. */
export function queryBool(values: readonly string[]): boolean {
  if (values.length === 0) return false;
  const v = values[0];
  return !(v === '0' || v.toLowerCase() === 'false');
}

/** A name usable as a path segment (apimachinery's IsValidPathSegmentName). */
function isValidPathSegmentName(name: string): boolean {
  return name !== '.' && name !== '..' && !name.includes('/') && !name.includes('%');
}

/**
 * A `metadata.name=<x>` (or `==`) term of a field selector that must match exactly, when the
 * selector holds one; upstream lists with such a selector are authorized as a named request.
 */
function exactNameFromFieldSelector(selector: string | null): string | undefined {
  if (!selector) return undefined;
  for (const term of selector.split(',')) {
    const m = /^\s*metadata\.name\s*(==|=)\s*(.*?)\s*$/.exec(term);
    if (m) return m[2];
  }
  return undefined;
}

export function parseRequestInfo(request: Pick<GatewayRequest, 'method' | 'path' | 'query'>): RequestInfo {
  const { method, path, query } = request;
  const nonResource = (): RequestInfo => ({ isResourceRequest: false, path, verb: method.toLowerCase() });
  // The segments are read from `at` on, and the parts from the resource on copied once at the end.
  const all = splitPath(path);
  let at = 0;
  if (all.length < 3 || !API_PREFIXES.has(all[0])) return nonResource();

  const apiPrefix = all[at++];
  let apiGroup = '';
  if (!GROUPLESS_API_PREFIXES.has(apiPrefix)) {
    if (all.length - at < 3) return nonResource();
    apiGroup = all[at++];
  }
  const apiVersion = all[at++];

  let verb: string;
  let watchPrefix = false;
  if (SPECIAL_VERBS.has(all[at])) {
    if (all.length - at < 2) {
      // Upstream fails the request info here; the request then gets no further than a 404.
      return nonResource();
    }
    verb = all[at++];
    watchPrefix = verb === 'watch';
  } else {
    verb = METHOD_VERBS[method] ?? '';
  }

  let namespace = '';
  let namespaceScopedPath = false;
  if (all[at] === 'namespaces') {
    if (all.length - at > 1) {
      namespace = all[at + 1];
      if (all.length - at > 2 && !NAMESPACE_SUBRESOURCES.has(all[at + 2])) {
        at += 2;
        namespaceScopedPath = true;
      }
    }
  }
  const parts = all.slice(at);

  const info: ResourceRequestInfo = {
    isResourceRequest: true,
    path,
    verb,
    apiPrefix,
    apiGroup,
    apiVersion,
    namespace,
    resource: parts[0] ?? '',
    subresource: parts.length >= 3 && !SPECIAL_VERBS_NO_SUBRESOURCES.has(verb) ? parts[2] : '',
    name: parts.length >= 2 ? parts[1] : '',
    parts,
    namespaceScopedPath,
    watchPrefix,
  };

  if (info.name === '' && info.verb === 'get') {
    info.verb = queryBool(query.getAll('watch')) ? 'watch' : 'list';
    const name = exactNameFromFieldSelector(query.get('fieldSelector'));
    if (name !== undefined && isValidPathSegmentName(name)) info.name = name;
  }
  if (info.name === '' && info.verb === 'delete') info.verb = 'deletecollection';
  return info;
}

export const requestInfoStep: Step = (next) =>
  rejectingThrows((exchange) => {
    const info = parseRequestInfo(exchange.request);
    exchange.info = info;
    // Lists stream in write turns; anything else is a short request they should make way for.
    if (!(info.isResourceRequest && (info.verb === 'list' || info.verb === 'watch'))) exchange.writeTurns?.shortRequestArrived();
    return next(exchange);
  });
